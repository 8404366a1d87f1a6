#!/usr/bin/env bash
# End-to-end check of klog tui in a real terminal: a klog up node (data on
# disk) with a topic, a consumer group, a compacted topic and a topic of
# small segments; tmux runs klog tui against it, keys are sent, and each
# screen the pane shows is checked, the segments screen against what
# klog log segments finds in the data directory. Needs tmux
# (apt-get install tmux): without it the check is skipped (exit 77), in CI
# it fails.
#   scripts/tui/e2e.sh [KLOG_BIN]      (default: go build ./cmd/klog)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../smoke/lib.sh
source "$root/scripts/smoke/lib.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"

tui_setup e2e "${1:-}"

SMOKE_DATA_DIR=$work/data smoke_start_broker "$klog" "$work"
admin=$(grep -o 'admin API on http://[^/]*' "$work/broker.err" | head -n 1 | sed 's|.*http://||')
[ -n "$admin" ] || { echo "tui e2e: klog up printed no admin API address" >&2; exit 1; }
k=("$klog" -b "$SMOKE_BROKERS" --admin "$admin")

"${k[@]}" topic create tui-orders -p 3 >/dev/null
"${k[@]}" topic create tui-prices -p 1 -c cleanup.policy=compact -c internal.segment.bytes=1024 >/dev/null
seq 1 300 | "${k[@]}" produce tui-orders -p 0 -q >/dev/null 2>&1
"${k[@]}" consume tui-orders -g tui-billing -n 100 >/dev/null
for r in $(seq 1 12); do
  printf 'EUR:%s\nUSD:%s\n' "$r" "$r" | "${k[@]}" produce tui-prices -K : -q >/dev/null 2>&1
done
"${k[@]}" topic compact tui-prices >/dev/null
"${k[@]}" topic create tui-logs -p 1 -c internal.segment.bytes=1024 >/dev/null
for r in $(seq 1 20); do
  seq 1 10 | sed "s/^/line-$r-/" | "${k[@]}" produce tui-logs -q >/dev/null 2>&1
done

start_tui "${k[@]}" tui --refresh 500ms


expect "cluster screen" "controller 0 .*cluster id"
expect "the node is listed, with its Raft state" "${SMOKE_BROKERS%%,*} +controller +leader +[0-9]+ +[0-9]+ "
keys : top Tab Enter
expect ":top<tab> opens the topics" "tui-orders +3 +1"
keys / tui-or Enter Enter
expect "a topic's partitions" "topics › tui-orders"
expect "offsets per partition" "LOG-START +LSO +HW"
# A key right after esc would read as alt+key: wait for esc to land.
keys Escape
expect "esc goes back to the list" "klog  topics  "
keys : groups Enter
expect "the groups" "tui-billing +classic +Empty"
keys / tui-billing Enter Enter
expect "a group's lag" "total lag 200 "
keys : cleaner Enter / tui-prices Enter
expect "the cleaner, from the admin API" "tui-prices +0 +[0-9.]+ +0\.50 .* [0-9]+ rec"
keys -l ':configs tui-prices'
keys Enter
expect "a topic's configs" "cleanup.policy +compact +DYNAMIC_TOPIC_CONFIG +yes"
keys -l ':tail tui-orders'
keys Enter
expect "the tail of a topic" "^>? +0 +299 +[0-9:.]+ +null +300 +none"
keys Enter
expect "a record's detail with its value in hex" "00000000  33 30 30 +\|300\|"
keys Escape
expect "esc back to the tail" "newest first"
keys : hanging Enter
expect "the hanging transactions: none" "no coordinator is finishing"
keys : events Enter
expect "the events timeline" "segment_roll +tui-logs/0 +new_base="
keys -l ':part tui-orders/0'
keys Enter
expect "a partition: leader, ISR, offsets" "log start 0 +LSO 300 +HW 300 +LEO 300"
expect "its replicas" "^>? +0 +leader +in +300 +0 "
# The segments screen shows the segments the data directory holds.
keys -l ':seg tui-logs/0'
keys Enter
expect "the segments of tui-logs/0" "segments tui-logs/0 .*"
"$klog" log segments -f json "$work/data/node-0/tui-logs-0" >"$work/segments.json"
bases=$(python3 -c 'import json,sys; print(" ".join(str(s["base_offset"]) for s in json.load(open(sys.argv[1]))["partitions"][0]["segments"]))' "$work/segments.json")
[ -n "$bases" ] || { echo "FAIL klog log segments listed no segment of tui-logs-0" >&2; exit 1; }
n=$(wc -w <<<"$bases")
expect "$n segments, as on disk" " $n segments "
for b in $bases; do
  expect "segment $b, as on disk" "^>? +$b +[0-9-]+ +[0-9.]+ [KM]?i?B "
done
keys Enter
expect "a segment's offset index" "offset index"
keys p
expect "p pauses" "segments .* paused"
quit_tui
echo "PASS tui e2e"
