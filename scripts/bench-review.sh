#!/usr/bin/env bash
# What `helm cozy review` costs when one chart of many changed (issue 38): a generated repository of N
# charts (default 150) shaped like Cozystack's packages (a library linked into a quarter of them, five
# templates each, a HelmRelease file per chart in deploy/), one chart's values.yaml edited in the work
# tree. `helm-cozy review git:HEAD --release-file deploy` is timed pair by pair against `helm-cozy diff
# NAME --against git:HEAD --release-file deploy/NAME.yaml` of the changed chart alone (both without a
# cluster, Helm 4), and the medians and the median of the pair ratios are printed. An untouched chart is
# never rendered, so the ratio stays near 1 whatever N is. Prints numbers, asserts nothing.
#
#   scripts/bench-review.sh [N]    (env: BENCH_RUNS=10; BENCH_KEEP=DIR keeps the repository in DIR;
#                                   measures helm-cozy as scripts/build.sh ships it, with the Helm 4
#                                   and kubectl of scripts/tools.sh)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-150}
runs=${BENCH_RUNS:-10}
bin=$repo/target/shipped/helm-cozy
[ -x "$bin" ] || { echo "bench-review.sh: $bin is missing: run scripts/build.sh" >&2; exit 1; }
eval "$("$repo/scripts/tools.sh" env)"

if [ -n "${BENCH_KEEP:-}" ]; then
  work=$BENCH_KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
fixture=$work/repo
rm -rf "$fixture"

python3 - "$fixture" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
def write(rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
write("packages/library/cozy-lib/Chart.yaml", "apiVersion: v2\nname: cozy-lib\nversion: 0.1.0\ntype: library\n")
write("packages/library/cozy-lib/templates/_labels.tpl",
      '{{- define "cozy-lib.labels" -}}\napp.kubernetes.io/managed-by: cozystack\napp.kubernetes.io/instance: {{ .Release.Name }}\n{{- end -}}\n')
for i in range(1, n + 1):
    name = f"app-{i:03}"
    d = f"packages/apps/{name}"
    write(f"{d}/Chart.yaml", f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    write(f"{d}/values.yaml", "replicas: 2\nimage: example.com/app:1.0\nport: 8080\nmessage: |\n  hello\n  world\n")
    write(f"{d}/README.md", f"# {name}\n")
    lib = i % 4 == 0
    labels = '\n    {{- include "cozy-lib.labels" . | nindent 4 }}' if lib else ""
    meta = "metadata:\n  name: {{ .Release.Name }}%s\n  labels:\n    app: {{ .Release.Name }}" + labels + "\n"
    write(f"{d}/templates/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\n" + meta % "" +
          "spec:\n  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels:\n      app: {{ .Release.Name }}\n  template:\n    metadata:\n      labels:\n        app: {{ .Release.Name }}\n    spec:\n      containers:\n      - name: app\n        image: {{ .Values.image }}\n        ports:\n        - containerPort: {{ .Values.port }}\n")
    write(f"{d}/templates/service.yaml", "apiVersion: v1\nkind: Service\n" + meta % "" +
          "spec:\n  selector:\n    app: {{ .Release.Name }}\n  ports:\n  - port: {{ .Values.port }}\n")
    write(f"{d}/templates/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\n" + meta % "-config" +
          "data:\n  message: |\n    {{- .Values.message | nindent 4 }}\n")
    write(f"{d}/templates/serviceaccount.yaml", "apiVersion: v1\nkind: ServiceAccount\n" + meta % "")
    write(f"{d}/templates/secret.yaml", "apiVersion: v1\nkind: Secret\n" + meta % "-auth" + "stringData:\n  token: not-a-real-one\n")
    if lib:
        os.makedirs(os.path.join(root, d, "charts"), exist_ok=True)
        os.symlink("../../../library/cozy-lib", os.path.join(root, d, "charts", "cozy-lib"))
    write(f"deploy/{name}.yaml",
          f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: tenant-{i % 7}\n"
          f"spec:\n  interval: 5m\n  chart:\n    spec:\n      chart: ./packages/apps/{name}\n      sourceRef:\n        kind: GitRepository\n        name: packages\n"
          f"  values:\n    replicas: {i % 5 + 1}\n")
PY
git_() { git -C "$fixture" -c user.name=bench -c user.email=bench@cozyhr.invalid "$@"; }
git_ init -q -b main
git_ add -A
git_ commit -q -m packages
# As a checkout that has lived a while: files written in the second the index was are "racily clean" to
# Git, which then reads every one of them on each `git diff` that may not write the index.
sleep 1 && git_ update-index -q --really-refresh
changed=app-$(printf '%03d' $((n / 2)))
sed -i 's/port: 8080/port: 8081/' "$fixture/packages/apps/$changed/values.yaml"

export HELM_BIN=$HELM4 COZYHR_KUBECTL=$KUBECTL KUBECONFIG=/dev/null NO_COLOR=1
review=("$bin" -C "$fixture" review git:HEAD --release-file "$fixture/deploy" --offline)
single=("$bin" -C "$fixture/packages/apps/$changed" diff "$changed" --against git:HEAD --release-file "$fixture/deploy/$changed.yaml")
"${review[@]}" -o summary >"$work/review.out" 2>&1 || { cat "$work/review.out" >&2; exit 1; }
"${single[@]}" -o summary >"$work/single.out" 2>&1 || { cat "$work/single.out" >&2; exit 1; }
echo "== $n charts, one changed ($changed): review of the repository vs diff --against of that chart alone (Helm 4, $runs pairs)"
grep -m1 '→' "$work/review.out" || true

# Whole processes, A and B in turn, from a monotonic clock; the ratio is taken pair by pair.
printf '%q ' "${review[@]}" >"$work/a.cmd"
printf '%q ' "${single[@]}" >"$work/b.cmd"
python3 - "$runs" "$work/a.cmd" "$work/b.cmd" <<'PY'
import shlex, statistics, subprocess, sys, time
runs = int(sys.argv[1])
a, b = (shlex.split(open(p).read()) for p in sys.argv[2:4])
def once(cmd):
    t = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - t
once(a); once(b)  # warm the file cache
pairs = [(once(a), once(b)) for _ in range(runs)]
ta, tb = [p[0] for p in pairs], [p[1] for p in pairs]
ratios = [x / y for x, y in pairs]
print(f"review (A)           median {statistics.median(ta):.3f} s  (min {min(ta):.3f}, max {max(ta):.3f})")
print(f"diff --against (B)   median {statistics.median(tb):.3f} s  (min {min(tb):.3f}, max {max(tb):.3f})")
print(f"A/B pair by pair     median {statistics.median(ratios):.2f}x (min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
PY
