#!/usr/bin/env bash
# The README's pictures, made from the demo's cluster so they are redone when the output changes: each
# command runs in a real terminal (a detached tmux, 110 columns), its screen is captured with its colours
# (tmux capture-pane -e), turned into HTML (aha) and rendered by headless Chromium into a PNG:
#   diff.png     helm cozy diff of a local edit of the demo's chart
#   status.png   kubectl cozyhr status of the demo's HelmRelease
#   tree.png     kubectl cozyhr tree of it
#
#   scripts/docs-images.sh [OUT_DIR]    (default docs/images; needs the demo: scripts/demo.sh, which leaves
#                                        its cluster up; COZYHR_RUN as for the demo)
# tmux, aha and chromium come from Debian (apt-get, when run as root); else it says how to get them.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo/docs/images}
CACHE=${COZYHR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cozyhr-e2e}
COZYHR_RUN=${COZYHR_RUN:-$CACHE/run}
demo=$COZYHR_RUN/demo
die() { echo "docs-images.sh: $*" >&2; exit 1; }
[ -f "$demo/env" ] || die "no demo environment at $demo: run scripts/demo.sh first (it leaves its cluster up)"

missing=()
for tool in tmux aha chromium; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null ||
      die "apt-get could not install ${missing[*]}"
  else
    die "${missing[*]} missing: install them (Debian/Ubuntu: sudo apt-get install ${missing[*]})"
  fi
fi

# shellcheck disable=SC1091
source "$demo/env"
mkdir -p "$out"
work=$(mktemp -d)
socket=cozyhr-docs-$$
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT

# A local edit of the demo's chart, for the diff.
cp -r "$repo/examples/hello" "$work/hello"
cat >>"$work/hello/templates/configmap.yaml" <<'YAML'
  edited: "locally"
YAML

# shot NAME COMMAND...: runs COMMAND in the terminal (after a prompt line showing it), waits for it to end,
# and renders its screen to OUT_DIR/NAME.png.
shot() {
  local name=$1
  shift
  local script=$work/$name.sh
  {
    # In the chart's directory, as a user runs helm cozy.
    printf 'cd %q\n' "$work/hello"
    printf 'printf "\\033[1m$ %s\\033[0m\\n"\n' "$*"
    printf '%q ' "$@"
    printf '\ntmux -L %q wait-for -S %q\nsleep 600\n' "$socket" "$name"
  } >"$script"
  tmux -L "$socket" -f /dev/null new-session -d -s "$name" -x 110 -y 60 "env TERM=xterm-256color bash $script"
  timeout 120 tmux -L "$socket" wait-for "$name" || die "$name: the command did not end within 120 s"
  tmux -L "$socket" capture-pane -p -e -J -t "$name" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$work/$name.ansi"
  tmux -L "$socket" kill-session -t "$name"
  grep -q . "$work/$name.ansi" || die "$name: the screen was empty"
  local rows cols
  rows=$(wc -l <"$work/$name.ansi")
  # The widest line, its colours aside (a line wider than the terminal was joined back by -J).
  cols=$(sed -e 's/\x1b\[[0-9;]*m//g' "$work/$name.ansi" | awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }')
  {
    printf '<!doctype html><meta charset="utf-8"><style>body{margin:0;background:#1d1f21}'
    printf 'pre{margin:0;padding:14px 18px;font:14px/18px "DejaVu Sans Mono",monospace;color:#e0e0e0;white-space:pre}</style><pre>'
    aha --no-header <"$work/$name.ansi"
    printf '</pre>'
  } >"$work/$name.html"
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --window-size="$((cols * 85 / 10 + 40)),$((rows * 18 + 28))" --screenshot="$out/$name.png" "file://$work/$name.html" >/dev/null 2>&1 ||
    die "$name: chromium could not render the screen"
  [ "$(stat -c %s "$out/$name.png")" -gt 2000 ] || die "$name: the picture is empty"
  echo "$out/$name.png ($rows lines)"
}

shot diff helm cozy diff hello -n demo
shot status kubectl cozyhr status hello -n demo
shot tree kubectl cozyhr tree hello -n demo
