#!/usr/bin/env bash
# The first five minutes: build both plugins, bring up the local control plane (real kube-apiserver and
# Flux helm-controller), let Flux install the example chart, then walk the loop a chart developer walks:
# see the HelmRelease, edit the chart locally, diff, apply, look at the status, hand back to Flux.
# Every command is printed before it runs. The cluster stays up at the end; the script says how to use it
# and how to stop it.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
CACHE=${COZYHR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cozyhr-e2e}
export COZYHR_RUN=${COZYHR_RUN:-$CACHE/run}
demo=$COZYHR_RUN/demo

bold() { if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then printf '\033[1m%s\033[0m\n' "$*"; else printf '%s\n' "$*"; fi; }
say() { printf '\n'; bold "## $*"; }
# run CMD...: print the command as a user would type it, then run it.
# The command line goes to stderr, so that a pipe after `run ...` gets only the command's output.
run() { printf '$ %s\n' "$*" >&2; "$@"; }

# A head start: the control-plane tools build in the background while cargo builds the plugins (the
# first time only; `cluster.sh up` waits for them and builds whatever this failed to, with its error).
setsid scripts/tools.sh build --flux 2.9 >/dev/null &
head_start=$!
trap 'kill -TERM -- "-$head_start" 2>/dev/null || true' EXIT

say "Build the plugins (scripts/build.sh)"
scripts/build.sh --one-profile >/dev/null

say "Start the local control plane (scripts/cluster.sh up; the first time builds the tools, ~40 min)"
scripts/cluster.sh up
eval "$(scripts/cluster.sh env)"

say "Install the plugins into a demo environment ($demo)"
rm -rf "$demo"
mkdir -p "$demo/bin" "$demo/helm"
ln -s "$KUBECTL" "$demo/bin/kubectl"
ln -s "$HELM4" "$demo/bin/helm"
ln -s "${CARGO_TARGET_DIR:-$repo/target}/shipped/kubectl-cozyhr" "$demo/bin/kubectl-cozyhr"
ln -s "$repo/kubectl_complete-cozyhr" "$demo/bin/kubectl_complete-cozyhr" 2>/dev/null || true
cat >"$demo/env" <<ENV
export KUBECONFIG=$KUBECONFIG
export PATH=$demo/bin:\$PATH
export HELM_PLUGINS=$demo/helm/data/plugins HELM_CONFIG_HOME=$demo/helm/config HELM_CACHE_HOME=$demo/helm/cache HELM_DATA_HOME=$demo/helm/data
ENV
# shellcheck disable=SC1091
source "$demo/env"
mkdir -p "$HELM_PLUGINS"
run helm plugin install "$repo" >/dev/null
run helm plugin list
run kubectl plugin list 2>/dev/null | grep cozyhr || true

say "Flux installs the example chart (examples/hello) from an ExternalArtifact"
kubectl get namespace demo >/dev/null 2>&1 || run kubectl create namespace demo
run scripts/publish-chart.sh examples/hello hello demo
run kubectl apply -f examples/hello-release.yaml
if [ "$(kubectl -n demo get helmrelease hello -o jsonpath='{.spec.suspend}')" = "true" ]; then
  # A previous demo run left it suspended (as helm cozy apply does): hand it back first.
  run kubectl cozyhr resume hello -n demo --timeout 2m
else
  run kubectl cozyhr reconcile hello -n demo --timeout 2m
fi
run kubectl cozyhr get -n demo

say "A local edit of the chart (a copy in $demo/hello)"
cp -r examples/hello "$demo/hello"
# The time makes the edit new on every run, so a rerun of the demo has something to diff and apply.
cat >>"$demo/hello/templates/configmap.yaml" <<YAML
  edited: "locally, by the demo at $(date -u +%H:%M:%S)"
YAML
run tail -n 3 "$demo/hello/templates/configmap.yaml"

say "What Flux would install for HelmRelease hello, from the local chart"
run helm cozy show hello -n demo -C "$demo/hello" --show-only templates/configmap.yaml
run helm cozy values hello -n demo -C "$demo/hello" --sources

say "What apply would change (Secrets masked); exit code 2 means there are changes"
set +e
run helm cozy diff hello -n demo -C "$demo/hello" --detailed-exitcode
code=$?
set -e
[ "$code" -eq 2 ] || { echo "demo: expected the diff to find changes (exit 2), got $code" >&2; exit 1; }

say "Apply: suspend Flux, helm upgrade as helm-controller would, write the status as helm-controller does"
run helm cozy apply hello -n demo -C "$demo/hello"
# The newest Helm release revision stored for the demo release.
helm_revision() { kubectl -n demo get secrets -l owner=helm,name=demo-apps-hello -o jsonpath='{range .items[*]}{.metadata.labels.version}{"\n"}{end}' | sort -n | tail -n 1; }
after_apply=$(helm_revision)
edited=$(run kubectl -n demo-apps get configmap demo-apps-hello-greeting -o jsonpath='{.data.edited}')
echo "$edited"
case $edited in "locally, by the demo at "*) ;; *) echo "demo: the cluster does not carry the local edit" >&2; exit 1 ;; esac
run helm cozy diff hello -n demo -C "$demo/hello" --detailed-exitcode
run kubectl cozyhr status hello -n demo

say "Hand back to Flux: helm-controller replaces the local edit with the source's chart, once"
# resume returns only once helm-controller has answered the hand-back, so what it says is checked the
# moment it returns: a new Helm revision, made from the source's chart, without the local edit.
out=$(run kubectl cozyhr resume hello -n demo 2>&1) || { printf '%s\n' "$out" >&2; exit 1; }
printf '%s\n' "$out"
after_resume=$(helm_revision)
[ "$after_resume" -eq $((after_apply + 1)) ] ||
  { echo "demo: expected helm-controller to make Helm revision $((after_apply + 1)), the cluster has $after_resume" >&2; exit 1; }
case $out in *"helm-controller ran a Helm upgrade, replacing the local chart"*) ;;
  *) echo "demo: resume did not say that helm-controller replaced the local chart" >&2; exit 1 ;; esac
edited=$(kubectl -n demo-apps get configmap demo-apps-hello-greeting -o jsonpath='{.data.edited}')
[ -z "$edited" ] || { echo "demo: the cluster still carries the local edit after the hand-back: $edited" >&2; exit 1; }
echo "checked: Helm revision $after_resume is the source's chart, and the local edit is gone"

say "Apply the source's own chart, then hand back: helm-controller finds nothing to redo"
run helm cozy apply hello -n demo -C examples/hello
after_apply=$(helm_revision)
out=$(run kubectl cozyhr resume hello -n demo 2>&1) || { printf '%s\n' "$out" >&2; exit 1; }
printf '%s\n' "$out"
after_resume=$(helm_revision)
[ "$after_resume" = "$after_apply" ] ||
  { echo "demo: helm-controller upgraded the release after resume ($after_apply -> $after_resume)" >&2; exit 1; }
case $out in *"helm-controller found the release in sync and did nothing"*) ;;
  *) echo "demo: resume did not say that helm-controller did nothing" >&2; exit 1 ;; esac
echo "checked: helm-controller took the release as its own: still Helm revision $after_resume"
run kubectl cozyhr get -n demo -o wide

say "Done. The cluster is still up."
cat <<MSG
Use it from a shell:
  source $demo/env
  kubectl cozyhr get -A
  helm cozy diff hello -n demo -C $demo/hello
Stop it:
  scripts/cluster.sh down
MSG
