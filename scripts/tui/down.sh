#!/usr/bin/env bash
# klog tui while a 3-node klog up cluster breaks, in an 80-column tmux
# pane: a node killed stays listed, down since when; the partition it led
# shows its new leader on a later refresh; with a second node killed the
# counts are marked stale (quorum lost). Each step's delay from the kill
# is printed. Needs tmux (exit 77 without, as e2e.sh).
#   scripts/tui/down.sh [KLOG_BIN]      (default: go build ./cmd/klog)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../smoke/lib.sh
source "$root/scripts/smoke/lib.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"

tui_setup down "${1:-}"

smoke_start_cluster "$klog" "$work" 3 --any-port || exit 1 # (set -e off inside: its greps may fail)
k=("$klog" -b "$SMOKE_BROKERS")
"${k[@]}" topic create tui-orders -p 3 -r 3 >/dev/null
# Right after the creation a node may not lead its partitions yet, and
# topic describe then answers in part (exit 3): ask again until whole.
created=$SECONDS
until leader=$("${k[@]}" topic describe tui-orders --format json 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin)["topics"][0]; print([p for p in d["partitions"] if p["partition"]==1][0]["leader"])'); do
  [ $((SECONDS - created)) -lt 60 ] || { echo "FAIL topic describe tui-orders not whole within 60s" >&2; exit 1; }
  sleep 0.2
done

TUI_WIDTH=80 start_tui "${k[@]}" tui --refresh 500ms
expect "three nodes up" "brokers 3 +topics"
keys -l ':part tui-orders/1'
keys Enter
expect "tui-orders/1 led by node $leader" "^leader $leader "

killed=$SECONDS
"${k[@]}" node kill "$leader" --data-dir "$SMOKE_CLUSTER_DIR" >/dev/null
others="($(( (leader + 1) % 3 ))|$(( (leader + 2) % 3 )))"
# The failover as klog topic describe sees it, then in the TUI.
while ! "${k[@]}" topic describe tui-orders --format json 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin)["topics"][0]; sys.exit([p for p in d["partitions"] if p["partition"]==1][0]["leader"] in (-1, '"$leader"'))' 2>/dev/null; do
  [ $((SECONDS - killed)) -lt 60 ] || { echo "FAIL no failover of tui-orders/1 within 60s" >&2; exit 1; }
  sleep 0.2
done
failover=$SECONDS
expect "tui-orders/1 led by another node" "^leader $others "
echo "     failover $((failover - killed))s after the kill (klog topic describe), in the TUI $((SECONDS - failover))s later"
keys : cluster Enter
expect "node $leader listed, down" "^>? +$leader +down since [0-9:]{8} "
expect "the summary counts it down" "brokers 2 up, 1 down"
echo "     node down shown $((SECONDS - killed))s after the kill"
keys Right Right Right
expect "columns scroll sideways at 80 columns" "←[0-9]"

second=$(( (leader + 1) % 3 ))
killed=$SECONDS
"${k[@]}" node kill "$second" --data-dir "$SMOKE_CLUSTER_DIR" >/dev/null
expect "the counts marked stale with the quorum lost" "metadata stale since [0-9:]{8}: metadata quorum lost"
echo "     quorum lost shown $((SECONDS - killed))s after the second kill"
quit_tui
echo "PASS tui down"
