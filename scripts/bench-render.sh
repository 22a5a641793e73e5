#!/usr/bin/env bash
# Benchmark of `helm cozy show` and `helm cozy diff` (issues 4 and 10) on a generated chart with N objects
# (default 1000: ConfigMaps, Services and Secrets), under Helm 3 and Helm 4, on the cluster as it is and
# again with extra CRDs installed. Prints numbers, asserts nothing. Aims (issue 10), with and without the
# extra CRDs, on the 1000-object chart: `helm-cozy show NAME` run directly within 10% of bare `helm template`
# given the same capabilities (the cluster's version and API versions); `helm-cozy diff NAME` run directly,
# of 1000 unchanged objects, under 0.3 seconds.
#
#   scripts/bench-render.sh [N]        (env: BENCH_RUNS=5, BENCH_WARMUP=1; BENCH_CRDS=300 extra CRDs for the
#                                       second pass, 0 skips it; needs the local control plane:
#                                       scripts/cluster.sh up; measures helm-cozy as scripts/build.sh ships it;
#                                       BENCH_KEEP=1 keeps the chart, plugin dir and HelmRelease for profiling)
#
# What is measured, per Helm version (helm cozy runs as a real Helm plugin: helm → helm-cozy → helm):
#   helm template          bare `helm template` with the values helm cozy composes (`helm cozy values -o json`),
#                          the same release name and namespace; no post-renderer; Helm's built-in capabilities
#   helm template (cluster capabilities)  the same, given the capabilities helm cozy gives it:
#                          --kube-version=<the server's gitVersion> and one --api-versions=X per served
#                          group/version and group/version/Kind (resources and subresources, as Helm's
#                          GetVersionSet), read here with kubectl from the plain discovery documents
#     the same, GOGC=...   that helm template with the GOGC helm cozy gives every helm it runs (GO_GC in
#                          src/render/helm.rs): the helm inside helm cozy, so that ratio is helm cozy's own
#                          work; the other two are what a user sees against running helm themselves
#   helm cozy version      Helm starting a plugin and the plugin starting: the floor under every
#                          `helm cozy` command, paid before any work
#   helm cozy show --plain the chart alone through helm cozy (no HelmRelease; the cluster's capabilities)
#   helm cozy show NAME    HelmRelease NAME read from the cluster, valuesFrom fetched, Flux's post-render chain
#   helm-cozy show NAME (direct, ...)  the same, run directly (not through `helm`): helm cozy's own cost over
#                          rendering; warm discovery: the cluster's API discovery from helm cozy's on-disk
#                          cache (primed, COZYHR_DISCOVERY_TTL=1h); cold: asked of the cluster each run
#                          (COZYHR_DISCOVERY_TTL=0)
#   helm cozy diff NAME    the above, plus server-side dry runs of every object and the diff against live
#   helm-cozy diff NAME (direct, cold discovery)  the same, run directly, discovery asked each run
#   helm cozy diff NAME --against release   against the stored Helm release instead
# Ratios are quoted against the three helm template rows. helm cozy's discovery cache is the run's own
# (XDG_CACHE_HOME in the work directory), so ~/.cache/cozyhr is neither read nor written.
# With extra CRDs (a second block, when BENCH_CRDS > 0): that many CustomResourceDefinitions, each in an API
# group of its own (g$i.bench.cozyhr.example, kind Thing$i, v1, labelled bench.cozyhr.example/extra=true),
# created with one server-side apply and waited for until Established and listed by discovery; then per
# Helm version helm template (cluster capabilities, now with the CRDs' API versions) and the direct show
# (cold and warm discovery) and diff (cold) again; the plain helm template ratio uses the first block's
# number. The CRDs are deleted on exit, failure included.
# Peak memory is /usr/bin/time -v's "Maximum resident set size": the largest single process of the tree
# (helm, helm-cozy, kubectl kustomize), not their sum.
set -euo pipefail

n=${1:-1000}
runs=${BENCH_RUNS:-5}
warmup=${BENCH_WARMUP:-1}
crds=${BENCH_CRDS:-300}
case $crds in
  '' | *[!0-9]*) echo "bench-render.sh: BENCH_CRDS must be a number, not '$crds'" >&2; exit 1 ;;
esac
crd_label=bench.cozyhr.example/extra
crds_made=''
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "${KUBECONFIG:-}" ] || [ -z "${HELM3:-}" ] || [ -z "${HELM4:-}" ]; then
  eval "$("$repo/scripts/cluster.sh" env)"
fi
for v in KUBECONFIG KUBECTL HELM3 HELM4 COZYHR_ARTIFACT_DIR COZYHR_ARTIFACT_URL; do
  [ -n "${!v:-}" ] || { echo "bench-render.sh: \$$v is not set: run scripts/cluster.sh up first" >&2; exit 1; }
done
"$KUBECTL" get --raw /readyz >/dev/null 2>&1 || {
  echo "bench-render.sh: the local cluster does not answer: run scripts/cluster.sh up" >&2
  exit 1
}
# The binary as it ships, built from the tree as it is (scripts/build.sh is quick when nothing changed).
bin=$("$repo/scripts/build.sh")/helm-cozy
if [ ! -x /usr/bin/time ]; then
  echo "bench-render.sh: /usr/bin/time is missing (peak memory): apt-get install -y time" >&2
  exit 1
fi
have_hyperfine=''
command -v hyperfine >/dev/null 2>&1 && have_hyperfine=1

work=$(mktemp -d "${TMPDIR:-/tmp}/cozyhr-bench-XXXXXX")
# On exit, failure included: the extra CRDs go (if any were made), the work directory too unless kept.
cleanup() {
  if [ -n "$crds_made" ]; then
    "$KUBECTL" delete crd -l "$crd_label=true" --wait=false >/dev/null 2>&1 ||
      echo "bench-render.sh: deleting the extra CRDs failed: $KUBECTL delete crd -l $crd_label=true" >&2
  fi
  if [ -n "${BENCH_KEEP:-}" ]; then
    echo "kept: chart $work/bench, plugins $work/plugins, HelmRelease ${ns:-}/${hr:-}" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
# helm cozy's discovery cache for this run alone (helm's own homes are set per Helm version below).
export XDG_CACHE_HOME=$work/xdg-cache
discovery_cache=$XDG_CACHE_HOME/cozyhr/discovery
# Go's collector as it comes for bare helm; helm cozy sets its own (the "as helm cozy runs it" rows).
unset GOGC

# ---------------------------------------------------------------------------------------------------
# The chart: n objects split over ConfigMaps, Services and Secrets, each carrying a little data.
chart=$work/bench
mkdir -p "$chart/templates"
n_cm=$((n * 4 / 10)) n_svc=$((n * 3 / 10))
n_secret=$((n - n_cm - n_svc))
cat >"$chart/Chart.yaml" <<EOF
apiVersion: v2
name: bench
version: 0.1.0
appVersion: "1.0"
type: application
EOF
cat >"$chart/values.yaml" <<EOF
configmaps: $n_cm
services: $n_svc
secrets: $n_secret
message: default
labels:
  app.kubernetes.io/part-of: bench
EOF
cat >"$chart/templates/configmaps.yaml" <<'EOF'
{{- range $i := until (int .Values.configmaps) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-cm-{{ $i }}
  labels:
    {{- toYaml $.Values.labels | nindent 4 }}
data:
  index: {{ $i | quote }}
  message: {{ $.Values.message | quote }}
  config.yaml: |
    server:
      port: {{ add 8000 $i }}
      name: {{ $.Release.Name }}-{{ $i }}
{{- end }}
EOF
cat >"$chart/templates/services.yaml" <<'EOF'
{{- range $i := until (int .Values.services) }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $.Release.Name }}-svc-{{ $i }}
  labels:
    {{- toYaml $.Values.labels | nindent 4 }}
spec:
  clusterIP: None
  selector:
    app: {{ $.Release.Name }}-{{ $i }}
  ports:
    - name: http
      port: 80
      targetPort: {{ add 8000 $i }}
{{- end }}
EOF
cat >"$chart/templates/secrets.yaml" <<'EOF'
{{- range $i := until (int .Values.secrets) }}
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ $.Release.Name }}-secret-{{ $i }}
  labels:
    {{- toYaml $.Values.labels | nindent 4 }}
type: Opaque
data:
  password: {{ printf "password-%d" $i | b64enc | quote }}
{{- end }}
EOF

# ---------------------------------------------------------------------------------------------------
# The HelmRelease, installed by the real helm-controller (valuesFrom, inline values, commonMetadata).
ns=bench-$(date +%s)-$$
hr=bench
"$KUBECTL" create namespace "$ns" >/dev/null
"$repo/scripts/publish-chart.sh" "$chart" "$hr" "$ns" >&2
"$KUBECTL" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: bench-values
  namespace: $ns
data:
  values.yaml: |
    message: from-valuesfrom
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: $hr
  namespace: $ns
spec:
  interval: 1h
  chartRef:
    kind: ExternalArtifact
    name: $hr
  install:
    disableWait: true
  upgrade:
    disableWait: true
  valuesFrom:
    - kind: ConfigMap
      name: bench-values
  values:
    labels:
      app.kubernetes.io/part-of: bench
      tier: benchmark
  commonMetadata:
    labels:
      team: platform
EOF
echo "waiting for helm-controller to install $n objects (HelmRelease $ns/$hr)" >&2
start=$(date +%s)
"$KUBECTL" -n "$ns" wait "helmrelease/$hr" --for=condition=Ready --timeout=600s >/dev/null
echo "helm-controller installed it in $(($(date +%s) - start))s" >&2

# ---------------------------------------------------------------------------------------------------
# helm cozy as a Helm plugin: a plugin directory with the repository's plugin.yaml and the built binary.
plugins=$work/plugins
mkdir -p "$plugins/cozy/bin"
cp "$repo/plugin.yaml" "$plugins/cozy/plugin.yaml"
[ -f "$repo/completion.yaml" ] && cp "$repo/completion.yaml" "$plugins/cozy/"
ln -s "$bin" "$plugins/cozy/bin/helm-cozy"
kubectl_dir=$work/path
mkdir -p "$kubectl_dir"
ln -s "$KUBECTL" "$kubectl_dir/kubectl"
export PATH="$kubectl_dir:$PATH" NO_COLOR=1

# time_cmd LABEL CMD...: mean wall time (hyperfine, else a loop), printed as "LABEL  mean ± sd"; the mean in
# whole milliseconds is left in $work/last_ms (see ratio).
time_cmd() {
  local label=$1
  shift
  rm -f "$work/last_ms"
  if [ -n "$have_hyperfine" ]; then
    local json=$work/hyperfine.json
    hyperfine -N --style none --warmup "$warmup" --runs "$runs" --export-json "$json" -- "$*" >/dev/null 2>&1 || {
      echo "  $label: FAILED: $*" >&2
      "$@" >/dev/null
      return 0
    }
    python3 - "$json" "$label" "$work/last_ms" <<'PY' 2>/dev/null || sed -n 's/.*"mean": *\([0-9.]*\).*/  '"$label"'  \1 s/p' "$json" | head -1
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"  {sys.argv[2]:<44} {r['mean']*1000:8.0f} ms ± {r['stddev']*1000:5.0f} ms  (min {r['min']*1000:.0f}, max {r['max']*1000:.0f}, {len(r['times'])} runs)")
open(sys.argv[3], "w").write(f"{round(r['mean'] * 1000)}\n")
PY
  else
    local i t0 t1 total=0
    for ((i = 0; i < warmup; i++)); do "$@" >/dev/null 2>&1 || true; done
    for ((i = 0; i < runs; i++)); do
      t0=$(date +%s%N)
      "$@" >/dev/null 2>&1 || { echo "  $label: FAILED: $*" >&2; return 0; }
      t1=$(date +%s%N)
      total=$((total + (t1 - t0) / 1000000))
    done
    printf '  %-44s %8d ms  (mean of %d runs, loop)\n' "$label" $((total / runs)) "$runs"
    echo $((total / runs)) >"$work/last_ms"
  fi
}

# ratio BASE_MS CAPS_MS [AS_RUN_MS]: the last measurement against bare helm template (BASE_MS), helm template
# given the cluster's capabilities (CAPS_MS) and, when given, that helm template as helm cozy runs it (with its
# GOGC: what helm cozy's own work adds), e.g. "1.08 x helm template (+40 ms), 1.02 x with capabilities (+9 ms)".
ratio() {
  awk -v t="$(cat "$work/last_ms" 2>/dev/null || echo 0)" -v b="${1:-0}" -v c="${2:-0}" -v r="${3:-0}" 'BEGIN {
    if (t <= 0) exit
    s = ""
    if (b > 0) s = sprintf("%8.2f x helm template (%+d ms)", t / b, t - b)
    if (c > 0) s = s (s == "" ? "" : ", ") sprintf("%.2f x with capabilities (%+d ms)", t / c, t - c)
    if (r > 0) s = s (s == "" ? "" : ", ") sprintf("%.2f x as helm cozy runs it (%+d ms)", t / r, t - r)
    if (s != "") printf "  %-44s %s\n", "", s
  }'
}

# mem_cmd LABEL CMD...: peak RSS of the process tree's largest process.
mem_cmd() {
  local label=$1
  shift
  local kb
  kb=$(/usr/bin/time -v "$@" 2>&1 >/dev/null | sed -n 's/.*Maximum resident set size (kbytes): *//p')
  printf '  %-44s %8s MiB\n' "$label" "$(awk -v k="${kb:-0}" 'BEGIN { printf "%.1f", k / 1024 }')"
}

# cluster_caps FILE: helm template's flags for what the cluster serves, one a line: --kube-version=<the server's
# gitVersion>, then one --api-versions=X per served group/version and per group/version/Kind of every
# resource and subresource (Helm's GetVersionSet; what helm cozy passes). Read here from the plain discovery
# documents (/api, /apis, then each group version's resource list), not from helm cozy's own discovery.
cluster_caps() {
  python3 - "$KUBECTL" >"$1" <<'PY'
import json, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

kubectl = sys.argv[1]
def get(*args):
    return subprocess.run([kubectl, *args], check=True, capture_output=True, text=True).stdout
def raw(path):
    return json.loads(get("get", "--raw", path))

version = json.loads(get("version", "-o", "json"))["serverVersion"]["gitVersion"]
gvs = [("/api/" + v, v) for v in raw("/api")["versions"]]
gvs += [("/apis/" + v["groupVersion"], v["groupVersion"]) for g in raw("/apis")["groups"] for v in g["versions"]]
served = {gv for _, gv in gvs}
with ThreadPoolExecutor(4) as pool:
    for resources in pool.map(lambda p: raw(p[0]), gvs):
        served.update(f"{resources['groupVersion']}/{r['kind']}" for r in resources["resources"] if r.get("kind"))
print(f"--kube-version={version}")
print("\n".join(f"--api-versions={v}" for v in sorted(served)))
PY
}

# use_helm V: Helm V in $helm, with its own homes and the plugin directory; $values: where the values helm
# cozy composes for the HelmRelease are kept for it.
use_helm() {
  helm=HELM$1
  helm=${!helm}
  local home=$work/home$1
  mkdir -p "$home"
  export HELM_PLUGINS=$plugins HELM_CONFIG_HOME=$home/config HELM_CACHE_HOME=$home/cache HELM_DATA_HOME=$home/data
  values=$work/values$1.json
}

# direct_rows BASE_MS: helm template given the cluster's capabilities ($caps), bare and with the GOGC helm cozy
# gives the helm it runs (src/render/helm.rs), then helm-cozy run directly (no plugin dispatch): show with a
# warm and a cold discovery, diff with a cold one; ratios against BASE_MS (bare helm template) and both
# capabilities rows; the bare capabilities row's number is left in $work/last_ms.
direct_rows() {
  local base=$1 caps_ms as_run_ms
  time_cmd "helm template (cluster capabilities)" "$helm" template "$hr" "$chart" -n "$ns" -f "$values" "${caps[@]}"
  caps_ms=$(cat "$work/last_ms" 2>/dev/null || echo 0)
  time_cmd "  the same, GOGC=$go_gc (as helm cozy runs it)" \
    env GOGC="$go_gc" "$helm" template "$hr" "$chart" -n "$ns" -f "$values" "${caps[@]}"
  as_run_ms=$(cat "$work/last_ms" 2>/dev/null || echo 0)
  # Warm: the cache filled just now (an answer from before the CRDs is removed first) and kept all along.
  rm -rf "$discovery_cache"
  env HELM_BIN="$helm" COZYHR_DISCOVERY_TTL=1h "$bin" show "$hr" -C "$chart" -n "$ns" >/dev/null
  time_cmd "helm-cozy show NAME (direct, warm discovery)" \
    env HELM_BIN="$helm" COZYHR_DISCOVERY_TTL=1h "$bin" show "$hr" -C "$chart" -n "$ns"
  ratio "$base" "$caps_ms" "$as_run_ms"
  time_cmd "helm-cozy show NAME (direct, cold discovery)" \
    env HELM_BIN="$helm" COZYHR_DISCOVERY_TTL=0 "$bin" show "$hr" -C "$chart" -n "$ns"
  ratio "$base" "$caps_ms" "$as_run_ms"
  time_cmd "helm-cozy diff NAME (direct, cold discovery)" \
    env HELM_BIN="$helm" COZYHR_DISCOVERY_TTL=0 "$bin" diff "$hr" -C "$chart" -n "$ns"
  ratio "$base" "$caps_ms" "$as_run_ms"
  echo "$caps_ms" >"$work/last_ms"
}

# The GOGC helm cozy gives helm unless the user set one: read from the source, so the two cannot part.
go_gc=$(sed -n 's/^pub const GO_GC: &str = "\(.*\)";$/\1/p' "$repo/src/render/helm.rs")
[ -n "$go_gc" ] || { echo "bench-render.sh: cannot read GO_GC from src/render/helm.rs" >&2; exit 1; }

cluster_caps "$work/caps"
mapfile -t caps <"$work/caps"
echo
echo "chart: $n objects ($n_cm ConfigMaps, $n_svc Services, $n_secret Secrets); HelmRelease $ns/$hr"
echo "helm-cozy: $("$bin" version --client) ($bin); runs: $runs (+$warmup warmup); timer: $([ -n "$have_hyperfine" ] && echo hyperfine || echo 'bash loop')"
echo "cluster capabilities: ${caps[0]#--kube-version=}, $((${#caps[@]} - 1)) API versions"
declare -A base_ms
for helm_v in 3 4; do
  use_helm "$helm_v"
  "$helm" cozy version --client >/dev/null || { echo "bench-render.sh: helm cozy does not run under $helm" >&2; exit 1; }
  "$helm" cozy values "$hr" -C "$chart" -n "$ns" -o json >"$values"
  objects=$("$helm" cozy show "$hr" -C "$chart" -n "$ns" | grep -c '^kind: ' || true)
  tmpl_objects=$("$helm" template "$hr" "$chart" -n "$ns" -f "$values" | grep -c '^kind: ' || true)

  echo
  echo "Helm $helm_v ($("$helm" version --template '{{.Version}}' 2>/dev/null || true)): helm cozy show renders $objects objects, helm template $tmpl_objects"
  echo " wall time"
  time_cmd "helm template (same values)" "$helm" template "$hr" "$chart" -n "$ns" -f "$values"
  base=$(cat "$work/last_ms" 2>/dev/null || echo 0)
  base_ms[$helm_v]=$base
  direct_rows "$base"
  caps_ms=$(cat "$work/last_ms")
  time_cmd "helm cozy version (plugin dispatch alone)" "$helm" cozy version --client
  time_cmd "helm cozy show --plain (same values)" "$helm" cozy show "$hr" --plain -C "$chart" -f "$values"
  ratio "$base" "$caps_ms"
  time_cmd "helm cozy show NAME" "$helm" cozy show "$hr" -C "$chart" -n "$ns"
  ratio "$base" "$caps_ms"
  time_cmd "helm cozy diff NAME (against live)" "$helm" cozy diff "$hr" -C "$chart" -n "$ns"
  ratio "$base" "$caps_ms"
  time_cmd "helm cozy diff NAME --against release" "$helm" cozy diff "$hr" --against release -C "$chart" -n "$ns"
  # After a change in the valuesFrom ConfigMap every ConfigMap differs: the diff has n_cm changed objects.
  "$KUBECTL" -n "$ns" patch configmap bench-values --type merge \
    -p '{"data":{"values.yaml":"message: changed\n"}}' >/dev/null
  changed=$("$helm" cozy diff "$hr" -C "$chart" -n "$ns" -o summary | tail -1)
  time_cmd "helm cozy diff NAME, $n_cm changed" "$helm" cozy diff "$hr" -C "$chart" -n "$ns"
  echo "    ($changed)"
  echo " peak memory (largest process)"
  mem_cmd "helm template (same values)" "$helm" template "$hr" "$chart" -n "$ns" -f "$values"
  mem_cmd "helm template (cluster capabilities)" "$helm" template "$hr" "$chart" -n "$ns" -f "$values" "${caps[@]}"
  mem_cmd "helm cozy show NAME" "$helm" cozy show "$hr" -C "$chart" -n "$ns"
  mem_cmd "helm cozy diff NAME, $n_cm changed" "$helm" cozy diff "$hr" -C "$chart" -n "$ns"
  mem_cmd "helm cozy diff NAME --against release" "$helm" cozy diff "$hr" --against release -C "$chart" -n "$ns"
  "$KUBECTL" -n "$ns" patch configmap bench-values --type merge \
    -p '{"data":{"values.yaml":"message: from-valuesfrom\n"}}' >/dev/null
done

# ---------------------------------------------------------------------------------------------------
# The second pass: the same cluster with $crds more CRDs, each in an API group of its own, so that discovery
# and the capabilities helm is given grow by that many groups.
if [ "$crds" -gt 0 ]; then
  echo >&2
  echo "creating $crds extra CRDs (-l $crd_label=true)" >&2
  crds_made=1
  for ((i = 0; i < crds; i++)); do
    cat <<EOF
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things$i.g$i.bench.cozyhr.example
  labels:
    $crd_label: "true"
spec:
  group: g$i.bench.cozyhr.example
  scope: Namespaced
  names:
    kind: Thing$i
    listKind: Thing${i}List
    plural: things$i
    singular: thing$i
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
EOF
  done | "$KUBECTL" apply --server-side --field-manager=cozyhr-bench -f - >/dev/null
  start=$(date +%s)
  "$KUBECTL" wait --for condition=established --timeout=120s crd -l "$crd_label=true" >/dev/null
  # Established is the CRD's own word; discovery lists the new groups a moment later.
  listed=0
  for ((i = 0; i < 120; i++)); do
    listed=$("$KUBECTL" get --raw /apis | python3 -c 'import json, sys
print(sum(g["name"].endswith(".bench.cozyhr.example") for g in json.load(sys.stdin)["groups"]))')
    [ "$listed" -ge "$crds" ] && break
    sleep 0.5
  done
  echo "established, and $listed of their groups listed by discovery, in $(($(date +%s) - start))s" >&2
  cluster_caps "$work/caps"
  mapfile -t caps <"$work/caps"
  echo
  echo "with $crds extra CRDs: cluster capabilities ${caps[0]#--kube-version=}, $((${#caps[@]} - 1)) API versions"
  for helm_v in 3 4; do
    use_helm "$helm_v"
    echo
    echo "Helm $helm_v, with $crds extra CRDs (helm template, same values: ${base_ms[$helm_v]} ms, from above)"
    echo " wall time"
    direct_rows "${base_ms[$helm_v]}"
  done
fi

# helm-controller uninstalls the release in the background; the namespace stays (scripts/cluster.sh down).
[ -n "${BENCH_KEEP:-}" ] || "$KUBECTL" -n "$ns" delete helmrelease "$hr" --wait=false >/dev/null
