#!/bin/sh
# cozyhr: helm-cozy with the Go cozyhr's command line (docs/cozystack.md), for a release archive, whose
# installers (Helm's among them) take regular files only: the same program, started under that face. A
# link named cozyhr to helm-cozy does the same without this file.
here=$(dirname "$(readlink -f "$0" 2>/dev/null || printf '%s' "$0")")
COZYHR_FACE=cozyhr exec "$here/helm-cozy" "$@"
