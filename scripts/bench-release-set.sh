#!/usr/bin/env bash
# What diffing every release of one chart costs (issue 27): N HelmReleases (default: 1, 10 and 100) of
# one generated chart of 50 ConfigMaps, each with values of its own, suspended and never installed (so
# each diff renders and dry-runs all 50 objects). `helm-cozy diff --all` of the N is timed pair by pair
# against N single `helm-cozy diff NAME` run one after another, with farm-bench, and the time per release
# of each is printed. Prints numbers, asserts nothing.
#
#   scripts/bench-release-set.sh [N ...]   (env: BENCH_RUNS=3; needs the local control plane:
#                                           scripts/cluster.sh up, and farm-bench; measures helm-cozy as
#                                           scripts/build.sh ships it)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${BENCH_RUNS:-3}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 10 100)
eval "$("$repo/scripts/cluster.sh" env)"
command -v farm-bench >/dev/null || { echo "bench-release-set.sh: farm-bench is not on PATH" >&2; exit 1; }
bin=$repo/target/shipped/helm-cozy
[ -x "$bin" ] || { echo "bench-release-set.sh: $bin is missing: run scripts/build.sh" >&2; exit 1; }

work=$(mktemp -d)
namespaces=()
cleanup() {
  for ns in "${namespaces[@]}"; do "$KUBECTL" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
chart=$work/benchset
mkdir -p "$chart/templates"
printf 'apiVersion: v2\nname: benchset\nversion: 0.1.0\n' >"$chart/Chart.yaml"
printf 'count: 50\nowner: nobody\n' >"$chart/values.yaml"
cat >"$chart/templates/cms.yaml" <<'T'
{{- range $i := until (int .Values.count) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-{{ $i }}
  labels: {app: benchset}
data:
  index: {{ $i | quote }}
  owner: {{ $.Values.owner | quote }}
{{- end }}
T

export HELM_BIN=$HELM4 COZYHR_KUBECTL=$KUBECTL
for n in "${sizes[@]}"; do
  ns=bench-set-$n-$$
  namespaces+=("$ns")
  "$KUBECTL" create namespace "$ns" >/dev/null
  {
    for i in $(seq 1 "$n"); do
      cat <<HR
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: r$i, namespace: $ns}
spec:
  suspend: true
  interval: 1h
  chart:
    spec: {chart: benchset, sourceRef: {kind: HelmRepository, name: none}}
  values: {owner: team-$i}
HR
    done
  } | "$KUBECTL" apply -f - >/dev/null
  singles=$work/singles-$n.sh
  {
    echo 'set -e'
    for i in $(seq 1 "$n"); do
      printf '%q diff r%s -n %q -C %q >/dev/null 2>&1\n' "$bin" "$i" "$ns" "$chart"
    done
  } >"$singles"
  echo "== $n release(s) of a 50-object chart: diff --all vs $n single diffs one after another (Helm 4)"
  farm-bench -n "$runs" --timeout 1800 --vs "sh $singles" -- "$bin" diff --all -n "$ns" -C "$chart"
done
