#!/bin/sh
# Helm plugin install/update hook (Helm 3 and Helm 4 run it with `sh -c` and $HELM_PLUGIN_DIR set): make
# sure the helm-cozy that plugin.yaml runs is a binary that runs on this machine.
#  1. A source checkout (Cargo.toml and helm-cozy/ present; `helm plugin install <dir or git URL>`):
#     build it with cargo into bin/helm-cozy, every time, so that `helm plugin update cozy` picks up new
#     sources (a no-op when nothing changed).
#  2. A release archive (scripts/release.sh), in the layout Helm installed it in:
#     - helm-cozy beside plugin.yaml: the plugin directory of a platform archive, helm-cozy-VERSION-OS-ARCH
#       (`helm plugin install FILE` on Helm 4, or that directory extracted and installed);
#     - helm-cozy/helm-cozy: the whole platform archive (`helm plugin install URL`, Helm 3 and Helm 4);
#     - OS-ARCH/helm-cozy: the every-platform archive helm-cozy-VERSION.tgz (`helm plugin install
#       oci://…`, or that file, on Helm 4).
#     Check that it runs here (an archive for another OS/arch does not).
#  3. Otherwise: say what is missing for which platform, and fail.
set -eu

dir=${HELM_PLUGIN_DIR:?HELM_PLUGIN_DIR is not set: this hook is run by helm plugin install/update}

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case $(uname -m) in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
platform=$os/$arch

source_checkout='' whole_archive=''
if [ -f "$dir/Cargo.toml" ] && [ -d "$dir/helm-cozy" ]; then
  source_checkout=1 bin=$dir/bin/helm-cozy
elif [ -f "$dir/helm-cozy" ]; then
  bin=$dir/helm-cozy
elif [ -d "$dir/helm-cozy" ]; then
  whole_archive=1 bin=$dir/helm-cozy/helm-cozy
else
  bin=$dir/$os-$arch/helm-cozy
fi

version=$(sed -n 's/^version:[[:space:]]*"\{0,1\}\([^"[:space:]]*\)"\{0,1\}.*/\1/p' "$dir/plugin.yaml" 2>/dev/null | head -n 1)
archive=helm-cozy-${version:-VERSION}-$os-$arch.tar.gz
url=https://github.com/cozystack/cozyhr/releases/download/v${version:-VERSION}/$archive

if [ -n "$source_checkout" ]; then
  command -v cargo >/dev/null 2>&1 || {
    echo "helm-cozy: $dir is a source checkout and cargo is not installed: install Rust (https://rustup.rs), then run: helm plugin update cozy (or install the release archive for $platform: $url)" >&2
    exit 1
  }
  echo "helm-cozy: building from source with cargo in $dir (the first build takes a few minutes)" >&2
  # The same build as scripts/build.sh's of helm-cozy, so the two share every artifact.
  (cd "$dir" && cargo build --release --locked --bin helm-cozy >&2) || {
    echo "helm-cozy: cargo build failed in $dir (see above)" >&2
    exit 1
  }
  target=${CARGO_TARGET_DIR:-$dir/target}
  mkdir -p "$dir/bin"
  cp "$target/release/helm-cozy" "$bin.tmp"
  mv -f "$bin.tmp" "$bin"
fi

# Helm 3 extracts an archive it installs from a URL into $HELM_CACHE_HOME/plugins/<the URL as a name>
# and keeps that directory; installing the same URL again (after an uninstall) extracts into it again
# and fails on the archive's helm-cozy/ directory ("mkdir …: file exists"). Nothing reads it after the
# install: remove the extraction of this very archive (its root plugin.yaml is this one, byte for byte).
# Here rather than in a delete hook: Helm 3 runs that after removing the plugin's directory, this script
# with it.
if [ -n "$whole_archive" ] && [ -n "${HELM_CACHE_HOME:-}" ] && [ -d "$HELM_CACHE_HOME/plugins" ]; then
  self=$(cd "$dir" && pwd -P)
  for d in "$HELM_CACHE_HOME"/plugins/*; do
    [ -d "$d/helm-cozy" ] && [ ! -L "$d" ] && [ ! -e "$d/.git" ] || continue
    cmp -s "$d/plugin.yaml" "$dir/plugin.yaml" && [ "$(cd "$d" && pwd -P)" != "$self" ] || continue
    rm -rf "$d"
  done
fi

if [ ! -f "$bin" ]; then
  have=''
  for b in "$dir"/*-*/helm-cozy; do
    [ -f "$b" ] || continue
    p=$(basename "$(dirname "$b")")
    have="$have ${p%%-*}/${p#*-}"
  done
  if [ -n "$have" ]; then
    echo "helm-cozy: no helm-cozy binary for $platform in $dir (it has:$have). Run: helm plugin uninstall cozy; then install the archive for this platform: helm plugin install $url" >&2
  else
    echo "helm-cozy: no helm-cozy binary for $platform in $dir: this is neither a release archive for $platform nor a source checkout. Run: helm plugin uninstall cozy; then install the archive for this platform: helm plugin install $url" >&2
  fi
  exit 1
fi
if ! out=$("$bin" version --client 2>&1); then
  echo "helm-cozy: $bin does not run on this machine ($platform): ${out:-exec failed}. The archive is for another platform: run helm plugin uninstall cozy; then install the one for $platform: helm plugin install $url" >&2
  exit 1
fi
echo "helm-cozy: ready: $out ($platform)" >&2
