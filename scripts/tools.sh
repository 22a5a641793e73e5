#!/usr/bin/env bash
# Build (once) and print the paths of the real components that cozyhr's tests and demo run against:
# etcd, kube-apiserver, kubectl, Flux helm-controller and source-controller, an OCI registry
# (distribution), Helm 3, Helm 4, krew and the flux CLI; the k9s module's plugin files and schema (read,
# not built) and a Python venv with jsonschema for checking k9s/plugins-cozyhr.yaml. There are no release
# downloads on this machine, only the Go module proxy, so every tool is built from its Go module at a
# pinned version and cached by version outside the repository: a warm rerun takes well under a second.
#
#   scripts/tools.sh build   build whatever is missing (cold: ~40 min on 2 cores), then print `export` lines
#   scripts/tools.sh env     print `export` lines; fail if something is not built yet
set -euo pipefail

# Pinned versions. Why these: docs/test-ground.md, "The local control plane".
KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
HELM_CONTROLLER_VERSION=${HELM_CONTROLLER_VERSION:-v1.6.2}
SOURCE_CONTROLLER_VERSION=${SOURCE_CONTROLLER_VERSION:-v1.9.3}
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.1.2}
HELM3_VERSION=${HELM3_VERSION:-v3.22.0}
HELM4_VERSION=${HELM4_VERSION:-v4.3.1}
KREW_VERSION=${KREW_VERSION:-v0.4.3}
FLUX_VERSION=${FLUX_VERSION:-v2.9.5}
K9S_VERSION=${K9S_VERSION:-v0.50.16}

CACHE=${COZYHR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cozyhr-e2e}
export GOWORK=off GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0 GOFLAGS=-modcacherw
export GOMODCACHE=$CACHE/gomod GOCACHE=$CACHE/gobuild
GOVERSION=$(go env GOVERSION 2>/dev/null) || { echo "tools.sh: the Go toolchain is missing: install Go >= 1.26 (https://go.dev/doc/install) and retry" >&2; exit 1; }
BIN=$CACHE/bin/$GOVERSION
SRC=$CACHE/src
mkdir -p "$BIN" "$SRC"

log() { printf '[tools] %s\n' "$*" >&2; }

# moddir MOD@VER: the extracted module directory in the module cache (downloads it if needed).
moddir() { go mod download -json "$1" | python3 -c 'import json,sys;print(json.load(sys.stdin)["Dir"])'; }
modfile() { go mod download -json "$1" | python3 -c 'import json,sys;print(json.load(sys.stdin)["GoMod"])'; }

# wrapper NAME: a throw-away Go module used to build a tool whose own go.mod has local replaces
# (`go install pkg@ver` refuses those).
wrapper() {
  local dir=$SRC/$1
  mkdir -p "$dir"
  [ -f "$dir/go.mod" ] || (cd "$dir" && go mod init "cozyhr.local/$1" >/dev/null 2>&1)
  echo "$dir"
}

# install_bin TMP DEST: move a freshly built binary into place atomically.
install_bin() { chmod +x "$1"; mv -f "$1" "$2"; }

build_kube() {
  local kv=$KUBE_VERSION sv="v0.${KUBE_VERSION#v1.}" minor
  minor=$(echo "$kv" | cut -d. -f2)
  local api=$BIN/kube-apiserver-$kv ctl=$BIN/kubectl-$kv
  if [ -x "$api" ] && [ -x "$ctl" ] && ls "$BIN"/etcd-* >/dev/null 2>&1; then return; fi
  log "building kube-apiserver, kubectl and etcd for $kv (cold: 15-25 min)"
  local dir kmod ev ldf p
  dir=$(wrapper "kube-$kv")
  kmod=$(modfile "k8s.io/kubernetes@$kv")
  # k8s.io/kubernetes requires its staging modules at v0.0.0 with ./staging replaces: point each at its
  # published version instead.
  for m in $(go mod edit -json "$kmod" | python3 -c 'import json,sys
d=json.load(sys.stdin)
s={r["Old"]["Path"] for r in d.get("Replace") or [] if r["New"]["Path"].startswith("./staging/")}
s|={r["Path"] for r in d["Require"] if r["Version"]=="v0.0.0" and r["Path"].startswith("k8s.io/")}
print(*sorted(s))'); do
    (cd "$dir" && go mod edit -replace="$m=$m@$sv")
  done
  (cd "$dir" && go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$kv" "k8s.io/kubernetes/cmd/kubectl@$kv")
  # Keep the etcd server version that Kubernetes itself selects.
  ev=$(cd "$dir" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
  (cd "$dir" && go get -tool "go.etcd.io/etcd/server/v3@$ev")
  # Kubernetes' own version stamping: without it /version says v0.0.0-master, which Helm and
  # helm-controller cannot parse as semver.
  ldf="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$kv -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ldf+=" -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "$ldf" -o "$api.tmp" k8s.io/kubernetes/cmd/kube-apiserver) && install_bin "$api.tmp" "$api"
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "$ldf" -o "$ctl.tmp" k8s.io/kubernetes/cmd/kubectl) && install_bin "$ctl.tmp" "$ctl"
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "-s -w" -o "$BIN/etcd-$ev.tmp" go.etcd.io/etcd/server/v3) && install_bin "$BIN/etcd-$ev.tmp" "$BIN/etcd-$ev"
  echo "$ev" >"$BIN/etcd-for-kube-$kv"
}

# build_flux_controller NAME VERSION OUT: a Flux controller built from its Go module. Its go.mod replaces
# its API module with a local path (which `go install pkg@ver` refuses): a wrapper module takes the
# published API module instead and carries over the other replaces (go-digest with BLAKE3, kustomize pins).
build_flux_controller() {
  local name=$1 v=$2 out=$3
  local dir mod
  dir=$(wrapper "$name-$v")
  mod=$(modfile "github.com/fluxcd/$name@$v")
  while read -r old new; do
    (cd "$dir" && go mod edit -replace="$old=$new")
  done < <(go mod edit -json "$mod" | python3 -c 'import json,sys
for r in json.load(sys.stdin).get("Replace") or []:
    if r["New"].get("Version"): print(r["Old"]["Path"], r["New"]["Path"]+"@"+r["New"]["Version"])')
  (cd "$dir" && go get -tool "github.com/fluxcd/$name@$v")
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "-s -w" -o "$out.tmp" "github.com/fluxcd/$name") && install_bin "$out.tmp" "$out"
}

build_helm_controller() {
  local out=$BIN/helm-controller-$HELM_CONTROLLER_VERSION
  [ -x "$out" ] && return
  log "building helm-controller $HELM_CONTROLLER_VERSION (cold: 8-12 min)"
  build_flux_controller helm-controller "$HELM_CONTROLLER_VERSION" "$out"
}

build_source_controller() {
  local out=$BIN/source-controller-$SOURCE_CONTROLLER_VERSION
  [ -x "$out" ] && return
  log "building source-controller $SOURCE_CONTROLLER_VERSION (cold: 3-6 min)"
  build_flux_controller source-controller "$SOURCE_CONTROLLER_VERSION" "$out"
}

# The OCI registry charts are pushed to for OCIRepository sources: distribution's registry.
build_registry() {
  local v=$REGISTRY_VERSION out=$BIN/registry-$REGISTRY_VERSION
  [ -x "$out" ] && return
  log "building the OCI registry (distribution $v, cold: 2-4 min)"
  GOBIN=$BIN/registry-$v.tmp go install -trimpath -ldflags "-s -w" "github.com/distribution/distribution/v3/cmd/registry@$v"
  install_bin "$BIN/registry-$v.tmp/registry" "$out"; rmdir "$BIN/registry-$v.tmp"
}

build_helm() { # MAJOR VERSION
  local major=$1 v=$2 out=$BIN/helm-$2/helm
  [ -x "$out" ] && return
  log "building helm $v (cold: 4-8 min)"
  mkdir -p "$BIN/helm-$v"
  GOBIN=$BIN/helm-$v.tmp go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/$major/internal/version.version=$v" "helm.sh/helm/$major/cmd/helm@$v"
  install_bin "$BIN/helm-$v.tmp/helm" "$out"; rmdir "$BIN/helm-$v.tmp"
}

build_krew() {
  local v=$KREW_VERSION out=$BIN/krew-$KREW_VERSION
  [ -x "$out" ] && return
  log "building krew $v (cold: ~1 min)"
  local dir
  dir=$(wrapper "krew-$v")
  # krew pins reflect2 v1.0.1, which crashes on Go >= 1.18 map iteration.
  (cd "$dir" && go get -tool "sigs.k8s.io/krew/cmd/krew@$v" github.com/modern-go/reflect2@v1.0.2)
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$v" -o "$out.tmp" sigs.k8s.io/krew/cmd/krew) && install_bin "$out.tmp" "$out"
}

# The flux CLI, for the test of `flux plugin install` and `flux cozyhr`. Built from a copy of its module:
# its go.mod has a replace (which `go install pkg@ver` refuses), and cmd/flux embeds install manifests
# (manifests/*.yaml) that Flux's release build generates with kustomize from GitHub downloads and the
# module does not carry. A placeholder stands in for them, so this flux cannot `install` or `bootstrap`
# (nothing here uses them); every other command is the released code.
build_flux() {
  local v=$FLUX_VERSION out=$BIN/flux-$FLUX_VERSION
  [ -x "$out" ] && return
  log "building the flux CLI $v (cold: ~4-5 min)"
  local mod dir=$SRC/flux-$v
  mod=$(moddir "github.com/fluxcd/flux2/v2@$v")
  rm -rf "$dir"
  cp -R "$mod" "$dir"
  chmod -R u+w "$dir"
  mkdir -p "$dir/cmd/flux/manifests"
  echo "# placeholder for the install manifests of Flux's release build (see scripts/tools.sh)" >"$dir/cmd/flux/manifests/placeholder.yaml"
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "-s -w -X main.VERSION=${v#v}" -o "$out.tmp" ./cmd/flux) && install_bin "$out.tmp" "$out"
}

# k9s is not built: its module gives the plugin JSON schema and the upstream plugin files (flux.yaml),
# which the k9s plugin test reads. A Python venv with jsonschema and PyYAML (pinned, from PyPI) checks
# the repository's plugin file against that schema.
fetch_k9s() {
  moddir "github.com/derailed/k9s@$K9S_VERSION" >/dev/null
}

PY_JSONSCHEMA=4.26.0 PY_PYYAML=6.0.3
venv_dir() { echo "$CACHE/venv/jsonschema-$PY_JSONSCHEMA-pyyaml-$PY_PYYAML"; }
build_venv() {
  local dir
  dir=$(venv_dir)
  [ -x "$dir/bin/python" ] && return
  log "creating a Python venv with jsonschema $PY_JSONSCHEMA and PyYAML $PY_PYYAML (from PyPI)"
  rm -rf "$dir.tmp"
  python3 -m venv "$dir.tmp" || { echo "tools.sh: python3 -m venv failed: install Python's venv module (Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$dir.tmp/bin/python" -m pip install --quiet --disable-pip-version-check "jsonschema==$PY_JSONSCHEMA" "pyyaml==$PY_PYYAML"
  mv "$dir.tmp" "$dir"
}

# CRDs: HelmRelease from the helm-controller module; source kinds from the source-controller module that
# helm-controller's go.mod pairs with it.
collect_crds() {
  local out=$CACHE/crds/$HELM_CONTROLLER_VERSION-$SOURCE_CONTROLLER_VERSION
  [ -f "$out/.done" ] && return
  mkdir -p "$out"
  local hc sc k
  hc=$(moddir "github.com/fluxcd/helm-controller@$HELM_CONTROLLER_VERSION")
  sc=$(moddir "github.com/fluxcd/source-controller@$SOURCE_CONTROLLER_VERSION")
  cp "$hc/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml" "$out/"
  for k in externalartifacts helmcharts ocirepositories helmrepositories gitrepositories buckets; do
    cp "$sc/config/crd/bases/source.toolkit.fluxcd.io_$k.yaml" "$out/"
  done
  chmod 0644 "$out"/*.yaml
  touch "$out/.done"
}

print_env() {
  local ev
  ev=$(cat "$BIN/etcd-for-kube-$KUBE_VERSION" 2>/dev/null) || { echo "tools.sh: the control-plane binaries are not built yet: run scripts/tools.sh build" >&2; exit 1; }
  local -A t=(
    [ETCD]=$BIN/etcd-$ev
    [KUBE_APISERVER]=$BIN/kube-apiserver-$KUBE_VERSION
    [KUBECTL]=$BIN/kubectl-$KUBE_VERSION
    [HELM_CONTROLLER]=$BIN/helm-controller-$HELM_CONTROLLER_VERSION
    [SOURCE_CONTROLLER]=$BIN/source-controller-$SOURCE_CONTROLLER_VERSION
    [REGISTRY]=$BIN/registry-$REGISTRY_VERSION
    [HELM3]=$BIN/helm-$HELM3_VERSION/helm
    [HELM4]=$BIN/helm-$HELM4_VERSION/helm
    [KREW]=$BIN/krew-$KREW_VERSION
    [FLUX]=$BIN/flux-$FLUX_VERSION
    [COZYHR_PYTHON]=$(venv_dir)/bin/python
  )
  local k
  for k in "${!t[@]}"; do
    [ -x "${t[$k]}" ] || { echo "tools.sh: ${t[$k]} is missing: run scripts/tools.sh build" >&2; exit 1; }
  done
  local k9s=$GOMODCACHE/github.com/derailed/k9s@$K9S_VERSION
  [ -f "$k9s/internal/config/json/schemas/plugins.json" ] || { echo "tools.sh: the k9s module ($K9S_VERSION) is not downloaded: run scripts/tools.sh build" >&2; exit 1; }
  for k in ETCD KUBE_APISERVER KUBECTL HELM_CONTROLLER SOURCE_CONTROLLER REGISTRY HELM3 HELM4 KREW FLUX COZYHR_PYTHON; do printf 'export %s=%q\n' "$k" "${t[$k]}"; done
  printf 'export FLUX_CRDS=%q\n' "$CACHE/crds/$HELM_CONTROLLER_VERSION-$SOURCE_CONTROLLER_VERSION"
  printf 'export K9S_DIR=%q\n' "$k9s"
}

case ${1:-} in
  build)
    # One build at a time per cache: parallel runs wait here instead of racing on the same outputs.
    exec 9>"$CACHE/.lock"; flock 9
    build_krew
    build_helm v3 "$HELM3_VERSION"
    build_helm v4 "$HELM4_VERSION"
    collect_crds
    build_helm_controller
    build_source_controller
    build_registry
    build_kube
    build_flux
    fetch_k9s
    build_venv
    print_env ;;
  env) print_env ;;
  *) echo "usage: scripts/tools.sh build|env" >&2; exit 1 ;;
esac
