#!/bin/sh
# Helm plugin install/update hook: put the helm-cozy binary for this machine at $HELM_PLUGIN_DIR/bin.
#  1. A release archive already carries bin/helm-cozy: nothing to do.
#  2. A source checkout (Cargo.toml present): build it with cargo (a no-op when already built).
#  3. Otherwise: say what is missing and fail.
set -eu
dir=${HELM_PLUGIN_DIR:?HELM_PLUGIN_DIR is not set: run this through helm plugin install}
if [ -x "$dir/bin/helm-cozy" ]; then
  exit 0
fi
if [ -f "$dir/Cargo.toml" ] && [ -d "$dir/helm-cozy" ]; then
  command -v cargo >/dev/null 2>&1 || {
    echo "helm-cozy: this is a source checkout and cargo is not installed: install Rust (https://rustup.rs) and run helm plugin update cozy" >&2
    exit 1
  }
  echo "helm-cozy: building from source with cargo (first time: a few minutes)" >&2
  (cd "$dir" && cargo build --release --locked -p helm-cozy >&2)
  mkdir -p "$dir/bin"
  cp "$dir/target/release/helm-cozy" "$dir/bin/helm-cozy.tmp"
  mv "$dir/bin/helm-cozy.tmp" "$dir/bin/helm-cozy"
  exit 0
fi
echo "helm-cozy: no helm-cozy binary for $(uname -s)/$(uname -m) in $dir/bin and no source to build it from: install the release archive for this platform" >&2
exit 1
