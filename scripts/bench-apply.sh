#!/usr/bin/env bash
# What `helm cozy apply`'s check before anything changes costs (issue 25): the chart rendered as `show`
# renders it, with the values and capabilities the apply uses, Flux's post-render chain run on it, and the
# local chart compared with the source's. A generated chart of N ConfigMaps (default 1000) is installed by
# helm-controller; then `helm-cozy apply NAME` (an upgrade that changes nothing: the whole apply, check,
# helm upgrade and status) is timed pair by pair against `helm-cozy show NAME` (the render the check is),
# with farm-bench. Prints numbers, asserts nothing.
#
#   scripts/bench-apply.sh [N]     (env: BENCH_RUNS=5; needs the local control plane: scripts/cluster.sh up,
#                                   and farm-bench; measures helm-cozy as scripts/build.sh ships it)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-1000}
runs=${BENCH_RUNS:-5}
eval "$("$repo/scripts/cluster.sh" env)"
command -v farm-bench >/dev/null || { echo "bench-apply.sh: farm-bench is not on PATH" >&2; exit 1; }
bin=$repo/target/shipped/helm-cozy
[ -x "$bin" ] || { echo "bench-apply.sh: $bin is missing: run scripts/build.sh" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chart=$work/bench
mkdir -p "$chart/templates"
printf 'apiVersion: v2\nname: bench\nversion: 0.1.0\n' >"$chart/Chart.yaml"
printf 'count: %s\n' "$n" >"$chart/values.yaml"
cat >"$chart/templates/cms.yaml" <<'T'
{{- range $i := until (int .Values.count) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-{{ $i }}
data:
  index: {{ $i | quote }}
{{- end }}
T
ns=bench-apply-$$
"$KUBECTL" create namespace "$ns" >/dev/null
"$repo/scripts/publish-chart.sh" "$chart" bench "$ns" >/dev/null
"$KUBECTL" apply -f - >/dev/null <<HR
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: bench, namespace: $ns}
spec:
  interval: 1h
  chartRef: {kind: ExternalArtifact, name: bench}
  install: {disableWait: true}
  upgrade: {disableWait: true}
HR
"$KUBECTL" -n "$ns" wait helmrelease/bench --for=condition=Ready --timeout=300s >/dev/null

export HELM_BIN=$HELM4 COZYHR_KUBECTL=$KUBECTL
echo "helm-cozy apply (the whole apply of $n unchanged objects) vs helm-cozy show (the render its check is), Helm 4:"
farm-bench -n "$runs" --timeout 900 --vs "$bin show bench -n $ns -C $chart" -- "$bin" apply bench -n "$ns" -C "$chart"
