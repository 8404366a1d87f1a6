#!/usr/bin/env bash
# klog tui against a Kafka-compatible cluster that is not klog (Kafka 4.4
# from scripts/kafka, in the reference stage): the Kafka-protocol screens
# work, and the admin API screens say there is none.
#   scripts/tui/kafka.sh KLOG_BIN BROKERS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

klog=${1:?usage: scripts/tui/kafka.sh KLOG_BIN BROKERS}
brokers=${2:?usage: scripts/tui/kafka.sh KLOG_BIN BROKERS}
command -v tmux >/dev/null || { echo "tui kafka: tmux is not installed" >&2; exit 1; }
work=$(mktemp -d)
session="klog-tui-kafka-$$"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# No --admin: klog looks for an admin API and finds none serving these
# brokers (a klog up on 127.0.0.1:9644 serves other ones).
k=("$klog" -b "$brokers")
"${k[@]}" topic create tui-kafka -p 2 >/dev/null
seq 1 20 | "${k[@]}" produce tui-kafka -p 1 -q >/dev/null 2>&1
start_tui env -u KLOG_ADMIN "${k[@]}" tui --refresh 500ms

expect "cluster screen of Kafka" "controller [0-9]+ +cluster id"
keys : topics Enter
# The filter is typed once the list is there: keys sent while the screen
# loads its first answer could land before it (a CI run once showed the
# filter typed but neither enter taken).
expect "the topics of Kafka" "^>? *tui-kafka +2 +1"
keys / tui-kafka Enter
expect "the filter applied" "^> tui-kafka +2 +1"
keys Enter
expect "a topic's partitions on Kafka" "^>? +1 +[0-9]+ +[0-9]+ .* 20 +20 *$"
keys Escape
expect "esc back to the topics" "klog  topics  "
keys -l ':tail tui-kafka'
keys Enter
expect "the tail on Kafka" "^>? +1 +19 +"
keys -l ':configs tui-kafka'
keys Enter
expect "configs on Kafka" "cleanup.policy +delete +DEFAULT_CONFIG"
keys : cleaner Enter
expect "the cleaner says there is no admin API" "No compaction state: admin API not available"
keys -l ':seg tui-kafka/1'
keys Enter
expect "the segments say there is no admin API" "No segments: admin API not available"
keys -l ':part tui-kafka/1'
keys Enter
expect "the partition without followers' state" "followers' state: admin API not available"
quit_tui
echo "PASS tui against Kafka"
