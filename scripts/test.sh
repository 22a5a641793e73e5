#!/usr/bin/env bash
# The test command: build everything, run the unit tests, build the docs (warnings fail), bring up a fresh
# local control plane (real etcd, kube-apiserver, Flux 2.9's helm-controller, source-controller,
# source-watcher and kustomize-controller; tools built from Go modules and cached by version), run the end-to-end tests against it,
# then bring it up again with Flux 2.8 and run the suites of FLUX_28_SUITES against that, and bring it
# down again on every exit path.
#
#   scripts/test.sh            everything
#   scripts/test.sh -- ARGS    extra arguments for the end-to-end test binary (e.g. a test name filter)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

for tool in cargo go python3 openssl curl flock setsid git; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "test.sh: '$tool' is missing: install it (cargo: https://rustup.rs; go >= 1.26; Debian: apt-get install openssl curl util-linux python3 git)" >&2
    exit 1
  }
done

# Debian packages some tests run and a machine may lack: gpg (signed Helm archives, signed_helm_plugin.rs)
# and less (the pager of the k9s plugin file, k9s_plugin.rs). Installed here when root with apt-get.
missing=()
command -v gpg >/dev/null 2>&1 || missing+=(gnupg)
command -v less >/dev/null 2>&1 || missing+=(less)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${missing[*]} from Debian's packages" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  else
    echo "test.sh: ${missing[*]} missing: install them (Debian: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

# The suites that run a second time, on a cluster with Flux 2.8 (as Cozystack runs it), after the whole
# end-to-end run on Flux 2.9: each is `cargo test -p cozyhr-e2e --test NAME`.
FLUX_28_SUITES="flux_as_the_cluster_runs_it test_hooks remediation chart_repositories"

# A run state of its own, so the tests never touch a cluster a developer keeps up for the demo.
CACHE=${COZYHR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cozyhr-e2e}
export COZYHR_RUN=${COZYHR_TEST_RUN:-$CACHE/run-test-$$}
# A head start: the tools (both Flux sets, the first one first) build in the background while cargo
# builds and the unit tests run, and the second set while the end-to-end tests run on the first;
# `cluster.sh up` waits for the tools it needs (tools.sh builds each under a lock of its own) and builds
# whatever the head start failed to, with its error. A warm cache makes it a no-op.
setsid scripts/tools.sh build >/dev/null &
head_start=$!
cleanup() {
  kill -TERM -- "-$head_start" 2>/dev/null || true
  scripts/cluster.sh down >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n==> %s\n' "$*" >&2; }

step "scripts/build.sh --one-profile (both plugins, optimised as they ship)"
scripts/build.sh --one-profile >/dev/null

step "unit tests"
cargo test --locked

step "docs (rustdoc; a broken link fails)"
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps --workspace -q

step "local control plane (scripts/cluster.sh up)"
t0=$SECONDS
scripts/cluster.sh up --tenant
echo "control plane ready in $((SECONDS - t0))s" >&2
eval "$(scripts/cluster.sh env)"

step "end-to-end tests"
shift_args=()
if [ "${1:-}" = "--" ]; then shift; shift_args=("$@"); fi
cargo test --locked -p cozyhr-e2e -- "${shift_args[@]}"

step "local control plane with Flux 2.8 (scripts/cluster.sh up --tenant --flux 2.8)"
scripts/cluster.sh down
t0=$SECONDS
scripts/cluster.sh up --tenant --flux 2.8
echo "control plane (Flux 2.8) ready in $((SECONDS - t0))s" >&2
eval "$(scripts/cluster.sh env)"

step "end-to-end tests on Flux 2.8 ($FLUX_28_SUITES)"
suites=()
for s in $FLUX_28_SUITES; do suites+=(--test "$s"); done
cargo test --locked -p cozyhr-e2e "${suites[@]}"
scripts/cluster.sh down
