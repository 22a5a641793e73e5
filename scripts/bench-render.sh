#!/usr/bin/env bash
# Benchmark of `helm cozy show` and `helm cozy diff` (issue 4) on a generated chart with N objects
# (default 1000: ConfigMaps, Services and Secrets), under Helm 3 and Helm 4. Prints numbers, asserts
# nothing. Aims: `helm cozy show NAME` within 10% of bare `helm template` of the same chart and values;
# `helm cozy diff NAME` of 1000 objects under 1 second.
#
#   scripts/bench-render.sh [N]        (env: BENCH_RUNS=5, BENCH_WARMUP=1; needs the local control plane:
#                                       scripts/cluster.sh up; builds target/release/helm-cozy if missing;
#                                       BENCH_KEEP=1 keeps the chart, plugin dir and HelmRelease for profiling)
#
# What is measured, per Helm version (helm cozy runs as a real Helm plugin: helm → helm-cozy → helm):
#   helm template          bare `helm template` with the values helm cozy composes (`helm cozy values -o json`),
#                          the same release name and namespace; no post-renderer
#   helm cozy version      Helm starting a plugin and the plugin starting: the floor under every
#                          `helm cozy` command, paid before any work
#   helm cozy show --plain the chart alone through helm cozy (no cluster)
#   helm cozy show NAME    HelmRelease NAME read from the cluster, valuesFrom fetched, Flux's post-render chain
#   helm-cozy show NAME    the same, run directly (not through `helm`): helm cozy's own cost over rendering
#   helm cozy diff NAME    the above, plus server-side dry runs of every object and the diff against live
#   helm cozy diff NAME --against release   against the stored Helm release instead
# Peak memory is /usr/bin/time -v's "Maximum resident set size": the largest single process of the tree
# (helm, helm-cozy, kubectl kustomize), not their sum.
set -euo pipefail

n=${1:-1000}
runs=${BENCH_RUNS:-5}
warmup=${BENCH_WARMUP:-1}
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
bin=$repo/target/release/helm-cozy
if [ ! -x "$bin" ]; then
  echo "building $bin" >&2
  (cd "$repo" && cargo build --release -p helm-cozy >&2)
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench-render.sh: /usr/bin/time is missing (peak memory): apt-get install -y time" >&2
  exit 1
fi
have_hyperfine=''
command -v hyperfine >/dev/null 2>&1 && have_hyperfine=1

work=$(mktemp -d "${TMPDIR:-/tmp}/cozyhr-bench-XXXXXX")
if [ -n "${BENCH_KEEP:-}" ]; then
  trap 'echo "kept: chart $work/bench, plugins $work/plugins, HelmRelease ${ns:-}/${hr:-}" >&2' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi

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

# ratio BASE_MS: the last measurement against BASE_MS (bare helm template), e.g. "1.08 x helm template".
ratio() {
  awk -v t="$(cat "$work/last_ms" 2>/dev/null || echo 0)" -v b="$1" \
    'BEGIN { if (b > 0) printf "  %-44s %8.2f x helm template (%+d ms)\n", "", t / b, t - b }'
}

# mem_cmd LABEL CMD...: peak RSS of the process tree's largest process.
mem_cmd() {
  local label=$1
  shift
  local kb
  kb=$(/usr/bin/time -v "$@" 2>&1 >/dev/null | sed -n 's/.*Maximum resident set size (kbytes): *//p')
  printf '  %-44s %8s MiB\n' "$label" "$(awk -v k="${kb:-0}" 'BEGIN { printf "%.1f", k / 1024 }')"
}

echo
echo "chart: $n objects ($n_cm ConfigMaps, $n_svc Services, $n_secret Secrets); HelmRelease $ns/$hr"
echo "helm-cozy: $("$bin" version) ($bin); runs: $runs (+$warmup warmup); timer: $([ -n "$have_hyperfine" ] && echo hyperfine || echo 'bash loop')"
for helm_v in 3 4; do
  helm=HELM$helm_v
  helm=${!helm}
  home=$work/home$helm_v
  mkdir -p "$home"
  export HELM_PLUGINS=$plugins HELM_CONFIG_HOME=$home/config HELM_CACHE_HOME=$home/cache HELM_DATA_HOME=$home/data
  "$helm" cozy version >/dev/null || { echo "bench-render.sh: helm cozy does not run under $helm" >&2; exit 1; }
  values=$work/values$helm_v.json
  "$helm" cozy values "$hr" -C "$chart" -n "$ns" -o json >"$values"
  release_ns=$ns
  objects=$("$helm" cozy show "$hr" -C "$chart" -n "$ns" | grep -c '^kind: ' || true)
  tmpl_objects=$("$helm" template "$hr" "$chart" -n "$release_ns" -f "$values" | grep -c '^kind: ' || true)

  echo
  echo "Helm $helm_v ($("$helm" version --template '{{.Version}}' 2>/dev/null || true)): helm cozy show renders $objects objects, helm template $tmpl_objects"
  echo " wall time"
  time_cmd "helm template (same values)" "$helm" template "$hr" "$chart" -n "$release_ns" -f "$values"
  base=$(cat "$work/last_ms")
  time_cmd "helm cozy version (plugin dispatch alone)" "$helm" cozy version
  time_cmd "helm cozy show --plain (same values)" "$helm" cozy show "$hr" --plain -C "$chart" -f "$values"
  ratio "$base"
  time_cmd "helm cozy show NAME" "$helm" cozy show "$hr" -C "$chart" -n "$ns"
  ratio "$base"
  # The same without Helm in front: what helm cozy itself adds to rendering.
  time_cmd "helm-cozy show NAME (no plugin dispatch)" env HELM_BIN="$helm" "$bin" show "$hr" -C "$chart" -n "$ns"
  ratio "$base"
  time_cmd "helm cozy diff NAME (against live)" "$helm" cozy diff "$hr" -C "$chart" -n "$ns"
  time_cmd "helm cozy diff NAME --against release" "$helm" cozy diff "$hr" --against release -C "$chart" -n "$ns"
  # After a change in the valuesFrom ConfigMap every ConfigMap differs: the diff has n_cm changed objects.
  "$KUBECTL" -n "$ns" patch configmap bench-values --type merge \
    -p '{"data":{"values.yaml":"message: changed\n"}}' >/dev/null
  changed=$("$helm" cozy diff "$hr" -C "$chart" -n "$ns" -o summary | tail -1)
  time_cmd "helm cozy diff NAME, $n_cm changed" "$helm" cozy diff "$hr" -C "$chart" -n "$ns"
  echo "    ($changed)"
  echo " peak memory (largest process)"
  mem_cmd "helm template (same values)" "$helm" template "$hr" "$chart" -n "$release_ns" -f "$values"
  mem_cmd "helm cozy show NAME" "$helm" cozy show "$hr" -C "$chart" -n "$ns"
  mem_cmd "helm cozy diff NAME, $n_cm changed" "$helm" cozy diff "$hr" -C "$chart" -n "$ns"
  mem_cmd "helm cozy diff NAME --against release" "$helm" cozy diff "$hr" --against release -C "$chart" -n "$ns"
  "$KUBECTL" -n "$ns" patch configmap bench-values --type merge \
    -p '{"data":{"values.yaml":"message: from-valuesfrom\n"}}' >/dev/null
done

# helm-controller uninstalls the release in the background; the namespace stays (scripts/cluster.sh down).
[ -n "${BENCH_KEEP:-}" ] || "$KUBECTL" -n "$ns" delete helmrelease "$hr" --wait=false >/dev/null
