#!/usr/bin/env bash
# Builds both plugins as they ship (the `release` profile: fat LTO, built for size but for the YAML
# crates show and diff spend their time in, stripped; see Cargo.toml), and prints the directory that
# holds them (target/shipped, or $CARGO_TARGET_DIR/shipped; with --target TRIPLE, .../TRIPLE/shipped).
#
#   scripts/build.sh [--target TRIPLE]
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target=()
if [ "${1:-}" = "--target" ]; then target=(--target "$2"); shift 2; fi
[ $# -eq 0 ] || { echo "build.sh: unexpected arguments: $*; usage: scripts/build.sh [--target TRIPLE]" >&2; exit 1; }

# The two programs; `cozyhr` is helm-cozy under another name (a link, below), not a third build.
# kubectl-cozyhr has a profile of its own (release-kubectl: no YAML crates built for speed; Cargo.toml).
cargo build --release --locked "${target[@]}" --bin helm-cozy >&2
cargo build --profile release-kubectl --locked "${target[@]}" --bin kubectl-cozyhr >&2

out=${CARGO_TARGET_DIR:-$repo/target}
if [ ${#target[@]} -gt 0 ]; then out=$out/${target[1]}; fi
mkdir -p "$out/shipped"
# Copies, not links: release.sh packages them and tests run them while cargo may rebuild the originals.
cp "$out/release/helm-cozy" "$out/shipped/helm-cozy.tmp" && mv "$out/shipped/helm-cozy.tmp" "$out/shipped/helm-cozy"
cp "$out/release-kubectl/kubectl-cozyhr" "$out/shipped/kubectl-cozyhr.tmp"
mv "$out/shipped/kubectl-cozyhr.tmp" "$out/shipped/kubectl-cozyhr"
# `cozyhr`: the Go cozyhr's command line (helm-cozy chooses it by the name it is run as).
ln -sfn helm-cozy "$out/shipped/cozyhr"
echo "$out/shipped"
