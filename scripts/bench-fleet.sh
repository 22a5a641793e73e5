#!/usr/bin/env bash
# What `helm cozy review` costs on a fleet repository where one overlay of one cluster changed (issue 54),
# side by side with flate (home-operations/flate, v0.6.5, the tool Flux users run for this in CI today):
# a generated repository of C clusters (default 3) × N HelmReleases (default 50) in the shape Flux
# recommends (clusters/<name>/ with flux-system, an infrastructure and an apps Kustomization; apps/<name>/
# an overlay over apps/base/app-NN with a values patch per release; one chart from a Helm repository served
# over HTTP on 127.0.0.1 for the run), one release's values patch edited in the work tree of one cluster.
# `helm-cozy review git:HEAD --offline` is timed pair by pair against `flate diff` of the same change (both
# without a cluster, each fetching the chart over HTTP the first time, cached after), and the medians, the
# median of the pair ratios and what each one rendered are printed. Prints numbers, asserts nothing.
#
#   scripts/bench-fleet.sh [CLUSTERS] [RELEASES]
#       env: BENCH_RUNS=10; BENCH_KEEP=DIR keeps the repository in DIR; BENCH_HELM_COZY=PATH measures that
#       binary (default: target/shipped/helm-cozy, as scripts/build.sh ships it), with the Helm 4,
#       kubectl and kustomize of scripts/tools.sh (BENCH_KUSTOMIZE=kubectl: kubectl's embedded kustomize
#       only, as on a machine without the kustomize binary); flate is built once from its Go module
#       (GOTOOLCHAIN=go1.27.3, the approved Go it needs) into the tools' cache.
#
# Both tools keep what they built on disk (flate: helm and kustomize output; helm cozy: kustomize
# output), so two pairings are printed: as a developer's machine runs them (caches warm from the run
# before), and as a CI runner without a restored cache does (helm cozy's kept builds removed before each
# run; flate with --helm-render-cache-mb 0 --kustomize-render-cache-mb 0), both with their chart caches
# warm. Both caches live in the benchmark's own directory.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
clusters=${1:-3}
releases=${2:-50}
runs=${BENCH_RUNS:-10}
bin=${BENCH_HELM_COZY:-$repo/target/shipped/helm-cozy}
[ -x "$bin" ] || { echo "bench-fleet.sh: $bin is missing: run scripts/build.sh" >&2; exit 1; }
eval "$("$repo/scripts/tools.sh" env)"

# flate, built once from its Go module (AGPL: run, never copied), cached by version beside the tools.
FLATE_VERSION=v0.6.5
cache=${COZYHR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cozyhr-e2e}
flate=$cache/bin/flate-$FLATE_VERSION
if [ ! -x "$flate" ]; then
  echo "[bench] building flate $FLATE_VERSION (go1.27.3 from the module proxy; a few minutes the first time)" >&2
  mkdir -p "$cache/bin"
  GOTOOLCHAIN=go1.27.3 GOFLAGS=-modcacherw GOMODCACHE=$cache/gomod GOCACHE=$cache/gobuild GOWORK=off CGO_ENABLED=0 \
    GOBIN=$cache/bin/flate-$FLATE_VERSION.tmp go install -trimpath -ldflags "-s -w" \
    "github.com/home-operations/flate/cmd/flate@$FLATE_VERSION"
  mv "$cache/bin/flate-$FLATE_VERSION.tmp/flate" "$flate" && rmdir "$cache/bin/flate-$FLATE_VERSION.tmp"
fi

if [ -n "${BENCH_KEEP:-}" ]; then
  work=$BENCH_KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d)
fi
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
fixture=$work/fleet
charts=$work/charts
rm -rf "$fixture" "$charts"
mkdir -p "$charts"

# The chart, in a Helm repository over HTTP.
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
mkdir -p "$work/chart/templates"
printf 'apiVersion: v2\nname: app\nversion: 1.0.0\nappVersion: "1.0"\n' >"$work/chart/Chart.yaml"
printf 'replicas: 1\nimage: example.com/app:1.0\nport: 8080\nmessage: hello\n' >"$work/chart/values.yaml"
cat >"$work/chart/templates/all.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: app
        image: {{ .Values.image }}
        ports:
        - containerPort: {{ .Values.port }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports:
  - port: {{ .Values.port }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
EOF
"$HELM4" package "$work/chart" -d "$charts" >/dev/null
"$HELM4" repo index "$charts" --url "http://127.0.0.1:$port"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$charts" >/dev/null 2>&1 &
server=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/index.yaml" >/dev/null && break; sleep 0.1; done

python3 - "$fixture" "$clusters" "$releases" "http://127.0.0.1:$port" <<'PY'
import os, sys
root, clusters, releases, url = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
names = ["staging", "production", "edge", "lab", "eu", "us", "asia", "dr"][:clusters] or ["staging"]
while len(names) < clusters:
    names.append(f"cluster-{len(names)}")
def write(rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
def kustomization(name, path, extra=""):
    return (f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\n"
            f"spec:\n  interval: 10m\n  path: {path}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n{extra}")
write("infrastructure/sources.yaml",
      f"apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: {url}\n")
for i in range(1, releases + 1):
    app = f"app-{i:02}"
    write(f"apps/base/{app}/release.yaml",
          f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {app}\n  namespace: apps\nspec:\n  interval: 10m\n"
          f"  chart:\n    spec:\n      chart: app\n      version: 1.0.0\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n        namespace: flux-system\n"
          f"  values:\n    message: hello from {app}\n")
    write(f"apps/base/{app}/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- release.yaml\n")
for c in names:
    write(f"clusters/{c}/flux-system/gotk-sync.yaml",
          "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\n"
          "spec:\n  interval: 1m\n  ref:\n    branch: main\n  url: https://git.example.com/fleet.git\n---\n" + kustomization("flux-system", f"./clusters/{c}"))
    write(f"clusters/{c}/flux-system/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- gotk-sync.yaml\n")
    write(f"clusters/{c}/infrastructure.yaml", kustomization("infrastructure", "./infrastructure"))
    write(f"clusters/{c}/apps.yaml", kustomization("apps", f"./apps/{c}", "  dependsOn:\n  - name: infrastructure\n"))
    resources = "".join(f"- ../base/app-{i:02}\n" for i in range(1, releases + 1))
    patches = "".join(f"- path: app-{i:02}.yaml\n" for i in range(1, releases + 1))
    write(f"apps/{c}/kustomization.yaml", f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{resources}patches:\n{patches}")
    for i in range(1, releases + 1):
        write(f"apps/{c}/app-{i:02}.yaml",
              f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app-{i:02}\n  namespace: apps\nspec:\n  values:\n    replicas: {1 + i % 3}\n    image: example.com/app:1.0-{c}\n")
PY
git_() { git -C "$fixture" -c user.name=bench -c user.email=bench@cozyhr.invalid "$@"; }
git_ init -q -b main
git_ add -A
git_ commit -q -m fleet
sleep 1 && git_ update-index -q --really-refresh
changed=apps/staging/app-$(printf '%02d' $((releases / 2))).yaml
sed -i 's/image: example.com\/app:1.0-staging/image: example.com\/app:1.1-staging/' "$fixture/$changed"
# flate's baseline: the commit, checked out beside the work tree.
git_ worktree add -q "$work/baseline" HEAD

export HELM_BIN=$HELM4 COZYHR_KUBECTL=$KUBECTL KUBECONFIG=/dev/null NO_COLOR=1 XDG_CACHE_HOME=$work/xdg
if [ "${BENCH_KUSTOMIZE:-}" = kubectl ]; then
  unset COZYHR_KUSTOMIZE
  ! command -v kustomize >/dev/null || { echo "bench-fleet.sh: BENCH_KUSTOMIZE=kubectl needs a PATH without kustomize" >&2; exit 1; }
  builder="kubectl's kustomize"
else
  export COZYHR_KUSTOMIZE=$KUSTOMIZE
  builder="kustomize $(basename "$KUSTOMIZE")"
fi
ours=("$bin" -C "$fixture" review git:HEAD --offline -o summary)
ours_fresh=(sh -c 'rm -rf "$1" && shift && exec "$@"' sh "$work/xdg/cozyhr/kustomize" "${ours[@]}")
theirs=("$flate" diff all --no-progress --cache-dir "$work/flate-cache" --path "$fixture" --path-orig "$work/baseline")
fresh=("${theirs[@]}" --helm-render-cache-mb 0 --kustomize-render-cache-mb 0)
"${ours[@]}" >"$work/ours.out" 2>&1 || { cat "$work/ours.out" >&2; exit 1; }
(cd "$fixture" && "${theirs[@]}") >"$work/theirs.out" 2>&1 || { [ $? -le 1 ] || { cat "$work/theirs.out" >&2; exit 1; }; }
echo "== $clusters clusters × $releases HelmReleases, one values patch changed ($changed): helm cozy review (builds by $builder) vs flate $FLATE_VERSION diff ($runs pairs)"
echo "-- helm cozy review says:"
grep -m1 '→' "$work/ours.out" || true
grep -A5 '^What to see first' "$work/ours.out" || true
echo "-- flate diff printed $(wc -l <"$work/theirs.out") lines; its first:"
head -20 "$work/theirs.out"

printf '%q ' "${ours[@]}" >"$work/a.cmd"
printf '%q ' "${theirs[@]}" >"$work/b.cmd"
printf '%q ' "${ours_fresh[@]}" >"$work/c.cmd"
printf '%q ' "${fresh[@]}" >"$work/d.cmd"
python3 - "$runs" "$fixture" "$work"/{a,b,c,d}.cmd <<'PY'
import shlex, statistics, subprocess, sys, time
runs, cwd = int(sys.argv[1]), sys.argv[2]
a, b, c, d = (shlex.split(open(p).read()) for p in sys.argv[3:7])
def once(cmd):
    t = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    return time.monotonic() - t
def line(label, xs):
    return f"{label:<40} median {statistics.median(xs):.3f} s  (min {min(xs):.3f}, max {max(xs):.3f})"
for cmd in (a, b, c, d):
    once(cmd)  # warm the file cache and the tools' chart caches
for title, (ours, theirs) in (("caches warm", (a, b)), ("no render or build cache", (c, d))):
    pairs = [(once(ours), once(theirs)) for _ in range(runs)]
    ratios = [x / y for x, y in pairs]
    print(f"-- {title}")
    print(line("helm cozy review (A)", [p[0] for p in pairs]))
    print(line("flate diff all (B)", [p[1] for p in pairs]))
    print(f"{'A/B pair by pair':<40} median {statistics.median(ratios):.2f}x (min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
PY
