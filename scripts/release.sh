#!/usr/bin/env bash
# Release packaging: build kubectl-cozyhr and helm-cozy for every platform this machine can build,
# pack one archive per tool and platform, write SHA256SUMS, and fill krew-manifest.yaml from them.
#
#   scripts/release.sh VERSION          e.g. scripts/release.sh 0.1.0
#
# Output (in $DIST, default dist/):
#   kubectl-cozyhr_VERSION_OS_ARCH.tar.gz   LICENSE, kubectl-cozyhr (+ kubectl_complete-cozyhr) at the root:
#                                           krew installs it (`bin: kubectl-cozyhr`)
#   helm-cozy-VERSION-OS-ARCH.tar.gz        plugin.yaml, helm-cozy, plugin-hook.sh, completion.yaml and
#                                           LICENSE, flat at the archive root:
#                                           `helm plugin install <URL>` on Helm 3 and Helm 4
#   SHA256SUMS                              sha256sum format, one line per archive
# and krew-manifest.yaml (repository root, or $KREW_MANIFEST): uri + lowercase sha256 per platform.
#
# Why the Helm archive is named NAME-VERSION-OS-ARCH: Helm (3 and 4) names the plugin directory after the
# URL's file name minus `-<digits>.…`, so it lands in $HELM_PLUGINS/helm-cozy whatever the version: a second
# install then fails with "plugin already exists" instead of leaving two plugins called "cozy" (which makes
# Helm 3 load no plugin at all). The archive is flat (see the packing step below for why).
#
# Platforms: linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 (override with TARGETS="linux/amd64 ...").
# A platform is built when its Rust target is installed (`rustup target add TRIPLE`) and a linker for it
# is present; linux/arm64 on an x86_64 Linux host uses Debian's gcc-aarch64-linux-gnu. darwin needs the
# macOS SDK: run `scripts/release.sh VERSION` on a Mac (both darwin targets build there; add them with
# `rustup target add x86_64-apple-darwin aarch64-apple-darwin`), copy its dist/*darwin* archives into
# this dist/, and rerun here: archives already in $DIST for a platform this machine cannot build are
# kept and listed in SHA256SUMS and the krew manifest. A platform with no archive is left out of the
# manifest, with a warning.
#
# Environment:
#   DIST=DIR              output directory (default: dist/ in the repository)
#   KREW_MANIFEST=FILE    where to write the krew manifest (default: krew-manifest.yaml in the repository)
#   BASE_URL=URL          where the archives will be downloadable (default: the GitHub release of vVERSION)
#   TARGETS="os/arch ..." platforms to build
#   COZYHR_PREBUILT=DIR   package kubectl-cozyhr and helm-cozy from DIR for this machine's platform
#                         instead of building them (the end-to-end tests use the binaries they test)
#
# The version: binaries print the version cozyhr::VERSION was compiled with. When VERSION differs from the
# workspace version in Cargo.toml it is passed as COZYHR_VERSION at build time; the script checks what
# the built binaries print and fails when it is not VERSION.
#
# Reproducible: archives have sorted entries, fixed owner, mode and mtime (SOURCE_DATE_EPOCH, default the
# last commit's time) and gzip without name or timestamp; release builds remap local paths.
set -euo pipefail
shopt -s inherit_errexit

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

die() { echo "release.sh: $*" >&2; exit 1; }
note() { echo "release.sh: $*" >&2; }

[ $# -eq 1 ] || die "usage: scripts/release.sh VERSION (for example 0.1.0)"
VERSION=${1#v}
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
  die "VERSION must be semver like 0.1.0 (got '$1')"

DIST=${DIST:-$repo/dist}
KREW_MANIFEST=${KREW_MANIFEST:-$repo/krew-manifest.yaml}
BASE_URL=${BASE_URL:-https://github.com/cozystack/cozyhr/releases/download/v$VERSION}
TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)

for tool in cargo rustc tar gzip sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is missing (cargo/rustc: https://rustup.rs; tar, gzip, sha256sum: coreutils/tar/gzip)"
done
tar --version 2>/dev/null | grep -q 'GNU tar' || die "GNU tar is needed for reproducible archives (macOS: brew install gnu-tar, and put gtar first on PATH as tar)"

# The workspace version ([workspace.package] version in Cargo.toml).
cargo_version=$(awk '/^\[workspace.package\]/{p=1;next} /^\[/{p=0} p && /^version *=/{gsub(/.*= *"|".*/,"");print;exit}' Cargo.toml)
[ -n "$cargo_version" ] || die "cannot read [workspace.package] version from Cargo.toml"
if [ "$VERSION" != "$cargo_version" ]; then
  export COZYHR_VERSION=$VERSION
  note "VERSION $VERSION differs from Cargo.toml ($cargo_version): building with COZYHR_VERSION=$VERSION"
fi

SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH

host=$(rustc -vV | sed -n 's/^host: //p')
installed_targets=$(rustup target list --installed 2>/dev/null || true)

triple_of() {
  case $1 in
    linux/amd64) echo x86_64-unknown-linux-gnu ;;
    linux/arm64) echo aarch64-unknown-linux-gnu ;;
    darwin/amd64) echo x86_64-apple-darwin ;;
    darwin/arm64) echo aarch64-apple-darwin ;;
    *) die "unknown platform '$1' (known: linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)" ;;
  esac
}

# can_build PLATFORM TRIPLE: 0 when this machine can build it; otherwise prints why on stdout.
can_build() {
  local triple=$2
  [ "$triple" = "$host" ] && return 0
  if ! grep -qx "$triple" <<<"$installed_targets"; then
    echo "the Rust standard library for $triple is not installed (rustup target add $triple)"
    return 1
  fi
  case "$host:$triple" in
    *-apple-darwin:*-apple-darwin) return 0 ;;
    *:*-apple-darwin)
      echo "darwin binaries need the macOS SDK: build them on a Mac with scripts/release.sh $VERSION"
      return 1 ;;
    x86_64-unknown-linux-gnu:aarch64-unknown-linux-gnu)
      command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && return 0
      echo "no aarch64 linker (Debian/Ubuntu: apt-get install gcc-aarch64-linux-gnu)"
      return 1 ;;
  esac
  echo "no cross-build recipe from $host to $triple"
  return 1
}

# build TRIPLE: the shipped binaries in target/dist/TRIPLE/shipped (a target dir of its own, so path
# remapping does not invalidate the developer build in target/release).
build() {
  local triple=$1 upper
  upper=$(echo "$triple" | tr 'a-z-' 'A-Z_')
  local flags="--remap-path-prefix=$repo=/cozyhr --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo"
  if [ "$triple" = aarch64-unknown-linux-gnu ] && [ "$host" != "$triple" ]; then
    export "CARGO_TARGET_${upper}_LINKER=aarch64-linux-gnu-gcc" "CC_${triple//-/_}=aarch64-linux-gnu-gcc"
  fi
  note "building $triple"
  CARGO_TARGET_DIR=$repo/target/dist RUSTFLAGS="${RUSTFLAGS:-} $flags" \
    "$repo/scripts/build.sh" --target "$triple" || die "the build for $triple failed (see above)"
}

# tarball OUT STAGE ENTRY...: a reproducible .tar.gz of the given entries (in that order) of STAGE.
tarball() {
  local out=$1 stage=$2
  shift 2
  tar -C "$stage" --no-recursion --format=ustar --owner=0 --group=0 --numeric-owner \
    --mtime="@$SOURCE_DATE_EPOCH" -cf - "$@" | gzip -9n >"$out.tmp"
  mv "$out.tmp" "$out"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

built=()
for platform in $TARGETS; do
  os=${platform%/*} arch=${platform#*/}
  triple=$(triple_of "$platform")
  krew_archive=kubectl-cozyhr_${VERSION}_${os}_${arch}.tar.gz
  helm_archive=helm-cozy-${VERSION}-${os}-${arch}.tar.gz

  if [ -n "${COZYHR_PREBUILT:-}" ]; then
    if [ "$triple" != "$host" ]; then
      continue
    fi
    bindir=$COZYHR_PREBUILT
    [ -x "$bindir/kubectl-cozyhr" ] && [ -x "$bindir/helm-cozy" ] || die "COZYHR_PREBUILT=$bindir lacks kubectl-cozyhr or helm-cozy"
  elif why=$(can_build "$platform" "$triple"); then
    bindir=$(build "$triple")
  else
    if [ -f "$DIST/$krew_archive" ] && [ -f "$DIST/$helm_archive" ]; then
      note "$platform: keeping the archives already in $DIST (built elsewhere): $why"
    else
      note "WARNING: skipping $platform: $why"
    fi
    continue
  fi

  # What the binaries say they are must be the release version (only checkable on this platform).
  if [ "$triple" = "$host" ]; then
    for b in kubectl-cozyhr helm-cozy; do
      got=$("$bindir/$b" version) || die "$bindir/$b version failed"
      [ "$got" = "$b $VERSION" ] || die "$bindir/$b prints '$got', not '$b $VERSION': release the Cargo.toml version ($cargo_version), or make cozyhr::VERSION read COZYHR_VERSION (option_env!) in src/lib.rs"
    done
  fi

  # kubectl-cozyhr for krew: flat, bin at the root.
  stage=$work/$platform/krew
  mkdir -p "$stage"
  install -m 0644 LICENSE "$stage/LICENSE"
  install -m 0755 "$bindir/kubectl-cozyhr" "$stage/kubectl-cozyhr"
  entries=(LICENSE kubectl-cozyhr)
  if [ -f kubectl_complete-cozyhr ]; then
    install -m 0755 kubectl_complete-cozyhr "$stage/kubectl_complete-cozyhr"
    entries+=(kubectl_complete-cozyhr)
  else
    note "WARNING: kubectl_complete-cozyhr is not in the repository root: the krew archive has no completion shim"
  fi
  tarball "$DIST/$krew_archive" "$stage" "${entries[@]}"

  # helm-cozy as a Helm plugin, flat: plugin.yaml, helm-cozy, plugin-hook.sh, completion.yaml, LICENSE,
  # all at the archive root and no directory entry. Helm 3 accepts only a root plugin.yaml over http,
  # creates a file's parent directory only from a directory entry, and extracts into a cache directory
  # that it keeps, where a second extraction (reinstall of the same URL) fails on "mkdir ...: file
  # exists" for every directory entry. So the archive's plugin.yaml points at the root files.
  stage=$work/$platform/helm
  mkdir -p "$stage"
  sed -e "s/^version:.*/version: $VERSION/" \
    -e 's|\$HELM_PLUGIN_DIR/bin/helm-cozy|$HELM_PLUGIN_DIR/helm-cozy|' \
    -e 's|\$HELM_PLUGIN_DIR/scripts/plugin-hook.sh|$HELM_PLUGIN_DIR/plugin-hook.sh|' plugin.yaml >"$stage/plugin.yaml"
  chmod 0644 "$stage/plugin.yaml"
  grep -qx "version: $VERSION" "$stage/plugin.yaml" || die "plugin.yaml has no top-level version line"
  grep -q 'command: \$HELM_PLUGIN_DIR/helm-cozy$' "$stage/plugin.yaml" || die "plugin.yaml: cannot point platformCommand at the archive's helm-cozy"
  [ "$(grep -c '\$HELM_PLUGIN_DIR/plugin-hook.sh$' "$stage/plugin.yaml")" = 2 ] || die "plugin.yaml: cannot point the install/update hooks at the archive's plugin-hook.sh"
  install -m 0644 completion.yaml "$stage/completion.yaml"
  install -m 0644 LICENSE "$stage/LICENSE"
  install -m 0755 scripts/plugin-hook.sh "$stage/plugin-hook.sh"
  install -m 0755 "$bindir/helm-cozy" "$stage/helm-cozy"
  tarball "$DIST/$helm_archive" "$stage" plugin.yaml helm-cozy plugin-hook.sh completion.yaml LICENSE

  built+=("$platform")
  note "$platform: $DIST/$krew_archive, $DIST/$helm_archive"
done

# SHA256SUMS over every archive of this version in DIST (including ones built elsewhere).
(
  cd "$DIST"
  shopt -s nullglob
  archives=(kubectl-cozyhr_"${VERSION}"_*.tar.gz helm-cozy-"${VERSION}"-*.tar.gz)
  [ ${#archives[@]} -gt 0 ] || die "no archives for $VERSION in $DIST"
  LC_ALL=C sha256sum "${archives[@]}" | LC_ALL=C sort -k2 >SHA256SUMS.tmp
  mv SHA256SUMS.tmp SHA256SUMS
)

# The krew manifest, generated whole so that it is always consistent with the archives.
sum_of() { awk -v f="$1" '$2 == f || $2 == "*"f {print $1}' "$DIST/SHA256SUMS"; }
if [ -f kubectl_complete-cozyhr ]; then
  shim_caveat="    Shell completion for \`kubectl cozyhr\` (kubectl >= 1.26) runs the executable
    kubectl_complete-cozyhr from your PATH, which krew cannot install (krew#812). It is
    in this plugin's directory; link it next to the krew-managed plugins:

      ln -sf \"\${KREW_ROOT:-\$HOME/.krew}/store/cozyhr/v$VERSION/kubectl_complete-cozyhr\" \\
        \"\${KREW_ROOT:-\$HOME/.krew}/bin/kubectl_complete-cozyhr\"

    Do it again after \`kubectl krew upgrade cozyhr\`: the path names the version."
else
  shim_caveat="    Shell completion: this release has no kubectl_complete-cozyhr, so \`kubectl cozyhr\`
    does not complete; \`source <(kubectl-cozyhr completion bash)\` completes kubectl-cozyhr."
fi
{
  cat <<EOF
# Generated by scripts/release.sh $VERSION from the archives in dist/ (see SHA256SUMS): do not edit by hand.
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: cozyhr
spec:
  version: v$VERSION
  homepage: https://github.com/cozystack/cozyhr
  shortDescription: Inspect and steer Flux HelmReleases
  description: |
    kubectl cozyhr lists, suspends, resumes and reconciles Flux HelmReleases and shows
    the status of one on a single screen: conditions, history, failure counters,
    dependsOn readiness, dependents and recent Events, the dependsOn graph around it
    (tree), and the drift helm-controller's drift detection sees (drift). It speaks
    Flux's reconcile-request protocol
    itself, so it needs neither the flux CLI nor anything installed in the cluster.
    Its companion Helm plugin, helm cozy, renders, diffs and applies a chart exactly
    as Flux's helm-controller would.
  caveats: |
$shim_caveat
  platforms:
EOF
  for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
    os=${platform%/*} arch=${platform#*/}
    f=kubectl-cozyhr_${VERSION}_${os}_${arch}.tar.gz
    sum=$(sum_of "$f")
    if [ -z "$sum" ]; then
      note "WARNING: krew-manifest.yaml has no $platform entry (no $f)"
      continue
    fi
    [[ $sum =~ ^[a-f0-9]{64}$ ]] || die "bad sha256 for $f: $sum"
    cat <<EOF
  - selector:
      matchLabels:
        os: $os
        arch: $arch
    uri: $BASE_URL/$f
    sha256: $sum
    bin: kubectl-cozyhr
EOF
  done
} >"$KREW_MANIFEST.tmp"
mv "$KREW_MANIFEST.tmp" "$KREW_MANIFEST"

note "built: ${built[*]:-nothing}; SHA256SUMS and $KREW_MANIFEST written"
cat "$DIST/SHA256SUMS"
