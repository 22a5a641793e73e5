#!/usr/bin/env bash
# Release packaging: build kubectl-cozyhr and helm-cozy for every platform this machine can build,
# pack one archive per tool and platform, write SHA256SUMS, and fill krew-manifest.yaml from them;
# also the flux CLI's plugin catalog entry, a Homebrew formula, the Helm plugin for every platform in one
# archive (the OCI artifact), with --sign a .prov per Helm archive, and with --push that OCI artifact.
#
#   scripts/release.sh [--sign KEY] [--push oci://REGISTRY/PATH [--plain-http]] VERSION
#                                               e.g. scripts/release.sh 0.1.0
#
# Output (in $DIST, default dist/):
#   kubectl-cozyhr_VERSION_OS_ARCH.tar.gz   LICENSE, kubectl-cozyhr (+ kubectl_complete-cozyhr) at the root:
#                                           krew installs it (`bin: kubectl-cozyhr`)
#   helm-cozy-VERSION-OS-ARCH.tar.gz        the Helm plugin for one platform. helm-cozy/ is the plugin as Helm 4's
#                                           `helm plugin package` lays one out (a directory named as Helm 4
#                                           names the plugin after the file: plugin.yaml, helm-cozy, cozyhr,
#                                           plugin-hook.sh, completion.yaml, LICENSE); beside it, at the root,
#                                           plugin.yaml, completion.yaml and cozyhr for the installers that
#                                           read the root (plugin.yaml runs helm-cozy/helm-cozy). So it installs
#                                           with `helm plugin install URL` (Helm 3 and 4), `helm plugin install
#                                           FILE` (Helm 4) and from helm-cozy/ extracted (Helm 3 and 4)
#   helm-cozy-VERSION-OS-ARCH.tar.gz.prov   with --sign KEY: its provenance file, the format of Helm 4's
#                                           `helm plugin package --sign` (see sign_helm_archive below)
#   helm-cozy-VERSION.tgz                   the Helm plugin for every platform in DIST (Helm 4): helm-cozy/ with
#                                           plugin.yaml (a platformCommand per OS and arch), OS-ARCH/helm-cozy
#                                           per platform and the rest as above. The layer of the OCI artifact
#                                           (--push); `helm plugin install FILE` installs it too
#   helm-cozy-VERSION.tgz.prov              with --sign KEY: its provenance, the sum under both names Helm 4
#                                           looks for (this file's, and cozy-VERSION.tgz for an OCI install)
#   cozyhr-keyring.gpg                      with --sign KEY: KEY's public key ring, for
#                                           `helm plugin install URL --keyring cozyhr-keyring.gpg`
#   flux-cozyhr_VERSION_OS_ARCH.tar.gz      LICENSE and flux-cozyhr (kubectl-cozyhr under the name the flux
#                                           CLI runs plugins by) at the root: `flux plugin install cozyhr`
#   flux-cozyhr_VERSION_checksums.txt       sha256sum lines of the flux archives: the file the fluxcd/plugins
#                                           catalog's update job reads (BIN_VERSION_checksums.txt)
#   cozyhr.yaml                             the catalog's Plugin manifest (cli.fluxcd.io/v1beta1) for cozyhr
#   catalog.yaml                            a PluginCatalog listing only cozyhr: with cozyhr.yaml, DIST (or
#                                           the release's download URL) is itself a catalog for
#                                           FLUXCD_PLUGIN_CATALOG=BASE_URL/ flux plugin install cozyhr
#   cozyhr.rb                               a Homebrew formula for a tap: kubectl-cozyhr on PATH, the Helm
#                                           plugin in libexec, a caveat with its `helm plugin install` step
#   SHA256SUMS                              sha256sum format, one line per archive
# and krew-manifest.yaml (repository root, or $KREW_MANIFEST): uri + lowercase sha256 per platform.
#
# Why the Helm archive is named NAME-VERSION-OS-ARCH: Helm (3 and 4) names the plugin directory after the
# URL's file name minus `-<digits>.…`, so it lands in $HELM_PLUGINS/helm-cozy whatever the version: a second
# install then fails with "plugin already exists" instead of leaving two plugins called "cozy" (which makes
# Helm 3 load no plugin at all). Helm 4 installing a local archive looks for that same name as the
# archive's top directory, hence helm-cozy/ (see pack_helm_archive below for the root files).
# The flux names are the ones the flux CLI and its catalog expect: the Plugin's `bin` must start with
# `flux-`, the archive holds a file of that name, and the catalog's update job reads
# BIN_VERSION_OS_ARCH.tar.gz and BIN_VERSION_checksums.txt from a release.
#
# Platforms: linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 (override with TARGETS="linux/amd64 ...").
# A platform is built when its Rust target is installed (`rustup target add TRIPLE`) and a linker for it
# is present; linux/arm64 on an x86_64 Linux host uses Debian's gcc-aarch64-linux-gnu. darwin needs the
# macOS SDK: run `scripts/release.sh VERSION` on a Mac (both darwin targets build there; add them with
# `rustup target add x86_64-apple-darwin aarch64-apple-darwin`), copy its dist/*darwin* archives into
# this dist/, and rerun here: archives already in $DIST for a platform this machine cannot build are
# kept and listed in SHA256SUMS, the krew manifest, the flux Plugin manifest and the formula. A platform
# with no archive is left out of them, with a warning.
#
# --sign KEY: sign each Helm archive with GnuPG's key KEY (a user ID, e-mail or fingerprint of a secret
# key in your gpg keyring; gpg asks for its passphrase as usual) and export its public key as
# cozyhr-keyring.gpg. Helm 4 then installs the archive with `--keyring cozyhr-keyring.gpg` and verifies
# it (no --verify=false), from a URL, a file or the OCI registry; Helm 3 ignores the .prov. Archives kept
# from elsewhere are signed here too.
#
# --push oci://REGISTRY/PATH: push helm-cozy-VERSION.tgz (and its .prov with --sign) with oras as the
# Helm plugin artifact REGISTRY/PATH/helm-cozy:VERSION (artifact type application/vnd.helm.plugin.v1+json,
# the type Helm 4's `helm plugin install oci://…` pulls; Helm has no command that pushes a plugin). Log in
# first as oras does (`oras login REGISTRY`, or docker's credentials). --plain-http: the registry speaks
# plain HTTP (a local one). Users then run `helm plugin install oci://REGISTRY/PATH/helm-cozy:VERSION
# --keyring cozyhr-keyring.gpg` on any platform: Helm picks nothing by platform, the artifact holds them all.
#
# Environment:
#   DIST=DIR              output directory (default: dist/ in the repository)
#   KREW_MANIFEST=FILE    where to write the krew manifest (default: krew-manifest.yaml in the repository)
#   BASE_URL=URL          where the archives will be downloadable (default: the GitHub release of vVERSION)
#   TARGETS="os/arch ..." platforms to build
#   COZYHR_PREBUILT=DIR   package kubectl-cozyhr and helm-cozy from DIR for this machine's platform
#                         instead of building them (the end-to-end tests use the binaries they test)
#   GNUPGHOME=DIR         the gpg home that holds KEY (gpg's own variable)
#   ORAS=PATH             the oras that --push runs (default: oras on PATH; https://oras.land)
#
# The version: binaries print the version cozyhr::VERSION was compiled with. When VERSION differs from the
# workspace version in Cargo.toml it is passed as COZYHR_VERSION at build time; the script checks what
# the built binaries print and fails when it is not VERSION.
#
# Reproducible: archives have sorted entries, fixed owner, mode and mtime (SOURCE_DATE_EPOCH, default the
# last commit's time) and gzip without name or timestamp; release builds remap local paths. (Signatures
# are not: an OpenPGP signature carries its time.)
set -euo pipefail
shopt -s inherit_errexit

# --- What the steps share ---------------------------------------------------------------------------
# main (at the end) runs the steps, each a function. Two constants, then the globals a step sets for later
# ones (all else a step uses is local to it); the `declare`s give no value, so what the environment sets
# (DIST, KREW_MANIFEST, BASE_URL, TARGETS, ORAS, SOURCE_DATE_EPOCH) stays for the step that reads it.
usage="usage: scripts/release.sh [--sign KEY] [--push oci://REGISTRY/PATH [--plain-http]] VERSION (for example 0.1.0)"
# Every platform a manifest can name, in a fixed order (those with an archive in DIST are named).
all_platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
declare repo                      # the repository root, the working directory (enter_repo)
declare SIGN_KEY PUSH PLAIN_HTTP  # --sign KEY, --push oci://REGISTRY/PATH, --plain-http (parse_args)
declare VERSION                   # the release version, without a leading v (parse_args)
declare ORAS                      # the oras --push runs, set with --push only (parse_args)
declare DIST KREW_MANIFEST BASE_URL TARGETS # the environment's or their defaults, DIST absolute (read_settings)
declare cargo_version             # [workspace.package] version in Cargo.toml (read_workspace_version)
declare SOURCE_DATE_EPOCH         # the archives' time, exported (set_source_date_epoch)
declare host installed_targets    # this machine's Rust target, the installed ones (find_rust_targets)
declare work                      # the scratch directory, removed on exit (make_work_dir)
declare -a built                  # the platforms whose binaries this run packed (pack_platforms)
declare universal                 # helm-cozy-VERSION.tgz (pack_every_platform_helm_archive)
declare -a universal_platforms    # the platforms that archive holds (pack_every_platform_helm_archive)

die() { echo "release.sh: $*" >&2; exit 1; }
note() { echo "release.sh: $*" >&2; }

# Run from the repository root: the packed files (LICENSE, plugin.yaml, scripts/…) are named from there.
enter_repo() {
  repo=$(cd "$(dirname "$0")/.." && pwd)
  cd "$repo"
}

# The command line into SIGN_KEY, PUSH, PLAIN_HTTP and VERSION, refused before anything is written.
parse_args() {
  SIGN_KEY= PUSH= PLAIN_HTTP=
  while [ $# -gt 0 ]; do
    case $1 in
      --sign) [ $# -ge 2 ] && [ -n "$2" ] || die "--sign needs a gpg key (user ID, e-mail or fingerprint); $usage"
        SIGN_KEY=$2; shift 2 ;;
      --sign=*) SIGN_KEY=${1#--sign=}; [ -n "$SIGN_KEY" ] || die "--sign needs a gpg key; $usage"; shift ;;
      --push) [ $# -ge 2 ] && [ -n "$2" ] || die "--push needs a registry, like oci://ghcr.io/OWNER/REPO; $usage"
        PUSH=$2; shift 2 ;;
      --push=*) PUSH=${1#--push=}; [ -n "$PUSH" ] || die "--push needs a registry; $usage"; shift ;;
      --plain-http) PLAIN_HTTP=1; shift ;;
      -*) die "unknown option '$1'; $usage" ;;
      *) break ;;
    esac
  done
  [ $# -eq 1 ] || die "$usage"
  VERSION=${1#v}
  [[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
    die "VERSION must be semver like 0.1.0 (got '$1')"
  if [ -n "$PUSH" ]; then
    PUSH=${PUSH%/}
    # oci://HOST[:PORT][/PATH]: the artifact is pushed as HOST[:PORT][/PATH]/helm-cozy:VERSION.
    [[ $PUSH =~ ^oci://[A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9]+([._/-][a-z0-9]+)*)?$ ]] ||
      die "--push takes oci://REGISTRY[/PATH] without a tag, like oci://ghcr.io/cozystack/cozyhr (got '$PUSH'): the artifact is pushed as REGISTRY/PATH/helm-cozy:VERSION"
    [[ $VERSION != *+* ]] || die "--push: an OCI tag cannot hold the build metadata of $VERSION (drop its +...)"
    ORAS=${ORAS:-oras}
    command -v "$ORAS" >/dev/null 2>&1 ||
      die "--push needs oras to push the plugin artifact (https://oras.land/docs/installation; or ORAS=/path/to/oras)"
  elif [ -n "$PLAIN_HTTP" ]; then
    die "--plain-http is for --push; $usage"
  fi
}

# The environment's DIST, KREW_MANIFEST, BASE_URL and TARGETS, or defaults; DIST created, made absolute.
read_settings() {
  DIST=${DIST:-$repo/dist}
  KREW_MANIFEST=${KREW_MANIFEST:-$repo/krew-manifest.yaml}
  BASE_URL=${BASE_URL:-https://github.com/cozystack/cozyhr/releases/download/v$VERSION}
  TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
  mkdir -p "$DIST"
  DIST=$(cd "$DIST" && pwd)
}

# Fail before anything is packed if a tool is missing (gpg with KEY's secret key for --sign; GNU tar).
check_tools() {
  local tool
  for tool in cargo rustc tar gzip sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is missing (cargo/rustc: https://rustup.rs; tar, gzip, sha256sum: coreutils/tar/gzip)"
  done
  if [ -n "$SIGN_KEY" ]; then
    command -v gpg >/dev/null 2>&1 || die "--sign needs GnuPG's gpg (Debian: apt-get install gnupg; macOS: brew install gnupg)"
    gpg --batch --list-secret-keys -- "$SIGN_KEY" >/dev/null 2>&1 ||
      die "--sign $SIGN_KEY: gpg has no secret key by that name (see gpg --list-secret-keys${GNUPGHOME:+, GNUPGHOME=$GNUPGHOME})"
  fi
  tar --version 2>/dev/null | grep -q 'GNU tar' || die "GNU tar is needed for reproducible archives (macOS: brew install gnu-tar, and put gtar first on PATH as tar)"
}

# cargo_version from Cargo.toml; a differing VERSION goes to the build as COZYHR_VERSION (see the header).
read_workspace_version() {
  cargo_version=$(awk '/^\[workspace.package\]/{p=1;next} /^\[/{p=0} p && /^version *=/{gsub(/.*= *"|".*/,"");print;exit}' Cargo.toml)
  [ -n "$cargo_version" ] || die "cannot read [workspace.package] version from Cargo.toml"
  if [ "$VERSION" != "$cargo_version" ]; then
    export COZYHR_VERSION=$VERSION
    note "VERSION $VERSION differs from Cargo.toml ($cargo_version): building with COZYHR_VERSION=$VERSION"
  fi
}

# SOURCE_DATE_EPOCH, exported: the archives' mtime (reproducible), default the last commit's time.
set_source_date_epoch() {
  SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
  export SOURCE_DATE_EPOCH
}

# host and installed_targets: which platforms this machine can build (can_build).
find_rust_targets() {
  host=$(rustc -vV | sed -n 's/^host: //p')
  installed_targets=$(rustup target list --installed 2>/dev/null || true)
}

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

# The scratch directory the archives are staged in; the EXIT trap removes it however the run ends.
make_work_dir() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# flux_tarball OS ARCH BINARY: the flux CLI plugin archive, flat: LICENSE and flux-cozyhr (kubectl-cozyhr
# under the name `flux plugin install` installs and `flux cozyhr` runs; it finds it by that base name).
flux_tarball() {
  local os=$1 arch=$2 binary=$3 stage=$work/$1-$2/flux
  mkdir -p "$stage"
  install -m 0644 LICENSE "$stage/LICENSE"
  install -m 0755 "$binary" "$stage/flux-cozyhr"
  tarball "$DIST/flux-cozyhr_${VERSION}_${os}_${arch}.tar.gz" "$stage" LICENSE flux-cozyhr
}

# plugin_yaml OUT DIR COMMENT: the repository's plugin.yaml for a release archive: VERSION, the binary
# and the hook under DIR (a path that starts with $HELM_PLUGIN_DIR), COMMENT as its first line instead
# of the source's comments. The source's paths are a checkout's (bin/helm-cozy, scripts/plugin-hook.sh).
plugin_yaml() {
  local out=$1 dir=$2 comment=$3
  {
    printf '%s\n' "$comment"
    sed -e '/^#/d' -e "s/^version:.*/version: $VERSION/" \
      -e "s|\\\$HELM_PLUGIN_DIR/bin/helm-cozy\$|$dir/helm-cozy|" \
      -e "s|\\\$HELM_PLUGIN_DIR/scripts/plugin-hook.sh\$|$dir/plugin-hook.sh|" plugin.yaml
  } >"$out"
  chmod 0644 "$out"
  grep -qx "version: $VERSION" "$out" || die "plugin.yaml has no top-level version line"
  grep -qxF "  - command: $dir/helm-cozy" "$out" || die "plugin.yaml: cannot point platformCommand at $dir/helm-cozy"
  [ "$(grep -cF ": $dir/plugin-hook.sh" "$out")" = 2 ] || die "plugin.yaml: cannot point the install/update hooks at $dir/plugin-hook.sh"
}

# pack_krew_archive PLATFORM BINDIR OUT: kubectl-cozyhr for krew: flat, bin at the root.
pack_krew_archive() {
  local platform=$1 bindir=$2 out=$3 stage entries
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
  tarball "$out" "$stage" "${entries[@]}"
}

# pack_helm_archive PLATFORM BINDIR OUT: helm-cozy as a Helm plugin (see the header): helm-cozy/ is the
# plugin, laid out as Helm 4's `helm plugin package` lays one out (a top directory holding plugin.yaml
# and the rest; Helm 4 installs a local archive from the directory named as the file minus -VERSION-…);
# at the root, plugin.yaml, completion.yaml and cozyhr for the installers that take the archive's root as
# the plugin: Helm 3 over http accepts only a root plugin.yaml, and Helm 4 over http takes a root
# plugin.yaml before a directory's. Both copy the whole archive, so the root plugin.yaml runs
# helm-cozy/helm-cozy and helm-cozy/plugin-hook.sh (the binary is not there twice), Helm reads
# completion.yaml from the plugin directory's root, and cozyhr is where users link it from. Helm 3
# creates a file's parent only from a directory entry (so helm-cozy/ has one, before its files), and
# fails on that entry when it extracts the same URL into the cache directory it kept (plugin-hook.sh
# removes that extraction).
pack_helm_archive() {
  local platform=$1 bindir=$2 out=$3 stage
  stage=$work/$platform/helm
  mkdir -p "$stage/helm-cozy"
  chmod 0755 "$stage/helm-cozy"
  plugin_yaml "$stage/helm-cozy/plugin.yaml" '$HELM_PLUGIN_DIR' \
    "# The Helm plugin cozy ($platform), as \`helm plugin install FILE\` (Helm 4) installs it: this directory."
  plugin_yaml "$stage/plugin.yaml" '$HELM_PLUGIN_DIR/helm-cozy' \
    "# The Helm plugin cozy ($platform) for installs from a URL (Helm 3 and 4), which install the archive's root: the plugin is helm-cozy/."
  install -m 0644 completion.yaml "$stage/helm-cozy/completion.yaml"
  install -m 0644 completion.yaml "$stage/completion.yaml"
  install -m 0644 LICENSE "$stage/helm-cozy/LICENSE"
  install -m 0755 scripts/plugin-hook.sh "$stage/helm-cozy/plugin-hook.sh"
  install -m 0755 "$bindir/helm-cozy" "$stage/helm-cozy/helm-cozy"
  # `cozyhr` beside it (Go cozyhr's command line; cargo binstall installs it from here, and users link
  # it onto PATH): a launcher, since Helm's extractor takes regular files only.
  install -m 0755 scripts/cozyhr-launcher.sh "$stage/helm-cozy/cozyhr"
  install -m 0755 scripts/cozyhr-launcher.sh "$stage/cozyhr"
  tarball "$out" "$stage" helm-cozy helm-cozy/LICENSE helm-cozy/completion.yaml helm-cozy/cozyhr \
    helm-cozy/helm-cozy helm-cozy/plugin-hook.sh helm-cozy/plugin.yaml plugin.yaml completion.yaml cozyhr
}

# Pack each TARGETS platform this machine can build (or COZYHR_PREBUILT's): krew, flux and Helm archives.
pack_platforms() {
  local platform os arch triple krew_archive helm_archive bindir why b got
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
        got=$("$bindir/$b" version --client) || die "$bindir/$b version failed"
        [ "$got" = "$b $VERSION" ] || die "$bindir/$b prints '$got', not '$b $VERSION': release the Cargo.toml version ($cargo_version), or make cozyhr::VERSION read COZYHR_VERSION (option_env!) in src/lib.rs"
      done
    fi

    pack_krew_archive "$platform" "$bindir" "$DIST/$krew_archive"
    flux_tarball "$os" "$arch" "$bindir/kubectl-cozyhr"
    pack_helm_archive "$platform" "$bindir" "$DIST/$helm_archive"

    built+=("$platform")
    note "$platform: $DIST/$krew_archive, $DIST/$helm_archive, $DIST/flux-cozyhr_${VERSION}_${os}_${arch}.tar.gz"
  done
}

# The flux archive of a krew archive built elsewhere (by a release.sh before the flux plugin, say): its binary.
pack_flux_archives_from_kept() {
  local platform os arch krew_archive
  for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
    os=${platform%/*} arch=${platform#*/}
    krew_archive=$DIST/kubectl-cozyhr_${VERSION}_${os}_${arch}.tar.gz
    [ -f "$krew_archive" ] && [ ! -f "$DIST/flux-cozyhr_${VERSION}_${os}_${arch}.tar.gz" ] || continue
    mkdir -p "$work/$os-$arch/kept"
    tar -xzf "$krew_archive" -C "$work/$os-$arch/kept" kubectl-cozyhr ||
      die "$krew_archive has no kubectl-cozyhr to make the flux archive from"
    flux_tarball "$os" "$arch" "$work/$os-$arch/kept/kubectl-cozyhr"
    note "$platform: $DIST/flux-cozyhr_${VERSION}_${os}_${arch}.tar.gz from the krew archive built elsewhere"
  done
}

# The Helm plugin for every platform in DIST (including archives built elsewhere), helm-cozy-VERSION.tgz:
# the layer of the OCI artifact (--push). Helm 4's OCI installer resolves no platform (no image index:
# it pulls one manifest and its one plugin archive), so the artifact carries each platform's binary as
# OS-ARCH/helm-cozy and its plugin.yaml a platformCommand per platform, which Helm matches to the machine
# it runs on; one tag then serves every user. Laid out as `helm plugin package` lays one out (helm-cozy/
# at the top, entries in lexical order), so Helm 4 also installs the file itself.

# helm-cozy-VERSION.tgz from every platform's Helm archive in DIST: the OCI artifact's one layer.
pack_every_platform_helm_archive() {
  local stage universal_entries platform os arch a x bin platform_commands
  universal=helm-cozy-$VERSION.tgz
  stage=$work/universal
  mkdir -p "$stage/helm-cozy"
  chmod 0755 "$stage/helm-cozy"
  universal_entries=(helm-cozy helm-cozy/LICENSE helm-cozy/completion.yaml helm-cozy/cozyhr helm-cozy/plugin-hook.sh helm-cozy/plugin.yaml)
  universal_platforms=()
  for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
    os=${platform%/*} arch=${platform#*/}
    a=$DIST/helm-cozy-${VERSION}-${os}-${arch}.tar.gz
    [ -f "$a" ] || continue
    x=$work/$os-$arch/helm-unpacked
    mkdir -p "$x"
    tar -xzf "$a" -C "$x" || die "cannot unpack $a"
    # An archive of an earlier release.sh (kept from elsewhere) has helm-cozy at its root.
    if [ -f "$x/helm-cozy/helm-cozy" ]; then bin=$x/helm-cozy/helm-cozy; else bin=$x/helm-cozy; fi
    [ -f "$bin" ] || die "$a has no helm-cozy binary"
    mkdir -p "$stage/helm-cozy/$os-$arch"
    chmod 0755 "$stage/helm-cozy/$os-$arch"
    install -m 0755 "$bin" "$stage/helm-cozy/$os-$arch/helm-cozy"
    universal_entries+=("helm-cozy/$os-$arch" "helm-cozy/$os-$arch/helm-cozy")
    universal_platforms+=("$platform")
  done
  [ ${#universal_platforms[@]} -gt 0 ] || die "no Helm archive for $VERSION in $DIST"
  plugin_yaml "$stage/helm-cozy/plugin.yaml" '$HELM_PLUGIN_DIR' \
    "# The Helm plugin cozy for ${universal_platforms[*]}: Helm runs the binary of the platform it runs on."
  platform_commands=$(for platform in "${universal_platforms[@]}"; do
    printf '  - os: %s\n    arch: %s\n    command: $HELM_PLUGIN_DIR/%s-%s/helm-cozy\n' \
      "${platform%/*}" "${platform#*/}" "${platform%/*}" "${platform#*/}"
  done)
  CMDS=$platform_commands awk '$0 == "  - command: $HELM_PLUGIN_DIR/helm-cozy" { print ENVIRON["CMDS"]; next } { print }' \
    "$stage/helm-cozy/plugin.yaml" >"$stage/helm-cozy/plugin.yaml.tmp"
  mv "$stage/helm-cozy/plugin.yaml.tmp" "$stage/helm-cozy/plugin.yaml"
  chmod 0644 "$stage/helm-cozy/plugin.yaml"
  [ "$(grep -c '^    command: \$HELM_PLUGIN_DIR/[a-z]*-[a-z0-9]*/helm-cozy$' "$stage/helm-cozy/plugin.yaml")" = ${#universal_platforms[@]} ] ||
    die "plugin.yaml: cannot write a platformCommand per platform"
  install -m 0644 completion.yaml "$stage/helm-cozy/completion.yaml"
  install -m 0644 LICENSE "$stage/helm-cozy/LICENSE"
  install -m 0755 scripts/plugin-hook.sh "$stage/helm-cozy/plugin-hook.sh"
  install -m 0755 scripts/cozyhr-launcher.sh "$stage/helm-cozy/cozyhr"
  mapfile -t universal_entries < <(printf '%s\n' "${universal_entries[@]}" | LC_ALL=C sort)
  tarball "$DIST/$universal" "$stage" "${universal_entries[@]}"
  note "every platform: $DIST/$universal (${universal_platforms[*]})"
}

# SHA256SUMS over every archive of VERSION in DIST (ones built elsewhere too), which the manifests read.
write_checksums() {
  (
    cd "$DIST"
    shopt -s nullglob
    archives=(kubectl-cozyhr_"${VERSION}"_*.tar.gz helm-cozy-"${VERSION}"-*.tar.gz "$universal" flux-cozyhr_"${VERSION}"_*.tar.gz)
    [ ${#archives[@]} -gt 0 ] || die "no archives for $VERSION in $DIST"
    LC_ALL=C sha256sum "${archives[@]}" | LC_ALL=C sort -k2 >SHA256SUMS.tmp
    mv SHA256SUMS.tmp SHA256SUMS
    # The flux catalog's checksums file: the same lines, for the flux archives only.
    grep '  flux-cozyhr_' SHA256SUMS >"flux-cozyhr_${VERSION}_checksums.txt.tmp" || die "no flux archives for $VERSION in $DIST"
    mv "flux-cozyhr_${VERSION}_checksums.txt.tmp" "flux-cozyhr_${VERSION}_checksums.txt"
  )
}

# sum_of FILE: FILE's sha256 in SHA256SUMS, or nothing.
sum_of() { awk -v f="$1" '$2 == f || $2 == "*"f {print $1}' "$DIST/SHA256SUMS"; }

# The krew manifest, generated whole so that it is always consistent with the archives.
write_krew_manifest() {
  local shim_caveat platform os arch f sum
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
    for platform in $all_platforms; do
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
}

# --- Signed Helm archives -------------------------------------------------------------------------
# sign_helm_archive ARCHIVE [NAME...]: ARCHIVE.prov as Helm 4's `helm plugin package --sign` writes it
# (internal/plugin/sign.go, pkg/provenance/sign.go): an OpenPGP clear-signed message, hash SHA512,
# whose text is the plugin's metadata as YAML, a line `...`, and a YAML map `files:` from a file name to
# `sha256:<hex>` of the archive's bytes. Helm 4 checks the signature against --keyring and the sum under
# the name it installs from: the archive's file name (the last part of a URL, or a local file's name),
# and for an OCI install PLUGIN-VERSION.tgz from the archive's plugin.yaml (cozy-VERSION.tgz), not the
# layer's name; NAME... adds the sum under those names too. Helm does not read the metadata part, which
# is the archive's own plugin.yaml here without its comments (Helm writes its parsed form of that file).
sign_helm_archive() {
  local archive=$1 name sum msg n
  shift
  name=$(basename "$archive")
  sum=$(sha256sum "$archive" | cut -d' ' -f1)
  msg=$work/$name.msg
  {
    # The plugin's own plugin.yaml (the flat archives of an earlier release.sh have it at the root).
    tar -xzOf "$archive" helm-cozy/plugin.yaml 2>/dev/null | sed '/^#/d' ||
      tar -xzOf "$archive" plugin.yaml | sed '/^#/d'
    printf '\n...\nfiles:\n'
    for n in "$name" "$@"; do printf '  %s: sha256:%s\n' "$n" "$sum"; done
  } >"$msg"
  rm -f "$archive.prov.tmp"
  gpg --batch --yes --local-user "$SIGN_KEY" --digest-algo SHA512 --armor --clearsign \
    --output "$archive.prov.tmp" "$msg" || die "gpg could not sign $name with $SIGN_KEY (see above)"
  mv "$archive.prov.tmp" "$archive.prov"
}

# --sign: a .prov per Helm archive and KEY's key ring; unsigned: no .prov (an earlier run's would be stale).
sign_helm_archives() {
  local helm_archives plugin_name a
  shopt -s nullglob
  helm_archives=("$DIST"/helm-cozy-"$VERSION"-*.tar.gz "$DIST/$universal")
  shopt -u nullglob
  plugin_name=$(sed -n 's/^name:[[:space:]]*//p' plugin.yaml | head -n 1)
  [ -n "$plugin_name" ] || die "plugin.yaml has no name"
  if [ -n "$SIGN_KEY" ]; then
    for a in "${helm_archives[@]}"; do
      if [ "$a" = "$DIST/$universal" ]; then
        sign_helm_archive "$a" "$plugin_name-$VERSION.tgz"
      else
        sign_helm_archive "$a"
      fi
    done
    gpg --batch --yes --export --output "$DIST/cozyhr-keyring.gpg.tmp" -- "$SIGN_KEY" &&
      [ -s "$DIST/cozyhr-keyring.gpg.tmp" ] || die "gpg could not export the public key of $SIGN_KEY"
    mv "$DIST/cozyhr-keyring.gpg.tmp" "$DIST/cozyhr-keyring.gpg"
    note "signed ${#helm_archives[@]} Helm archive(s) with $SIGN_KEY; public key ring: $DIST/cozyhr-keyring.gpg"
  else
    # A .prov of an earlier signed run would not match archives that changed since: unsigned means none.
    for a in "${helm_archives[@]}"; do
      if [ -f "$a.prov" ]; then
        note "removing $(basename "$a").prov of an earlier run (this run is unsigned)"
        rm -f "$a.prov"
      fi
    done
  fi
}

# --- The flux CLI's plugin catalog ----------------------------------------------------------------
# cozyhr.yaml is a Plugin manifest of schema cli.fluxcd.io/v1beta1 (fluxcd/flux2 pkg/plugin/types.go,
# fluxcd/plugins schemas/plugin-cli-v1beta1.json): `flux plugin install cozyhr` fetches
# $FLUXCD_PLUGIN_CATALOG/cozyhr.yaml, picks the first version's entry for its os/arch, downloads url,
# checks checksum (sha256:<hex>) and writes the archive's `bin` file into ~/.fluxcd/plugins.

# cozyhr.yaml and catalog.yaml (a catalog of that one plugin), so DIST or the release URL is a flux catalog.
write_flux_catalog() {
  local flux_description n platform os arch f sum
  flux_description="Flux HelmReleases: get, suspend, resume, reconcile, status and tree (the dependsOn graph), as kubectl cozyhr; its companion Helm plugin, helm cozy, shows, diffs, applies and deletes a chart exactly as helm-controller would"
  {
    cat <<YAML
# Generated by scripts/release.sh $VERSION from the archives in dist/ (see flux-cozyhr_${VERSION}_checksums.txt): do not edit by hand.
apiVersion: cli.fluxcd.io/v1beta1
kind: Plugin
name: cozyhr
description: "$flux_description"
homepage: https://github.com/cozystack/cozyhr
source: https://github.com/cozystack/cozyhr
bin: flux-cozyhr
versions:
  - version: $VERSION
    platforms:
YAML
    n=0
    for platform in $all_platforms; do
      os=${platform%/*} arch=${platform#*/}
      f=flux-cozyhr_${VERSION}_${os}_${arch}.tar.gz
      sum=$(sum_of "$f")
      if [ -z "$sum" ]; then
        note "WARNING: cozyhr.yaml (flux catalog) has no $platform entry (no $f)"
        continue
      fi
      n=$((n + 1))
      cat <<YAML
      - os: $os
        arch: $arch
        url: $BASE_URL/$f
        checksum: sha256:$sum
YAML
    done
    [ "$n" -gt 0 ] || die "no flux archive for $VERSION in $DIST"
  } >"$DIST/cozyhr.yaml.tmp"
  mv "$DIST/cozyhr.yaml.tmp" "$DIST/cozyhr.yaml"
  cat >"$DIST/catalog.yaml.tmp" <<YAML
# Generated by scripts/release.sh $VERSION: a flux CLI plugin catalog of one plugin (with cozyhr.yaml).
apiVersion: cli.fluxcd.io/v1beta1
kind: PluginCatalog
plugins:
  - name: cozyhr
    description: "$flux_description"
    homepage: https://github.com/cozystack/cozyhr
    source: https://github.com/cozystack/cozyhr
    license: Apache-2.0
YAML
  mv "$DIST/catalog.yaml.tmp" "$DIST/catalog.yaml"
}

# --- Homebrew ---------------------------------------------------------------------------------------
# cozyhr.rb for a tap (Formula/cozyhr.rb): per platform, the krew archive as the formula's url and the
# Helm archive as a resource; kubectl-cozyhr and its completion shim go on PATH, the Helm plugin into
# libexec/helm-cozy (the archive's helm-cozy/ directory, the plugin itself; the archive's root has more
# than that directory, so Homebrew stages it unmoved), which `helm plugin install` links (the caveat says
# so: Homebrew cannot run it).
formula_platform() { # OS ARCH: the url/sha256/resource lines for one platform, or nothing
  local os=$1 arch=$2 k h ks hs
  k=kubectl-cozyhr_${VERSION}_${os}_${arch}.tar.gz h=helm-cozy-${VERSION}-${os}-${arch}.tar.gz
  ks=$(sum_of "$k") hs=$(sum_of "$h")
  if [ -z "$ks" ] || [ -z "$hs" ]; then
    note "WARNING: cozyhr.rb (Homebrew) has no $os/$arch entry (no $k or $h)"
    return
  fi
  cat <<RUBY
      url "$BASE_URL/$k"
      sha256 "$ks"

      resource "helm-cozy" do
        url "$BASE_URL/$h"
        sha256 "$hs"
      end
RUBY
}
formula_os() { # OS: an on_OS block with on_arm/on_intel inside, or nothing
  local os=$1 arm intel
  arm=$(formula_platform "$os" arm64) intel=$(formula_platform "$os" amd64)
  [ -n "$arm$intel" ] || return 0
  echo "  on_${os/darwin/macos} do"
  [ -z "$arm" ] || printf '    on_arm do\n%s\n    end\n' "$arm"
  [ -z "$intel" ] || printf '    on_intel do\n%s\n    end\n' "$intel"
  echo "  end"
}

# cozyhr.rb, the Homebrew formula (above), from the sums in SHA256SUMS.
write_formula() {
  {
    cat <<RUBY
# Generated by scripts/release.sh $VERSION from the archives in dist/ (see SHA256SUMS): do not edit by hand.
# For a Homebrew tap: Formula/cozyhr.rb.
class Cozyhr < Formula
  desc "Develop Helm charts that Flux delivers: kubectl cozyhr and helm cozy"
  homepage "https://github.com/cozystack/cozyhr"
  version "$VERSION"
  license "Apache-2.0"

RUBY
    formula_os darwin
    formula_os linux
    cat <<'RUBY'

  def install
    bin.install "kubectl-cozyhr", "kubectl_complete-cozyhr"
    resource("helm-cozy").stage { (libexec/"helm-cozy").install Dir["helm-cozy/*"] }
    # cozyhr: helm-cozy run by that name takes the Go cozyhr's command line.
    bin.install_symlink libexec/"helm-cozy/helm-cozy" => "cozyhr"
  end

  def caveats
    <<~EOS
      kubectl cozyhr is ready: kubectl finds kubectl-cozyhr and kubectl_complete-cozyhr on PATH.

      helm cozy is a Helm plugin: install it once from this formula's copy (Helm 3 and Helm 4):
        helm plugin install #{opt_libexec}/helm-cozy
      Helm links that directory, so `brew upgrade cozyhr` upgrades the plugin too.

      flux cozyhr (flux CLI >= 2.9) runs the same binary from flux's plugin directory:
        mkdir -p ~/.fluxcd/plugins && ln -sf #{opt_bin}/kubectl-cozyhr ~/.fluxcd/plugins/flux-cozyhr
    EOS
  end

  test do
    assert_equal "kubectl-cozyhr #{version}", shell_output("#{bin}/kubectl-cozyhr version").strip
    assert_equal "helm-cozy #{version}", shell_output("#{libexec}/helm-cozy/helm-cozy version --client").strip
    assert_equal "cozyhr #{version}", shell_output("#{bin}/cozyhr version").strip
  end
end
RUBY
  } >"$DIST/cozyhr.rb.tmp"
  mv "$DIST/cozyhr.rb.tmp" "$DIST/cozyhr.rb"
}

# --- The OCI artifact ------------------------------------------------------------------------------
# --push: helm-cozy-VERSION.tgz (and its .prov) as REGISTRY/PATH/helm-cozy:VERSION, with the artifact type
# Helm 4 requires of a plugin (pkg/registry/plugin.go). Helm finds the layers by their title annotation
# (the file name, which oras writes): the plugin as `helm-cozy-….tgz` and its provenance as
# `helm-cozy-….tgz.prov`, `helm-cozy` being the repository's last path segment (so the repository must be
# named helm-cozy; Helm installs the plugin into $HELM_PLUGINS/helm-cozy, as from a URL). Helm pulls only
# layers of the media types application/vnd.oci.image.layer.v1.tar and ...tar+gzip, so the .prov goes as
# the first of those (what Helm's own tests push). The created annotation is the archives' time, so the
# manifest is the same for the same files.

# --push: the every-platform Helm archive (and its .prov) to the registry with oras; without, nothing.
push_oci_artifact() {
  local ref layers created oras_flags
  [ -n "$PUSH" ] || return 0
  ref=${PUSH#oci://}/helm-cozy:$VERSION
  layers=("$universal:application/vnd.oci.image.layer.v1.tar+gzip")
  if [ -f "$DIST/$universal.prov" ]; then
    layers+=("$universal.prov:application/vnd.oci.image.layer.v1.tar")
  else
    note "WARNING: pushing $ref without provenance (no --sign): Helm 4 installs it only with --verify=false"
  fi
  created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
  oras_flags=()
  [ -z "$PLAIN_HTTP" ] || oras_flags+=(--plain-http)
  note "pushing $ref (${universal_platforms[*]})"
  (cd "$DIST" && "$ORAS" push "${oras_flags[@]}" --artifact-type application/vnd.helm.plugin.v1+json \
    --annotation "org.opencontainers.image.created=$created" \
    --annotation "org.opencontainers.image.version=$VERSION" \
    --annotation "org.opencontainers.image.description=Helm plugin cozy: show, diff, apply and delete a chart exactly as Flux helm-controller would" \
    --annotation "org.opencontainers.image.source=https://github.com/cozystack/cozyhr" \
    --annotation "org.opencontainers.image.licenses=Apache-2.0" \
    "$ref" "${layers[@]}" >&2) || die "oras could not push $ref (see above; log in with: oras login ${ref%%/*})"
  note "pushed $ref: helm plugin install oci://$ref${SIGN_KEY:+ --keyring cozyhr-keyring.gpg}${PLAIN_HTTP:+ --plain-http}"
}

# What this run did, on stderr, and SHA256SUMS on stdout (the lines to publish with the release).
print_summary() {
  note "built: ${built[*]:-nothing}; SHA256SUMS, $KREW_MANIFEST, cozyhr.yaml and catalog.yaml (flux), cozyhr.rb (Homebrew) written${PUSH:+; pushed ${PUSH#oci://}/helm-cozy:$VERSION}"
  cat "$DIST/SHA256SUMS"
}

# The release, step by step (each step's comment above says what it does and why).
main() {
  enter_repo
  parse_args "$@"
  read_settings
  check_tools
  read_workspace_version
  set_source_date_epoch
  find_rust_targets
  make_work_dir
  pack_platforms
  pack_flux_archives_from_kept
  pack_every_platform_helm_archive
  write_checksums
  write_krew_manifest
  sign_helm_archives
  write_flux_catalog
  write_formula
  push_oci_artifact
  print_summary
}

main "$@"
