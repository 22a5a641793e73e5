#!/bin/sh
# cozyhr: helm-cozy with the Go cozyhr's command line (docs/cozystack.md), for a release archive, whose
# installers (Helm's among them) take regular files only: the same program, started under that face. A
# link named cozyhr to helm-cozy does the same without this file.
#
# It runs the helm-cozy it finds beside it (wherever it is linked from), in the layouts scripts/release.sh
# writes: helm-cozy beside it (the plugin as `helm plugin install FILE` installs it, cargo binstall, the
# Homebrew formula), helm-cozy/helm-cozy (the root of a platform archive, as Helm installs it from a URL),
# or OS-ARCH/helm-cozy (the every-platform archive, as Helm installs it from an OCI registry).
here=$(dirname "$(readlink -f "$0" 2>/dev/null || printf '%s' "$0")")
os=$(uname -s | tr '[:upper:]' '[:lower:]')
case $(uname -m) in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
for bin in "$here/helm-cozy" "$here/helm-cozy/helm-cozy" "$here/$os-$arch/helm-cozy"; do
  [ -f "$bin" ] && COZYHR_FACE=cozyhr exec "$bin" "$@"
done
echo "cozyhr: no helm-cozy for $os/$arch beside $here" >&2
exit 1
