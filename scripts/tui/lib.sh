# Shared by scripts/tui/e2e.sh and scripts/tui/kafka.sh: tmux drives klog
# tui in session $session; $work holds the pane captures.
# shellcheck shell=bash

# expect WHAT PATTERN: wait (at most 30 s) until the pane shows PATTERN
# (grep -E); on failure print the pane.
expect() {
  local what=$1 pattern=$2 deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    tmux capture-pane -p -t "$session" >"$work/pane.txt"
    if grep -Eq -- "$pattern" "$work/pane.txt"; then
      echo "ok   $what"
      return 0
    fi
    sleep 0.1
  done
  echo "FAIL $what: the pane does not show /$pattern/:" >&2
  cat "$work/pane.txt" >&2
  exit 1
}
keys() { tmux send-keys -t "$session" "$@"; }

# tui_setup NAME [KLOG_BIN]: the start of a check against klog up. Without
# tmux it exits 77 (skipped), in CI 1; it sets $work, $session (removed,
# with the broker, at exit) and $klog (KLOG_BIN, else go build ./cmd/klog).
tui_setup() {
  local name=$1
  if ! command -v tmux >/dev/null; then
    if [ "${CI:-}" = true ]; then
      echo "tui $name: tmux is not installed" >&2
      exit 1
    fi
    echo "SKIP tui $name: tmux is not installed (apt-get install tmux)"
    exit 77
  fi
  work=$(mktemp -d)
  session="klog-tui-$name-$$"
  trap tui_cleanup EXIT
  klog=${2:-}
  if [ -z "$klog" ]; then
    klog="$work/klog"
    (cd "$root" && go build -o "$klog" ./cmd/klog)
  fi
}

tui_cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  smoke_stop_broker >/dev/null 2>&1 || true
  rm -rf "$work"
}

# start_tui CMD...: runs klog tui (CMD) in a tmux session of
# ${TUI_WIDTH:-140} columns and 30 lines; its exit status goes to
# $work/exit.
start_tui() {
  local cmd
  cmd=$(printf '%q ' "$@")
  tmux new-session -d -s "$session" -x "${TUI_WIDTH:-140}" -y 30 "$cmd; echo EXIT=\$? >$work/exit; sleep 60"
}

# quit_tui: q must end klog tui with exit status 0.
quit_tui() {
  local deadline
  keys q
  deadline=$((SECONDS + 30))
  while [ ! -s "$work/exit" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  if ! grep -q 'EXIT=0' "$work/exit" 2>/dev/null; then
    echo "FAIL q: klog tui did not exit 0 ($(cat "$work/exit" 2>/dev/null || echo still running))" >&2
    exit 1
  fi
  echo "ok   q quits"
}
