#!/usr/bin/env bash
# Benchmark of `helm cozy diff --watch` and `helm cozy apply --watch` (issue 13): the time from a file save
# to a printed diff, and from a file save to the applied object in the cluster, on a small chart (one
# ConfigMap) installed by helm-controller. Prints numbers, asserts nothing. Aim (issue 13): a save to a
# printed diff in well under a second.
#
#   scripts/bench-watch.sh             (env: BENCH_RUNS=5 saves per loop; BENCH_HELM=4 or 3, the Helm that
#                                       renders; needs the local control plane: scripts/cluster.sh up;
#                                       measures helm-cozy as scripts/build.sh ships it; BENCH_KEEP=1 keeps the
#                                       work directory with the chart and the loops' output)
#
# What is measured (helm-cozy run directly with HELM_BIN set, as Helm runs it; the loop is already running,
# so neither Helm's plugin dispatch nor the start is counted):
#   save → diff printed    `helm-cozy diff NAME --watch`: from the rename that saves values.yaml (as editors
#                          save) to the round's line on stderr, which the loop writes after the diff is
#                          printed; includes the debounce (150 ms of quiet after the last event)
#   save → applied         `helm-cozy apply NAME --watch`: from the save to the moment a watch on the
#                          ConfigMap (`kubectl get -w`, timestamped as each line arrives) sees the new
#                          value; the round goes on after that (the HelmRelease status, Events)
#   round (as printed)     the round's own time, from its line: render, diff, and for apply the install and
#                          the status write; without the debounce
# The HelmRelease is left suspended by the apply loop (as `apply --watch` leaves it) in its own namespace.
set -euo pipefail

runs=${BENCH_RUNS:-5}
helm_major=${BENCH_HELM:-4}
case $runs in '' | *[!0-9]* | 0) echo "bench-watch.sh: BENCH_RUNS must be a positive number, not '$runs'" >&2; exit 1 ;; esac
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "${KUBECONFIG:-}" ] || [ -z "${HELM3:-}" ] || [ -z "${HELM4:-}" ]; then
  eval "$("$repo/scripts/cluster.sh" env)"
fi
for v in KUBECONFIG KUBECTL HELM3 HELM4 COZYHR_ARTIFACT_DIR COZYHR_ARTIFACT_URL; do
  [ -n "${!v:-}" ] || { echo "bench-watch.sh: \$$v is not set: run scripts/cluster.sh up first" >&2; exit 1; }
done
case $helm_major in
  3) helm=$HELM3 ;;
  4) helm=$HELM4 ;;
  *) echo "bench-watch.sh: BENCH_HELM must be 3 or 4, not '$helm_major'" >&2; exit 1 ;;
esac
"$KUBECTL" get --raw /readyz >/dev/null 2>&1 || {
  echo "bench-watch.sh: the local cluster does not answer: run scripts/cluster.sh up" >&2
  exit 1
}
# The binary as it ships, built from the tree as it is (scripts/build.sh is quick when nothing changed).
bin=$("$repo/scripts/build.sh")/helm-cozy

work=$(mktemp -d "${TMPDIR:-/tmp}/cozyhr-bench-watch-XXXXXX")
pids=()
# On exit, failure included: the loops and the ConfigMap watch are stopped (by their own pids), the work
# directory goes unless kept.
cleanup() {
  for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "${BENCH_KEEP:-}" ]; then echo "kept: $work (HelmRelease ${ns:-}/a)" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# kubectl on PATH for helm-cozy (Flux's post-render chain runs its kustomize).
mkdir -p "$work/bin"
ln -s "$KUBECTL" "$work/bin/kubectl"
export PATH=$work/bin:$PATH HELM_BIN=$helm NO_COLOR=1

# The chart: one ConfigMap whose value comes from values.yaml.
chart=$work/chart
mkdir -p "$chart/templates"
printf 'apiVersion: v2\nname: bench-watch\nversion: 0.1.0\ntype: application\n' >"$chart/Chart.yaml"
printf 'count: "0"\n' >"$chart/values.yaml"
cat >"$chart/templates/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
data:
  count: {{ .Values.count | quote }}
EOF
ns=cozyhr-bench-watch-$$
"$KUBECTL" create namespace "$ns" >/dev/null
"$repo/scripts/publish-chart.sh" "$chart" a "$ns" >/dev/null 2>&1 || {
  echo "bench-watch.sh: publishing the chart failed: $repo/scripts/publish-chart.sh $chart a $ns" >&2
  exit 1
}
"$KUBECTL" apply -f - >/dev/null <<EOF
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: a
  namespace: $ns
spec:
  interval: 1h
  chartRef:
    kind: ExternalArtifact
    name: a
  install:
    disableWait: true
  upgrade:
    disableWait: true
EOF
"$KUBECTL" -n "$ns" wait helmrelease/a --for=condition=Ready --timeout=120s >/dev/null

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Saves values.yaml with count: VALUE as editors do (write beside, rename over).
save() {
  printf 'count: "%s"\n' "$1" >"$chart/.values.yaml.swp"
  mv "$chart/.values.yaml.swp" "$chart/values.yaml"
}

# Waits (at most 30 s) until FILE has more than N lines matching PATTERN.
wait_lines() {
  local file=$1 pattern=$2 n=$3 i=0
  while [ "$(grep -c -- "$pattern" "$file" 2>/dev/null || true)" -le "$n" ]; do
    i=$((i + 1))
    [ $i -lt 3000 ] || { echo "bench-watch.sh: no round within 30 s; $file:" >&2; cat "$file" >&2; exit 1; }
    sleep 0.01
  done
}

# The round's own time, from the last round line: "... in 0.42s; watching ...".
round_time() { grep -- ' round ' "$1" | tail -1 | sed -n 's/.* in \([0-9.]*\)s; watching.*/\1/p'; }

stats() {
  sort -n | awk '{ v[NR] = $1; s += $1 } END { if (NR) printf "mean %d ms, median %d ms, min %d ms, max %d ms (%d saves)\n", s / NR, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}

echo "helm-cozy $("$bin" version --client | cut -d' ' -f2), $("$helm" version --short), a chart with one ConfigMap, $runs saves per loop"

# --- diff --watch: save → diff printed ----------------------------------------------------------
"$bin" diff a --watch -n "$ns" -C "$chart" >"$work/diff.out" 2>"$work/diff.err" &
pids+=($!)
wait_lines "$work/diff.err" ' round ' 0
: >"$work/diff.ms"
: >"$work/diff.round"
for i in $(seq 1 "$runs"); do
  before=$(grep -c -- ' round ' "$work/diff.err" || true)
  sleep 0.5
  t0=$(now_ms)
  save "diff-$i"
  wait_lines "$work/diff.err" ' round ' "$before"
  echo $(($(now_ms) - t0)) >>"$work/diff.ms"
  round_time "$work/diff.err" >>"$work/diff.round"
done
grep -q 'diff-1' "$work/diff.out" || { echo "bench-watch.sh: the diff does not show the save:" >&2; cat "$work/diff.out" >&2; exit 1; }
kill -INT "${pids[0]}"
wait "${pids[0]}" || true
pids=()
printf '  save → diff printed:  '; stats <"$work/diff.ms"
printf '  diff round (printed): '; awk '{ printf "%d\n", $1 * 1000 }' "$work/diff.round" | stats

# --- apply --watch: save → applied object in the cluster -----------------------------------------
# Every value the ConfigMap takes, with the time (ms) the watch saw it.
# ($! is kubectl's pid: the timestamping reader ends when kubectl does.)
"$KUBECTL" -n "$ns" get configmap a-cm -w -o 'jsonpath={.data.count}{"\n"}' \
  > >(while IFS= read -r v; do echo "$(now_ms) $v"; done >"$work/cm.seen") &
pids+=($!)
"$bin" apply a --watch -n "$ns" -C "$chart" >"$work/apply.out" 2>"$work/apply.err" &
pids+=($!)
wait_lines "$work/apply.err" ' round ' 0
: >"$work/apply.ms"
: >"$work/apply.round"
for i in $(seq 1 "$runs"); do
  before=$(grep -c -- ' round ' "$work/apply.err" || true)
  sleep 0.5
  t0=$(now_ms)
  save "apply-$i"
  wait_lines "$work/cm.seen" " apply-$i\$" 0
  seen=$(grep -- " apply-$i\$" "$work/cm.seen" | head -1 | cut -d' ' -f1)
  echo $((seen - t0)) >>"$work/apply.ms"
  wait_lines "$work/apply.err" ' round ' "$before"
  round_time "$work/apply.err" >>"$work/apply.round"
done
printf '  save → applied:       '; stats <"$work/apply.ms"
printf '  apply round (printed): '; awk '{ printf "%d\n", $1 * 1000 }' "$work/apply.round" | stats
