#!/usr/bin/env bash
# Benchmark of a chart taken from where Flux gets it (issue 52): `helm-cozy show NAME` run from a directory
# that holds no chart, so the chart is the one the HelmRelease's source serves in the cluster, against the
# same `show` of the same chart from its directory. Prints numbers (farm-bench's), asserts nothing.
#
#   scripts/bench-served.sh [N]     (N objects in the chart, default 200; env BENCH_RUNS=10; needs the local
#                                    control plane: scripts/cluster.sh up; measures helm-cozy as
#                                    scripts/build.sh ships it)
#
# Two pairs, each A against B run in turn (A B A B ...), the ratio taken pair by pair:
#   cached    A: show without a chart directory, the archive in the cache (a second command on the chart)
#             B: show -C CHART (the chart's directory)            aim: within 1.1x
#   fetched   A: show without a chart directory, the cache emptied before each run (the first command: the
#                artifact fetched from the cluster's artifact server, checked, unpacked, then rendered)
#             B: show -C CHART
set -euo pipefail

n=${1:-200}
runs=${BENCH_RUNS:-10}
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${KUBECONFIG:-}" ] || [ -z "${KUBECTL:-}" ]; then
  eval "$("$repo/scripts/cluster.sh" env)"
fi
for v in KUBECONFIG KUBECTL HELM4 COZYHR_ARTIFACT_DIR COZYHR_ARTIFACT_URL; do
  [ -n "${!v:-}" ] || { echo "bench-served.sh: \$$v is not set: run scripts/cluster.sh up first" >&2; exit 1; }
done
command -v farm-bench >/dev/null 2>&1 || { echo "bench-served.sh: farm-bench is not on PATH" >&2; exit 1; }
"$KUBECTL" get --raw /readyz >/dev/null 2>&1 || {
  echo "bench-served.sh: the local cluster does not answer: run scripts/cluster.sh up" >&2
  exit 1
}
bin=$("$repo/scripts/build.sh")/helm-cozy

work=$(mktemp -d "${TMPDIR:-/tmp}/cozyhr-bench-served-XXXXXX")
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/xdg-cache HELM_BIN=$HELM4
ns=bench-served-$$
chart=$work/chart
mkdir -p "$chart/templates" "$work/elsewhere"
printf 'apiVersion: v2\nname: served\nversion: 0.1.0\n' >"$chart/Chart.yaml"
printf 'count: %s\nmessage: hello\n' "$n" >"$chart/values.yaml"
cat >"$chart/templates/cm.yaml" <<'EOF'
{{- range $i := until (int .Values.count) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-{{ $i }}
data:
  message: {{ $.Values.message | quote }}
{{- end }}
EOF
"$KUBECTL" create namespace "$ns" >/dev/null
"$repo/scripts/publish-chart.sh" "$chart" served "$ns"
"$KUBECTL" apply -f - >/dev/null <<EOF
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: served
  namespace: $ns
spec:
  interval: 1h
  chartRef:
    kind: ExternalArtifact
    name: served
  install:
    disableWait: true
EOF
"$KUBECTL" -n "$ns" wait helmrelease/served --for=condition=Ready --timeout=180s >/dev/null

cd "$work/elsewhere"
echo "== cached: show without a chart directory (the archive cached) vs show -C CHART ($n objects)"
"$bin" show served -n "$ns" >/dev/null 2>&1
farm-bench -n "$runs" --timeout 600 --vs "$bin show served -n $ns -C $chart" -- "$bin" show served -n "$ns"
echo "== fetched: show without a chart directory, the cache emptied each run, vs show -C CHART"
farm-bench -n "$runs" --timeout 600 --vs "$bin show served -n $ns -C $chart" -- \
  sh -c "rm -rf '$XDG_CACHE_HOME/cozyhr/charts'; exec '$bin' show served -n '$ns'"
