#!/usr/bin/env bash
# Publish a chart directory the way a Flux source would, without source-controller: package it with the
# real helm, serve the .tgz from the local artifact server, and create or update an ExternalArtifact whose
# status.artifact (url, sha256 digest, revision) points at it. A HelmRelease with
# `chartRef: {kind: ExternalArtifact, name: NAME}` is then installed by the real helm-controller.
#
# With --digest-revision the revision is `latest@sha256:<digest>`, as source-watcher's ArtifactGenerator
# writes it (source-watcher itself is not served by the Go module proxy, so it cannot be built here);
# helm-controller then gives the chart the version `<version>+<12 hex of the digest>`.
#
#   scripts/publish-chart.sh [--digest-revision] CHART_DIR NAME [NAMESPACE]   (needs: eval "$(scripts/cluster.sh env)")
set -euo pipefail

digest_revision=0
if [ "${1:-}" = "--digest-revision" ]; then digest_revision=1; shift; fi
[ $# -ge 2 ] || { echo "usage: scripts/publish-chart.sh [--digest-revision] CHART_DIR NAME [NAMESPACE]" >&2; exit 1; }
chart=$1 name=$2 ns=${3:-flux-system}
for v in KUBECTL HELM4 COZYHR_ARTIFACT_DIR COZYHR_ARTIFACT_URL KUBECONFIG; do
  [ -n "${!v:-}" ] || { echo "publish-chart.sh: \$$v is not set: run eval \"\$(scripts/cluster.sh env)\" first" >&2; exit 1; }
done
[ -f "$chart/Chart.yaml" ] || { echo "publish-chart.sh: $chart is not a chart directory (no Chart.yaml)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$HELM4" package "$chart" -d "$work" >/dev/null
tgz=$(ls "$work"/*.tgz)
base=$(basename "$tgz" .tgz)
version=${base##*-}
sum=$(sha256sum "$tgz" | cut -d' ' -f1)
# The digest in the file name keeps every published revision at its own URL.
file="$ns-$name-$base-${sum:0:12}.tgz"
mkdir -p "$COZYHR_ARTIFACT_DIR"
mv "$tgz" "$COZYHR_ARTIFACT_DIR/$file"

"$KUBECTL" get namespace "$ns" >/dev/null 2>&1 || "$KUBECTL" create namespace "$ns" >/dev/null
"$KUBECTL" apply -f - >/dev/null <<EA
apiVersion: source.toolkit.fluxcd.io/v1
kind: ExternalArtifact
metadata:
  name: $name
  namespace: $ns
spec: {}
EA
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
revision=$version
[ "$digest_revision" = 1 ] && revision="latest@sha256:$sum"
"$KUBECTL" -n "$ns" patch externalartifact "$name" --subresource=status --type=merge -p "{\"status\":{\"artifact\":{
  \"url\":\"$COZYHR_ARTIFACT_URL/$file\",\"digest\":\"sha256:$sum\",\"revision\":\"$revision\",
  \"path\":\"$file\",\"lastUpdateTime\":\"$now\"}}}" >/dev/null
echo "published $chart as ExternalArtifact $ns/$name (revision $revision, sha256:$sum)"
