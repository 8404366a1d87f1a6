#!/usr/bin/env bash
# Runs the README's quickstart as printed and compares what each command
# prints with what the page shows, so the page cannot drift from klog.
#
#   scripts/docs/quickstart.sh [KLOG_BIN] [PAGE]
#       (default: go build ./cmd/klog; README.md)
#
# The page's "## Quickstart" section is read block by block (lines
# indented four spaces): a line "$ CMD" is a command, the lines under it
# up to the next command are what it prints, stdout and stderr together.
# The first command, "klog up", is started in the background on a free
# port and a fresh data directory (the flags are added), and its lines up
# to "klog: ready" are compared without the node's log lines (time=...).
# Every other command runs in bash with that klog first on PATH and
# KLOG_BROKERS set, 127.0.0.1:9092 replaced by the node's address, and
# must exit 0 (one whose program, kcat, is not installed is skipped, but
# in CI fails). A command the page shows no output for is checked by its
# exit status only; otherwise its output must be the lines shown, where a
# line "..." stands for any lines. Before comparing, both sides are
# masked: addresses (127.0.0.1:PORT), durations, timestamps, 22-character
# ids and the data directory, and runs of spaces are one space.
#
# Prints "FAIL docs/quickstart: ..." with the command, the page's lines
# and klog's for each difference, and exits 1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
page=${2:-$root/README.md}
work=$(mktemp -d)
up_pid=
cleanup() {
  if [ -n "$up_pid" ] && kill -0 "$up_pid" 2>/dev/null; then
    kill -TERM "$up_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$up_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$up_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

klog=${1:-}
if [ -z "$klog" ]; then
  klog="$work/bin/klog"
  (cd "$root" && go build -o "$klog" ./cmd/klog) || exit 1
fi
mkdir -p "$work/bin" "$work/state" "$work/data-home"
[ "$klog" -ef "$work/bin/klog" ] || ln -s "$(cd "$(dirname "$klog")" && pwd)/$(basename "$klog")" "$work/bin/klog"
export PATH="$work/bin:$PATH" XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data-home"
data="$work/data"

# The quickstart's commands and their shown output, one record per line:
# "C<TAB>command" or "O<TAB>output line".
awk '
  /^## / { in_section = ($0 == "## Quickstart"); next }
  !in_section { next }
  /^    \$ / { sub(/^    \$ /, ""); print "C\t" $0; in_block = 1; next }
  /^    / { if (in_block) { sub(/^    /, ""); print "O\t" $0 }; next }
  /^$/ { next }
  { in_block = 0 }
' "$page" >"$work/script"
if ! grep -q '^C' "$work/script"; then
  echo "FAIL docs/quickstart: $page has no commands in its ## Quickstart section"
  exit 1
fi

# mask FILE: the comparable form of a command's output.
mask() {
  sed -E \
    -e "s#$data#DATA#g" \
    -e 's#127\.0\.0\.1:[0-9]+#127.0.0.1:PORT#g' \
    -e 's#[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z#TIME#g' \
    -e 's#\b[0-9]+(\.[0-9]+)?(ns|µs|us|ms|s|m|h)\b#DUR#g' \
    -e 's#\b[A-Za-z0-9_-]{22}\b#ID#g' \
    -e 's#  +# #g' -e 's# +$##' "$1"
}

# matches WANT GOT: GOT's lines are WANT's, a line "..." in WANT standing
# for any lines (none included).
matches() {
  awk '
    FNR == NR { want[++nw] = $0; next }
    { got[++ng] = $0 }
    function m(i, j,   k) {
      if (i > nw) return j > ng
      if (want[i] == "...") {
        for (k = j; k <= ng + 1; k++) if (m(i + 1, k)) return 1
        return 0
      }
      return j <= ng && want[i] == got[j] && m(i + 1, j + 1)
    }
    END { exit m(1, 1) ? 0 : 1 }
  ' "$1" "$2"
}

failed=0
# check CMD WANT GOT: compare, or report a difference.
check() {
  local cmd=$1 want=$2 got=$3
  mask "$want" >"$want.m"
  mask "$got" >"$got.m"
  if ! matches "$want.m" "$got.m"; then
    echo "FAIL docs/quickstart: the output differs from the page's: \$ $cmd"
    echo "  the page shows:"
    sed 's/^/    /' "$want"
    echo "  klog printed:"
    sed 's/^/    /' "$got"
    failed=1
  fi
}

# Split the script into commands, each with its shown output.
n=0
while IFS=$'\t' read -r kind text; do
  if [ "$kind" = C ]; then
    n=$((n + 1))
    printf '%s\n' "$text" >"$work/cmd.$n"
    : >"$work/want.$n"
  else
    printf '%s\n' "$text" >>"$work/want.$n"
  fi
done <"$work/script"

# The first command starts the node.
first=$(cat "$work/cmd.1")
case $first in
klog\ up*) ;;
*)
  echo "FAIL docs/quickstart: the quickstart's first command is \"$first\", not klog up"
  exit 1
  ;;
esac
# shellcheck disable=SC2086 # the page's command, split as a shell would
$first --listen 127.0.0.1:0 --data-dir "$data" >"$work/up.out" 2>&1 </dev/null &
up_pid=$!
for _ in $(seq 1 600); do
  grep -q '^klog: ready' "$work/up.out" && break
  kill -0 "$up_pid" 2>/dev/null || break
  sleep 0.1
done
if ! grep -q '^klog: ready' "$work/up.out"; then
  echo "FAIL docs/quickstart: \$ $first did not start within 60 s:"
  sed 's/^/    /' "$work/up.out"
  exit 1
fi
brokers=$(sed -n 's/^BROKERS=//p' "$work/up.out" | head -n 1)
export KLOG_BROKERS=$brokers
echo "docs/quickstart: klog up ready at $brokers"
sed -n '/^time=/d;p;/^klog: ready/q' "$work/up.out" >"$work/got.1"
check "$first" "$work/want.1" "$work/got.1"

for ((i = 2; i <= n; i++)); do
  cmd=$(sed "s/127\.0\.0\.1:9092/$brokers/g" "$work/cmd.$i")
  prog=${cmd%% *}
  if ! command -v "$prog" >/dev/null; then
    if [ "${CI:-}" = true ]; then
      echo "FAIL docs/quickstart: $prog is not installed: \$ $(cat "$work/cmd.$i")"
      failed=1
    else
      echo "docs/quickstart: SKIP, $prog is not installed: \$ $(cat "$work/cmd.$i")"
    fi
    continue
  fi
  rc=0
  (cd "$work" && timeout 60 bash -c "$cmd") >"$work/got.$i" 2>&1 </dev/null || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL docs/quickstart: exit status $rc: \$ $(cat "$work/cmd.$i")"
    sed 's/^/    /' "$work/got.$i"
    failed=1
    continue
  fi
  [ -s "$work/want.$i" ] && check "$(cat "$work/cmd.$i")" "$work/want.$i" "$work/got.$i"
done

if ! kill -0 "$up_pid" 2>/dev/null; then
  echo "FAIL docs/quickstart: klog up died during the run:"
  sed 's/^/    /' "$work/up.out" | tail -n 50
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "docs/quickstart: $((n)) commands ran as the page shows"
