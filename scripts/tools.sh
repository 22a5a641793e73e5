#!/usr/bin/env bash
# Build (once) and print the paths of the real components that cozyhr's tests and demo run against:
# etcd, kube-apiserver, kubectl, Flux helm-controller, source-controller and source-watcher (two sets: Flux
# 2.9 and Flux 2.8) and kustomize-controller (the 2.9 set only), an OCI registry (distribution), Helm 3, Helm 4 (the user's, and the one each
# helm-controller embeds), krew, the flux CLI, oras and kustomize; the k9s module's plugin files and schema (read, not
# built) and a Python venv with jsonschema for checking k9s/plugins-cozyhr.yaml. There are no release
# downloads on this machine, only the Go module proxy, so every tool is built from its Go module at a
# pinned version, or from a source archive in ../shared/vendor/ where the proxy does not serve it
# (checked against its pinned sha256), and cached by version outside the repository: a warm rerun takes
# well under a second.
#
#   scripts/tools.sh build [--flux 2.8|2.9]   build whatever is missing (without --flux: both Flux sets;
#                                             cold: ~40 min on 2 cores, plus the second set), then print
#                                             `export` lines (for the set asked, else 2.9)
#   scripts/tools.sh env [--flux 2.8|2.9]     print `export` lines (default 2.9); fail if something of
#                                             that set is not built yet
set -euo pipefail

# Pinned versions. Why these: docs/test-ground.md, "The local control plane" and "Two Fluxes".
KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.1.2}
HELM3_VERSION=${HELM3_VERSION:-v3.21.4}
HELM4_VERSION=${HELM4_VERSION:-v4.3.2}
KREW_VERSION=${KREW_VERSION:-v0.4.3}
K9S_VERSION=${K9S_VERSION:-v0.50.16}
ORAS_VERSION=${ORAS_VERSION:-v1.3.6}
# kustomize as kustomize-controller v1.9.5 pins it (kubectl 1.37 embeds the same): a fleet review builds
# with the binary when it has it (it starts in a fraction of kubectl's time).
KUSTOMIZE_VERSION=${KUSTOMIZE_VERSION:-v5.8.1}

# The Flux sets (--flux). The controllers' versions are fixed per set, not read from the environment
# (`env` exports HELM_CONTROLLER_VERSION, which must not leak into the next call for the other set).
# Each set's flux CLI is the same Flux release (FLUX_RELEASE).
#   2.9 (default): Flux 2.9.5, what `flux install` gives today: helm-controller v1.6.4 (upstream Helm SDK
#                  v4.2.4), source-controller v1.9.5; source-watcher v2.2.1 where 2.9.5 ships v2.2.4
#                  (the proxy serves no source-watcher/v2 and the stored source stops at v2.2.1).
#   2.8: Flux 2.8.0 as Cozystack's operator installs it: helm-controller v1.5.0 (Helm SDK v4.1.1),
#        source-controller v1.8.0, source-watcher v2.1.0.
FLUX_SETS=(2.9 2.8)
# kustomize-controller: v1.9.5 (Flux 2.9.5's) is served; Flux 2.8.0's v1.8.0 is not, so the 2.8 set has
# none (KC_V empty) and the fleet suites run on the 2.9 set.
# flux_set SET: sets HC_V SC_V SW_V KC_V HC_HELM_V FLUX_RELEASE for that set.
flux_set() {
  case $1 in
    2.9) HC_V=v1.6.4 SC_V=v1.9.5 SW_V=v2.2.1 KC_V=v1.9.5 HC_HELM_V=v4.2.4 FLUX_RELEASE=v2.9.5 ;;
    2.8) HC_V=v1.5.0 SC_V=v1.8.0 SW_V=v2.1.0 KC_V= HC_HELM_V=v4.1.1 FLUX_RELEASE=v2.8.0 ;;
    *) echo "tools.sh: unknown Flux set '$1': use --flux 2.8 or --flux 2.9" >&2; exit 1 ;;
  esac
}

# Sources the module proxy does not serve (source-watcher/v2 at all, helm-controller v1.5.x), kept as
# upstream tagged them in ../shared/vendor/ (its README). Each archive is checked against the sha256
# pinned here (the README's) before it is unpacked into the cache, never into the repository.
VENDOR=${COZYHR_VENDOR:-$(cd "$(dirname "$0")/.." && pwd)/../shared/vendor}
declare -A VENDOR_SHA256=(
  [helm-controller-1.5.0]=7a56b2c9e1721923a6d76acbdd9ff6ee3f347ff2482602e04bc2fd8fe9c17730
  [source-watcher-2.1.0]=f28d683c827fdf09748256b3573d232bb06b1cc5c7238d9ce1aae01788685dfb
  [source-watcher-2.2.1]=013cd31e0eefd6da32e288e17fca8c9b6718d7be48856938efaa62a3a7e4b7b3
)

CACHE=${COZYHR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cozyhr-e2e}
export GOWORK=off GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0 GOFLAGS=-modcacherw
export GOMODCACHE=$CACHE/gomod GOCACHE=$CACHE/gobuild
GOVERSION=$(go env GOVERSION 2>/dev/null) || { echo "tools.sh: the Go toolchain is missing: install Go >= 1.26 (https://go.dev/doc/install) and retry" >&2; exit 1; }
BIN=$CACHE/bin/$GOVERSION
SRC=$CACHE/src
mkdir -p "$BIN" "$SRC"

log() { printf '[tools] %s\n' "$*" >&2; }
# built WHAT T0: say how long a build took (T0: $SECONDS when it started).
built() { log "built $1 in $((SECONDS - $2)) s"; }

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

# locked NAME CMD...: run CMD holding NAME's lock. Builds may run at once (the two lanes of `build`, a
# head start in the background beside the `build` of the command that needs the tools): one builds a
# tool, the others wait for it and then find it built (every build step checks for its output first).
locked() {
  local name=$1; shift
  (
    exec {fd}>"$CACHE/.lock-$name"
    flock "$fd"
    "$@"
  )
}

# install_bin TMP DEST: move a freshly built binary into place atomically.
install_bin() { chmod +x "$1"; mv -f "$1" "$2"; }

build_kube() {
  local kv=$KUBE_VERSION sv="v0.${KUBE_VERSION#v1.}" minor
  minor=$(echo "$kv" | cut -d. -f2)
  local api=$BIN/kube-apiserver-$kv ctl=$BIN/kubectl-$kv
  if [ -x "$api" ] && [ -x "$ctl" ] && ls "$BIN"/etcd-* >/dev/null 2>&1; then return; fi
  log "building kube-apiserver, kubectl and etcd for $kv (cold: 15-25 min)"
  local dir kmod ev ldf p t0=$SECONDS
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
  built "kube-apiserver, kubectl and etcd $kv" "$t0"
}

# Dependencies a controller requires at a version the module proxy refuses, each replaced by the nearest
# served version with the same code. fluxcd/pkg/artifact v0.18.1 -> v0.18.2 (in fluxcd/pkg's history)
# changed only its go.mod; v0.18.3 (after that history) is taken to be the same (docs/test-ground.md).
declare -A SUBSTITUTES=(
  [source-controller-v1.9.5]="github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@v0.18.1"
)

# build_flux_controller NAME VERSION OUT: a Flux controller built from its Go module. Its go.mod replaces
# its API module with a local path (which `go install pkg@ver` refuses): a wrapper module takes the
# published API module instead and carries over the other replaces (go-digest with BLAKE3, kustomize pins),
# and any SUBSTITUTES of that controller.
build_flux_controller() {
  local name=$1 v=$2 out=$3
  local dir mod sub
  dir=$(wrapper "$name-$v")
  mod=$(modfile "github.com/fluxcd/$name@$v")
  while read -r old new; do
    (cd "$dir" && go mod edit -replace="$old=$new")
  done < <(go mod edit -json "$mod" | python3 -c 'import json,sys
for r in json.load(sys.stdin).get("Replace") or []:
    if r["New"].get("Version"): print(r["Old"]["Path"], r["New"]["Path"]+"@"+r["New"]["Version"])')
  for sub in ${SUBSTITUTES[$name-$v]:-}; do
    (cd "$dir" && go mod edit -replace="$sub")
  done
  (cd "$dir" && go get -tool "github.com/fluxcd/$name@$v")
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "-s -w" -o "$out.tmp" "github.com/fluxcd/$name") && install_bin "$out.tmp" "$out"
}

# unpack_vendored NAME VERSION: the directory of the vendored source archive NAME-VERSION (without the
# v), unpacked into the cache after its sha256 is checked.
unpack_vendored() { locked "unpack-$1-${2#v}" unpack_vendored_unlocked "$@"; }
unpack_vendored_unlocked() {
  local key=$1-${2#v} tgz dir
  tgz=$VENDOR/$key.tar.gz dir=$SRC/vendored/$key
  if [ ! -f "$dir/.unpacked" ]; then
    [ -f "$tgz" ] || { echo "tools.sh: $tgz is missing: the source archives the module proxy does not serve live in ../shared/vendor/ beside the repository (or set COZYHR_VENDOR)" >&2; exit 1; }
    local sum
    sum=$(sha256sum "$tgz" | cut -d' ' -f1)
    [ "$sum" = "${VENDOR_SHA256[$key]}" ] || { echo "tools.sh: $tgz has sha256 $sum, not the pinned ${VENDOR_SHA256[$key]}: refusing to build it" >&2; exit 1; }
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    tar -xzf "$tgz" -C "$dir.tmp"
    [ -d "$dir.tmp/$key" ] || { echo "tools.sh: $tgz does not unpack to $key/" >&2; exit 1; }
    mv "$dir.tmp/$key" "$dir"; rmdir "$dir.tmp"
    touch "$dir/.unpacked"
  fi
  echo "$dir"
}

# build_vendored NAME VERSION PACKAGE OUT: a controller built inside its unpacked source archive, with
# the module's own go.mod and go.sum (their replaces apply as they are).
build_vendored() {
  local dir
  dir=$(unpack_vendored "$1" "$2")
  (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$4.tmp" "$3") && install_bin "$4.tmp" "$4"
}

# vendored NAME VERSION: true when the proxy does not serve it and it is built from ../shared/vendor.
vendored() { [ -n "${VENDOR_SHA256[$1-${2#v}]:-}" ]; }

build_helm_controller() { # VERSION
  local v=$1 out=$BIN/helm-controller-$1 t0=$SECONDS
  [ -x "$out" ] && return
  if vendored helm-controller "$v"; then
    log "building helm-controller $v from $VENDOR/helm-controller-${v#v}.tar.gz (cold: 8-12 min)"
    build_vendored helm-controller "$v" . "$out"
  else
    log "building helm-controller $v (cold: 8-12 min)"
    build_flux_controller helm-controller "$v" "$out"
  fi
  built "helm-controller $v" "$t0"
}

build_source_controller() { # VERSION
  local v=$1 out=$BIN/source-controller-$1 t0=$SECONDS
  [ -x "$out" ] && return
  log "building source-controller $v (cold: 3-6 min)"
  build_flux_controller source-controller "$v" "$out"
  built "source-controller $v" "$t0"
}

# kustomize-controller, which reconciles the fleet repository fixtures' Kustomizations.
build_kustomize_controller() { # VERSION
  local v=$1 out=$BIN/kustomize-controller-$1 t0=$SECONDS
  [ -x "$out" ] && return
  log "building kustomize-controller $v (cold: 3-6 min)"
  build_flux_controller kustomize-controller "$v" "$out"
  built "kustomize-controller $v" "$t0"
}

# source-watcher (ArtifactGenerator): only from ../shared/vendor, the proxy serves no version of it.
build_source_watcher() { # VERSION
  local v=$1 out=$BIN/source-watcher-$1 t0=$SECONDS
  [ -x "$out" ] && return
  log "building source-watcher $v from $VENDOR/source-watcher-${v#v}.tar.gz (cold: 5-16 min)"
  build_vendored source-watcher "$v" ./cmd "$out"
  built "source-watcher $v" "$t0"
}

# go_install NAME VERSION PACKAGE WHAT COLD: the binary NAME of a Go module's PACKAGE at VERSION, installed
# as $BIN/NAME-VERSION (COLD: how long a cold build takes, for the log line).
go_install() {
  local name=$1 v=$2 pkg=$3 what=$4 cold=$5 out=$BIN/$1-$2 t0=$SECONDS
  [ -x "$out" ] && return
  log "building $what $v (cold: $cold)"
  GOBIN=$BIN/$name-$v.tmp go install -trimpath -ldflags "-s -w" "$pkg@$v"
  install_bin "$BIN/$name-$v.tmp/$name" "$out"; rmdir "$BIN/$name-$v.tmp"
  built "$what $v" "$t0"
}

# The OCI registry charts are pushed to for OCIRepository sources: distribution's registry.
build_registry() {
  go_install registry "$REGISTRY_VERSION" github.com/distribution/distribution/v3/cmd/registry "the OCI registry (distribution)" "2-4 min"
}

build_helm() { # MAJOR VERSION
  local major=$1 v=$2 out=$BIN/helm-$2/helm t0=$SECONDS
  [ -x "$out" ] && return
  log "building helm $v (cold: 4-8 min)"
  mkdir -p "$BIN/helm-$v"
  GOBIN=$BIN/helm-$v.tmp go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/$major/internal/version.version=$v" "helm.sh/helm/$major/cmd/helm@$v"
  install_bin "$BIN/helm-$v.tmp/helm" "$out"; rmdir "$BIN/helm-$v.tmp"
  built "helm $v" "$t0"
}

# build_sdk_helm VERSION: Helm 4 at the SDK version a helm-controller embeds, unstamped as the SDK inside
# helm-controller is: its version is the source's own `vMAJOR.MINOR` (what `.Capabilities.HelmVersion`
# says under helm-controller), so charts render exactly as there. Shares build_helm's compiled packages.
build_sdk_helm() {
  local v=$1 out=$BIN/helm-sdk-$1/helm t0=$SECONDS
  [ -x "$out" ] && return
  log "building helm $v as helm-controller embeds it (unstamped)"
  mkdir -p "$BIN/helm-sdk-$v"
  GOBIN=$BIN/helm-sdk-$v.tmp go install -trimpath -ldflags "-s -w" "helm.sh/helm/v4/cmd/helm@$v"
  install_bin "$BIN/helm-sdk-$v.tmp/helm" "$out"; rmdir "$BIN/helm-sdk-$v.tmp"
  built "helm $v (unstamped)" "$t0"
}

build_krew() {
  local v=$KREW_VERSION out=$BIN/krew-$KREW_VERSION t0=$SECONDS
  [ -x "$out" ] && return
  log "building krew $v (cold: ~1 min)"
  local dir
  dir=$(wrapper "krew-$v")
  # krew pins reflect2 v1.0.1, which crashes on Go >= 1.18 map iteration.
  (cd "$dir" && go get -tool "sigs.k8s.io/krew/cmd/krew@$v" github.com/modern-go/reflect2@v1.0.2)
  (cd "$dir" && go build -trimpath -mod=mod -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$v" -o "$out.tmp" sigs.k8s.io/krew/cmd/krew) && install_bin "$out.tmp" "$out"
  built "krew $v" "$t0"
}

# The flux CLI, for the test of `flux plugin install` and `flux cozyhr`. Built from a copy of its module:
# its go.mod has a replace (which `go install pkg@ver` refuses), and cmd/flux embeds install manifests
# (manifests/*.yaml) that Flux's release build generates with kustomize from GitHub downloads and the
# module does not carry. A placeholder stands in for them, so this flux cannot `install` or `bootstrap`
# (nothing here uses them); every other command is the released code.
build_flux() { # VERSION
  local v=$1 out=$BIN/flux-$1 t0=$SECONDS
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
  built "the flux CLI $v" "$t0"
}

# oras, which pushes the Helm plugin's OCI artifact (scripts/release.sh --push; Helm has no command that
# pushes a plugin), for the test of `helm plugin install oci://`.
build_oras() {
  go_install oras "$ORAS_VERSION" oras.land/oras/cmd/oras oras "~1 min"
}

# kustomize, which a fleet review prefers to kubectl's embedded copy (src/fleet/kustomizer.rs).
build_kustomize() {
  go_install kustomize "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5 kustomize "~35 s"
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

# crds_dir SET: where that set's CRDs are collected.
crds_dir() { echo "$CACHE/crds/flux-$1-$HC_V-$SC_V-$SW_V${KC_V:+-$KC_V}"; }

# collect_crds SET (after flux_set SET): the HelmRelease CRD of that helm-controller (its module, or its
# source archive's config/crd/bases), the source kinds of that source-controller, and the
# ArtifactGenerator CRD of that source-watcher.
collect_crds() {
  local out
  out=$(crds_dir "$1")
  [ -f "$out/.done" ] && return
  mkdir -p "$out"
  local hc sc sw k
  if vendored helm-controller "$HC_V"; then hc=$(unpack_vendored helm-controller "$HC_V"); else hc=$(moddir "github.com/fluxcd/helm-controller@$HC_V"); fi
  sc=$(moddir "github.com/fluxcd/source-controller@$SC_V")
  sw=$(unpack_vendored source-watcher "$SW_V")
  cp "$hc/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml" "$out/"
  for k in externalartifacts helmcharts ocirepositories helmrepositories gitrepositories buckets; do
    cp "$sc/config/crd/bases/source.toolkit.fluxcd.io_$k.yaml" "$out/"
  done
  cp "$sw/config/crd/bases/source.extensions.fluxcd.io_artifactgenerators.yaml" "$out/"
  if [ -n "$KC_V" ]; then
    local kc
    kc=$(moddir "github.com/fluxcd/kustomize-controller@$KC_V")
    cp "$kc/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml" "$out/"
  fi
  chmod 0644 "$out"/*.yaml
  touch "$out/.done"
}

# build_flux_set SET: everything of one Flux set.
build_flux_set() {
  flux_set "$1"
  locked "crds-$1" collect_crds "$1"
  locked "helm-controller-$HC_V" build_helm_controller "$HC_V"
  locked "source-controller-$SC_V" build_source_controller "$SC_V"
  locked "source-watcher-$SW_V" build_source_watcher "$SW_V"
  [ -z "$KC_V" ] || locked "kustomize-controller-$KC_V" build_kustomize_controller "$KC_V"
  locked "helm-sdk-$HC_HELM_V" build_sdk_helm "$HC_HELM_V"
  locked "flux-$FLUX_RELEASE" build_flux "$FLUX_RELEASE"
}

# The two lanes `build` runs side by side: a Go build is not busy on both cores all the time (module
# downloads, the single-threaded link of each binary), so the other lane's compile fills the gaps.
# control_plane_lane: kube-apiserver, kubectl, etcd, the OCI registry, oras, the k9s files, the venv.
control_plane_lane() {
  locked kube build_kube
  locked registry build_registry
  locked oras build_oras
  locked "kustomize-$KUSTOMIZE_VERSION" build_kustomize
  locked k9s fetch_k9s
  locked venv build_venv
}
# helm_lane SET: krew, Helm 3 and 4, and everything of the first Flux set.
helm_lane() {
  locked krew build_krew
  locked "helm-$HELM3_VERSION" build_helm v3 "$HELM3_VERSION"
  locked "helm-$HELM4_VERSION" build_helm v4 "$HELM4_VERSION"
  build_flux_set "$1"
}

# kill_tree PID: stop a lane and the go commands under it (on an early exit of the other lane).
kill_tree() {
  local c
  for c in $(pgrep -P "$1" || true); do kill_tree "$c"; done
  kill -TERM "$1" 2>/dev/null || true
}

# print_env SET: the `export` lines for that Flux set; fails (saying what is missing) if anything is not built.
print_env() {
  flux_set "$1"
  local ev
  ev=$(cat "$BIN/etcd-for-kube-$KUBE_VERSION" 2>/dev/null) || { echo "tools.sh: the control-plane binaries are not built yet: run scripts/tools.sh build" >&2; return 1; }
  local -A t=(
    [ETCD]=$BIN/etcd-$ev
    [KUBE_APISERVER]=$BIN/kube-apiserver-$KUBE_VERSION
    [KUBECTL]=$BIN/kubectl-$KUBE_VERSION
    [HELM_CONTROLLER]=$BIN/helm-controller-$HC_V
    [SOURCE_CONTROLLER]=$BIN/source-controller-$SC_V
    [SOURCE_WATCHER]=$BIN/source-watcher-$SW_V
    [HELM_CONTROLLER_HELM]=$BIN/helm-sdk-$HC_HELM_V/helm
    [REGISTRY]=$BIN/registry-$REGISTRY_VERSION
    [HELM3]=$BIN/helm-$HELM3_VERSION/helm
    [HELM4]=$BIN/helm-$HELM4_VERSION/helm
    [KREW]=$BIN/krew-$KREW_VERSION
    [FLUX]=$BIN/flux-$FLUX_RELEASE
    [ORAS]=$BIN/oras-$ORAS_VERSION
    [KUSTOMIZE]=$BIN/kustomize-$KUSTOMIZE_VERSION
    [COZYHR_PYTHON]=$(venv_dir)/bin/python
  )
  local k crds
  for k in "${!t[@]}"; do
    [ -x "${t[$k]}" ] || { echo "tools.sh: ${t[$k]} is missing: run scripts/tools.sh build --flux $1" >&2; return 1; }
  done
  crds=$(crds_dir "$1")
  [ -f "$crds/.done" ] || { echo "tools.sh: the CRDs of Flux $1 are not collected yet: run scripts/tools.sh build --flux $1" >&2; return 1; }
  local k9s=$GOMODCACHE/github.com/derailed/k9s@$K9S_VERSION
  [ -f "$k9s/internal/config/json/schemas/plugins.json" ] || { echo "tools.sh: the k9s module ($K9S_VERSION) is not downloaded: run scripts/tools.sh build" >&2; return 1; }
  [ -z "$KC_V" ] || t[KUSTOMIZE_CONTROLLER]=$BIN/kustomize-controller-$KC_V
  [ -z "$KC_V" ] || [ -x "${t[KUSTOMIZE_CONTROLLER]}" ] || { echo "tools.sh: ${t[KUSTOMIZE_CONTROLLER]} is missing: run scripts/tools.sh build --flux $1" >&2; return 1; }
  for k in ETCD KUBE_APISERVER KUBECTL HELM_CONTROLLER SOURCE_CONTROLLER SOURCE_WATCHER REGISTRY HELM3 HELM4 KREW FLUX ORAS KUSTOMIZE COZYHR_PYTHON; do printf 'export %s=%q\n' "$k" "${t[$k]}"; done
  # kustomize-controller only where its version is served (the 2.9 set): unset otherwise, so the
  # fleet suites say what to do instead of starting a cluster without it.
  if [ -n "$KC_V" ]; then
    printf 'export KUSTOMIZE_CONTROLLER=%q\n' "${t[KUSTOMIZE_CONTROLLER]}"
    printf 'export KUSTOMIZE_CONTROLLER_VERSION=%q\n' "$KC_V"
  else
    printf 'unset KUSTOMIZE_CONTROLLER KUSTOMIZE_CONTROLLER_VERSION\n'
  fi
  printf 'export FLUX_CRDS=%q\n' "$crds"
  printf 'export K9S_DIR=%q\n' "$k9s"
  # Which Flux: the set, the Flux release it stands for, and each controller's version.
  printf 'export COZYHR_FLUX=%q\n' "$1"
  printf 'export COZYHR_FLUX_VERSION=%q\n' "$FLUX_RELEASE"
  printf 'export HELM_CONTROLLER_VERSION=%q\n' "$HC_V"
  printf 'export SOURCE_CONTROLLER_VERSION=%q\n' "$SC_V"
  printf 'export SOURCE_WATCHER_VERSION=%q\n' "$SW_V"
  # The Helm 4 built at the Helm SDK version that helm-controller embeds (HELM4 is the user's newer one).
  printf 'export HELM_CONTROLLER_HELM=%q\n' "${t[HELM_CONTROLLER_HELM]}"
  printf 'export HELM_CONTROLLER_HELM_VERSION=%q\n' "$HC_HELM_V"
}

usage() { echo "usage: scripts/tools.sh build|env [--flux 2.8|2.9]" >&2; exit 1; }

cmd=${1:-}; [ $# -gt 0 ] && shift
SET=
while [ $# -gt 0 ]; do
  case $1 in
    --flux) [ $# -ge 2 ] || usage; SET=$2; shift 2 ;;
    --flux=*) SET=${1#--flux=}; shift ;;
    *) echo "tools.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -z "$SET" ] || flux_set "$SET" # reject an unknown set before anything runs

case $cmd in
  build)
    # `build` alone builds every Flux set (CI runs both); `build --flux V` only that one.
    if [ -n "$SET" ]; then sets=("$SET"); else sets=("${FLUX_SETS[@]}"); fi
    # Everything there already: no need to wait for another build's lock.
    all=1
    for s in "${sets[@]}"; do print_env "$s" >/dev/null 2>&1 || { all=0; break; }; done
    if [ "$all" = 0 ]; then
      control_plane_lane & lane=$!
      trap 'kill_tree "$lane"' EXIT
      helm_lane "${sets[0]}"
      wait "$lane"
      trap - EXIT
      # The other sets after the first is whole: the first is what a cluster needs first.
      for s in "${sets[@]:1}"; do build_flux_set "$s"; done
    fi
    print_env "${SET:-${FLUX_SETS[0]}}" ;;
  env) print_env "${SET:-${FLUX_SETS[0]}}" ;;
  *) usage ;;
esac
