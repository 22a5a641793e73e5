#!/usr/bin/env bash
# Size and start-up benchmark: builds the release binaries and prints
#   - the size of kubectl-cozyhr and helm-cozy next to kubectl's and helm's (Helm 3 and Helm 4),
#   - the start-up time of `version`: each binary run directly, through kubectl's plugin dispatch /
#     Helm's plugin runner, next to `kubectl version --client` and `helm version`.
# It prints numbers and asserts nothing. Targets (issues 6, 11 and 34): helm-cozy at most 6,144 KiB and
# kubectl-cozyhr at most 4,608 KiB stripped, each at least 5x smaller than kubectl, start-up under 10 ms.
#
#   scripts/bench-size.sh            RUNS=N to change the number of timed runs (default 100);
#                                    BIN_DIR=DIR to measure binaries built elsewhere (no build), e.g.
#                                    target/dist/x86_64-unknown-linux-gnu/release after scripts/release.sh
#
# Uses hyperfine when it is installed (Debian/Ubuntu: apt-get install hyperfine), else a shell loop
# timed with date +%s%N (which adds the fork/exec cost of the loop itself, ~1 ms).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
RUNS=${RUNS:-100}

if [ -n "${BIN_DIR:-}" ]; then
  bin=$BIN_DIR
else
  echo "==> scripts/build.sh (kubectl-cozyhr, helm-cozy, as they ship)" >&2
  bin=$(scripts/build.sh)
fi

tools=$(scripts/tools.sh env) || {
  echo "bench-size.sh: kubectl and helm are not built: run scripts/tools.sh build" >&2
  exit 1
}
eval "$tools"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# PATH for kubectl's dispatch: our binaries and kubectl only.
mkdir -p "$work/path"
ln -s "$bin/kubectl-cozyhr" "$work/path/kubectl-cozyhr"
ln -s "$KUBECTL" "$work/path/kubectl"
# An isolated Helm plugin directory holding the cozy plugin (what `helm plugin install` leaves).
mkdir -p "$work/plugins/cozy/bin"
cp plugin.yaml completion.yaml "$work/plugins/cozy/"
ln -s "$bin/helm-cozy" "$work/plugins/cozy/bin/helm-cozy"
export PATH="$work/path:$PATH" HELM_PLUGINS=$work/plugins HELM_CONFIG_HOME=$work/config \
  HELM_CACHE_HOME=$work/cache HELM_DATA_HOME=$work/data KUBECONFIG=$work/no-kubeconfig NO_COLOR=1

# Bytes and KiB too: the aims are 6,144 KiB (6,291,456 bytes) for helm-cozy, 4,608 KiB for kubectl-cozyhr.
mb() { awk -v b="$(stat -L -c %s "$1")" 'BEGIN { printf "%6.2f MiB (%d KiB, %d bytes)", b / 1048576, b / 1024, b }'; }
echo
echo "Binary sizes (release, stripped)"
printf '  %-34s %s\n' "kubectl-cozyhr" "$(mb "$bin/kubectl-cozyhr")"
printf '  %-34s %s\n' "helm-cozy" "$(mb "$bin/helm-cozy")"
printf '  %-34s %s\n' "kubectl $("$KUBECTL" version --client -o json | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p' | head -1)" "$(mb "$KUBECTL")"
printf '  %-34s %s\n' "helm $("$HELM3" version --template '{{.Version}}')" "$(mb "$HELM3")"
printf '  %-34s %s\n' "helm $("$HELM4" version --template '{{.Version}}')" "$(mb "$HELM4")"
awk -v k="$(stat -L -c %s "$KUBECTL")" -v a="$(stat -L -c %s "$bin/kubectl-cozyhr")" -v b="$(stat -L -c %s "$bin/helm-cozy")" \
  'BEGIN { printf "  kubectl is %.1fx kubectl-cozyhr and %.1fx helm-cozy\n", k / a, k / b }'

names=("kubectl-cozyhr version" "kubectl cozyhr version" "kubectl version --client"
  "helm-cozy version" "helm3 cozy version" "helm3 version" "helm4 cozy version" "helm4 version")
cmds=("$bin/kubectl-cozyhr version" "$KUBECTL cozyhr version" "$KUBECTL version --client"
  "$bin/helm-cozy version --client" "$HELM3 cozy version --client" "$HELM3 version" "$HELM4 cozy version --client" "$HELM4 version")
for c in "${cmds[@]}"; do
  $c >/dev/null 2>&1 || { echo "bench-size.sh: '$c' fails:" >&2; $c >&2 || true; exit 1; }
done

echo
echo "Start-up time ($RUNS runs each)"
if command -v hyperfine >/dev/null 2>&1; then
  args=()
  for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
  hyperfine -N --style none --warmup 5 --runs "$RUNS" --export-json "$work/h.json" "${args[@]}" >/dev/null 2>&1
  python3 - "$work/h.json" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("  %-34s %7.2f ms ± %5.2f  (min %6.2f)" % (r["command"], r["mean"] * 1e3, r["stddev"] * 1e3, r["min"] * 1e3))
EOF
  echo "  (hyperfine, no shell)"
else
  for i in "${!cmds[@]}"; do
    c=${cmds[$i]}
    for _ in 1 2 3 4 5; do $c >/dev/null 2>&1; done
    t0=$(date +%s%N)
    for ((n = 0; n < RUNS; n++)); do $c >/dev/null 2>&1; done
    t1=$(date +%s%N)
    awk -v n="${names[$i]}" -v d=$((t1 - t0)) -v r="$RUNS" 'BEGIN { printf "  %-34s %7.2f ms\n", n, d / r / 1e6 }'
  done
  echo "  (shell loop with date +%s%N; install hyperfine for mean ± stddev)"
fi
