#!/usr/bin/env bash
# Builds both plugins as they ship (the `release` profile: fat LTO, built for size but for the YAML
# crates show and diff spend their time in, stripped; see Cargo.toml), and prints the directory that
# holds them (target/shipped, or $CARGO_TARGET_DIR/shipped; with --target TRIPLE, .../TRIPLE/shipped).
#
#   scripts/build.sh [--target TRIPLE] [--one-profile]
#
# --one-profile builds kubectl-cozyhr with the release profile too: one optimised build of the dependency
# tree instead of two (a cold build takes about 14 CPU-minutes less). The programs behave the same; only
# kubectl-cozyhr's size differs (by the YAML crates' opt-level). The demo and the tests use it; what ships
# (release.sh) and what measures size (bench-size.sh) do not.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target=()
kubectl_profile=release-kubectl
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ $# -ge 2 ] || { echo "build.sh: --target needs a triple" >&2; exit 1; }; target=(--target "$2"); shift 2 ;;
    --one-profile) kubectl_profile=release; shift ;;
    *) echo "build.sh: unexpected argument: $1; usage: scripts/build.sh [--target TRIPLE] [--one-profile]" >&2; exit 1 ;;
  esac
done

# The two programs; `cozyhr` is helm-cozy under another name (a link, below), not a third build.
# kubectl-cozyhr has a profile of its own (release-kubectl: no YAML crates built for speed; Cargo.toml).
cargo build --release --locked "${target[@]}" --bin helm-cozy >&2
cargo build --profile "$kubectl_profile" --locked "${target[@]}" --bin kubectl-cozyhr >&2

out=${CARGO_TARGET_DIR:-$repo/target}
if [ ${#target[@]} -gt 0 ]; then out=$out/${target[1]}; fi
mkdir -p "$out/shipped"
# Copies, not links: release.sh packages them and tests run them while cargo may rebuild the originals.
cp "$out/release/helm-cozy" "$out/shipped/helm-cozy.tmp" && mv "$out/shipped/helm-cozy.tmp" "$out/shipped/helm-cozy"
cp "$out/$kubectl_profile/kubectl-cozyhr" "$out/shipped/kubectl-cozyhr.tmp"
mv "$out/shipped/kubectl-cozyhr.tmp" "$out/shipped/kubectl-cozyhr"
# `cozyhr`: the Go cozyhr's command line (helm-cozy chooses it by the name it is run as).
ln -sfn helm-cozy "$out/shipped/cozyhr"
echo "$out/shipped"
