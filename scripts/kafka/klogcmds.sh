#!/usr/bin/env bash
# klog's own commands against any broker, with their exit codes and output
# checked: klog topic (create, list, describe, alter-config, add-partitions,
# trim, delete), klog produce (keys, headers, partitions, every codec, acks,
# tombstones, JSON lines, a committed and an aborted transaction, a missing
# topic), klog consume (offset ranges, counts, timestamps, JSON, groups,
# read_committed), klog group (list, describe with lag, a live classic
# member, a KIP-848 group, seek, delete) and klog txn (list, describe of a
# committed, an aborted and an open transaction, producers, hanging,
# abort). Run against klog and against Kafka 4.4 (kafka.sh start), every
# check must pass on both: klog is the command line for any Kafka cluster.
#
#   scripts/kafka/klogcmds.sh BROKERS [--target klog|kafka] [--out DIR]
#
# Prints one line per check, "PASS klogcmds/NAME" or "FAIL klogcmds/NAME:
# why", then a summary; exits 1 if any check failed. Table headers are
# checked word for word, so both brokers give the same columns. Topic, group
# and transactional id names end in a per-run suffix, so reruns against one
# broker do not collide. The KIP-848 check runs Kafka's console consumer
# (group.protocol=consumer) through kafka.sh's jars, fetched on first use.
# --out DIR keeps every command's stdout, stderr and exit code (NAME.out,
# NAME.err, NAME.rc; the run suffix replaced by RUN, blanks squeezed) for
# diff -r between two brokers. --target only names the broker in the messages: the checks are
# the same for both.
#
# Environment:
#   KLOG_BIN              klog binary to use (default: go build ./cmd/klog)
#   KLOG_CMDS_TIMEOUT     seconds one command may take (default 60)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=checks.sh
source "$here/checks.sh"
check_args klogcmds.sh "$@"
step_timeout=${KLOG_CMDS_TIMEOUT:-60}

run="$(date +%s%N | cut -c8-13)$$"
topic=kc-$run         # 3 partitions: keyed records with headers, the groups
ctopic=kc-c-$run      # 1 partition: every codec, acks, a tombstone
jtopic=kc-j-$run      # 3 partitions: the JSON lines copy of $topic
ttopic=kc-t-$run      # 1 partition: transactions
xtopic=kc-x-$run      # configs, partitions added, deleted
rtopic=kc-r-$run      # 1 partition: trimmed (DeleteRecords)
atopic=kc-auto-$run   # created by klog produce --create
group=kc-g-$run
group848=kc-g848-$run
glive=kc-glive-$run
txn_commit=kc-commit-$run
txn_abort=kc-abort-$run
txn_open=kc-open-$run
work=$(mktemp -d) || exit 1
bg_pids=()
cleanup() {
  local p
  for p in "${bg_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

check_prefix=klogcmds
say() { echo "klogcmds: $*" >&2; }

if [ -n "${KLOG_BIN:-}" ]; then
  klog=$KLOG_BIN
else
  klog=$work/klog
  say "building klog"
  (cd "$root" && go build -o "$klog" ./cmd/klog) || { echo "FAIL klogcmds/build: go build ./cmd/klog failed"; exit 1; }
fi

# save NAME keeps the last command's files in --out DIR, the run suffix
# replaced and runs of blanks squeezed to one (table columns are as wide as
# the longest name, and the suffix's length varies).
save() {
  local name=$1 f
  [ -n "$out" ] || return 0
  mkdir -p "$out"
  for f in out err rc; do
    sed -E "s/$run/RUN/g; s/ +/ /g" "$work/$name.$f" >"$out/$name.$f"
  done
}

# kl NAME ARGS... runs one klog command against the broker (stdin from
# $work/in if it exists) into $work/NAME.{out,err,rc}; sets rc, o (stdout)
# and e (stderr).
kl() {
  local name=$1 input=/dev/null
  shift
  [ -f "$work/in" ] && input=$work/in
  timeout -k 5 "$step_timeout" "$klog" -b "$brokers" "$@" <"$input" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  rm -f "$work/in"
  echo "$rc" >"$work/$name.rc"
  o=$(cat "$work/$name.out")
  e=$(cat "$work/$name.err")
  save "$name"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    e="timed out after ${step_timeout}s; $e"
  fi
}

# fails_with CODE TEXT: the last command exited CODE with TEXT on stderr.
fails_with() {
  [ "$rc" -eq "$1" ] && grep -qF -- "$2" <<<"$e" && return 0
  why="exit $rc, want $1 with '$2' on stderr: $(tail -n 2 <<<"$e" | tr '\n' ' ')"
  return 1
}

# words prints the last command's stdout with each run of blanks as one space.
words() { sed -E 's/[[:space:]]+/ /g; s/ $//' <<<"$o"; }

# line TEXT: stdout has the line TEXT (blanks squeezed), whole.
line() {
  words | grep -qxF -- "$1" && return 0
  why="stdout lacks the line '$1': $(words | head -c 400 | tr '\n' '|')"
  return 1
}

# match ERE: some stdout line (blanks squeezed) matches ^ERE$.
match() {
  words | grep -qE -- "^$1\$" && return 0
  why="no stdout line matches '$1': $(words | head -c 400 | tr '\n' '|')"
  return 1
}

# lacks ERE: no stdout line (blanks squeezed) matches ^ERE$.
lacks() {
  words | grep -qE -- "^$1\$" || return 0
  why="stdout has a line matching '$1'"
  return 1
}

# value KEY: the value of a "KEY  VALUE" line of a describe, blanks squeezed.
value() { words | awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }'; }

# field KEY WANT: the describe line KEY has the value WANT.
field() {
  local got
  got=$(value "$1")
  [ "$got" = "$2" ] && return 0
  why="$1 is '$got', want '$2'"
  return 1
}

# expect_out WANT WHAT: the last command exited 0 and printed exactly WANT.
expect_out() {
  ok_rc || { why="$2: $why"; return 1; }
  [ "$o" = "$1" ] && return 0
  why="$2 printed $(tr '\n' '|' <<<"$o"), want $(tr '\n' '|' <<<"$1")"
  return 1
}

# expect_lines N WHAT: the last command exited 0 and printed N lines.
expect_lines() {
  ok_rc || { why="$2: $why"; return 1; }
  [ "$(grep -c . <<<"$o")" = "$1" ] && return 0
  why="$2 printed $(grep -c . <<<"$o") lines, want $1: $(head -c 300 <<<"$o" | tr '\n' '|')"
  return 1
}

# py EXPR: the Python expression EXPR is true over the last stdout parsed as
# one JSON document (d; None if it is not one) and as JSON lines (rs).
py() {
  local res
  res=$(python3 -c '
import json, sys
text = sys.stdin.read()
try:
    d = json.loads(text)
except ValueError:
    d = None
try:
    rs = [json.loads(l) for l in text.splitlines() if l.strip()]
except ValueError:
    rs = None
print("ok" if eval(sys.argv[1]) else "no")
' "$1" <<<"$o" 2>&1)
  [ "$res" = ok ] && return 0
  why="JSON check '$1' failed: $(tail -n 1 <<<"$res") on $(head -c 300 <<<"$o" | tr '\n' ' ')"
  return 1
}

# landed N TOPIC: klog produce reported N records landed on TOPIC.
landed() {
  local n
  n=$(grep -cE "^$2\[[0-9]+\]@[0-9]+$" <<<"$e")
  [ "$n" -eq "$1" ] && return 0
  why="stderr reports $n records landed on $2, want $1: $(head -c 300 <<<"$e" | tr '\n' '|')"
  return 1
}

# wait_for SECONDS CMD...: runs CMD every 0.2 s until it succeeds.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# --- klog topic ---------------------------------------------------------------
topic_create() {
  kl topic-create topic create "$topic" -p 3 -r 1 -c retention.ms=3600000
  ok_rc && line "TOPIC STATUS" && line "$topic CREATED" || return 1
  local t p
  for t in "$ctopic:1" "$ttopic:1" "$xtopic:1" "$jtopic:3"; do
    p=${t##*:}
    kl "topic-create-${t%%-"$run"*}" topic create "${t%:*}" -p "$p" -r 1
    ok_rc && line "${t%:*} CREATED" || return 1
  done
}
topic_create_exists() {
  kl topic-create-exists topic create "$topic" -p 3
  fails_with 1 "TOPIC_ALREADY_EXISTS" && line "TOPIC STATUS"
}
topic_create_invalid() {
  kl topic-create-invalid-name topic create "bad name $run"
  fails_with 1 "INVALID_TOPIC_EXCEPTION" || return 1
  kl topic-create-invalid-rf topic create "kc-rf-$run" -r 99
  fails_with 1 "INVALID_REPLICATION_FACTOR"
}
topic_list() {
  kl topic-list topic list
  ok_rc && line "NAME PARTITIONS REPLICAS" && line "$topic 3 1" && line "$ttopic 1 1" || return 1
  kl topic-list-json --format json topic list
  ok_rc && py "d['version'] == 1 and [(t['partitions'], t['replication_factor'], t['internal']) for t in d['topics'] if t['name'] == '$topic'] == [(3, 1, False)]"
}
topic_describe() {
  local p
  kl topic-describe topic describe "$topic"
  ok_rc && field NAME "$topic" && field PARTITIONS 3 && field REPLICATION-FACTOR 1 && field INTERNAL false &&
    line "CONFIG VALUE SOURCE" && line "retention.ms 3600000 DYNAMIC_TOPIC_CONFIG" &&
    line "PARTITION LEADER EPOCH REPLICAS ISR LOG-START HIGH-WATERMARK" || return 1
  for p in 0 1 2; do
    match "$p [0-9]+ [0-9]+ [0-9]+ [0-9]+ 0 0" || return 1
  done
  kl topic-describe-json --format json topic describe "$topic"
  ok_rc && py "d['version'] == 1 and len(d['topics']) == 1 and sorted(p['partition'] for p in d['topics'][0]['partitions']) == [0, 1, 2] and all(p['leader'] >= 0 and len(p['replicas']) == 1 and p['isr'] == p['replicas'] for p in d['topics'][0]['partitions']) and any(c['key'] == 'retention.ms' and c['value'] == '3600000' and c['source'] == 'DYNAMIC_TOPIC_CONFIG' for c in d['topics'][0]['configs'])"
}
topic_describe_missing() {
  kl topic-describe-missing topic describe "kc-none-$run"
  fails_with 1 "UNKNOWN_TOPIC_OR_PARTITION"
}
topic_alter_config() {
  kl topic-alter-config topic alter-config "$xtopic" --set retention.ms=123456 --set cleanup.policy=compact
  ok_rc && line "$xtopic ALTERED" || return 1
  kl topic-describe-altered topic describe "$xtopic"
  ok_rc && line "retention.ms 123456 DYNAMIC_TOPIC_CONFIG" && line "cleanup.policy compact DYNAMIC_TOPIC_CONFIG" || return 1
  kl topic-alter-config-delete topic alter-config "$xtopic" --delete cleanup.policy
  ok_rc && line "$xtopic ALTERED" || return 1
  kl topic-describe-after-delete topic describe "$xtopic"
  ok_rc && line "retention.ms 123456 DYNAMIC_TOPIC_CONFIG" && lacks "cleanup.policy .*"
}
topic_alter_config_invalid() {
  kl topic-alter-config-invalid topic alter-config "$xtopic" --set retention.ms=notanumber
  fails_with 1 "INVALID_CONFIG" || return 1
  kl topic-alter-config-unknown topic alter-config "$xtopic" --set no.such.config=1
  fails_with 1 "INVALID_CONFIG"
}
topic_add_partitions() {
  kl topic-add-partitions topic add-partitions "$xtopic" --total 2
  ok_rc && line "$xtopic UPDATED" || return 1
  kl topic-describe-added topic describe "$xtopic"
  ok_rc && field PARTITIONS 2 && match "1 [0-9]+ [0-9]+ [0-9]+ [0-9]+ 0 0" || return 1
  kl topic-add-partitions-fewer topic add-partitions "$xtopic" --total 1
  fails_with 1 "INVALID_PARTITIONS"
}
topic_trim() {
  kl topic-trim-create topic create "$rtopic" -p 1 -r 1
  ok_rc || return 1
  printf 'r0\nr1\nr2\nr3\nr4\n' >"$work/in"
  kl topic-trim-produce produce "$rtopic" -q
  ok_rc || return 1
  kl topic-trim topic trim "$rtopic/0" --before 2 --yes
  ok_rc && line "TOPIC PARTITION LOG-START NEW-START" && line "$rtopic 0 0 2" || return 1
  kl topic-trim-consume consume "$rtopic" -e -f '%o %v\n'
  expect_out $'2 r2\n3 r3\n4 r4' "consume after the trim" || return 1
  kl topic-trim-past-end topic trim "$rtopic" --before 9 --yes
  fails_with 1 "OFFSET_OUT_OF_RANGE"
}
list_lacks_xtopic() { kl topic-list-after-delete topic list && [ "$rc" -eq 0 ] && lacks "$xtopic .*"; }
topic_delete() {
  kl topic-delete topic delete "$xtopic" --yes
  ok_rc && line "$xtopic DELETED" || return 1
  # Deletion is asynchronous on Kafka: wait until the list lacks it.
  wait_for 30 list_lacks_xtopic || { why="topic list still has $xtopic after delete (exit $rc)"; return 1; }
  kl topic-delete-missing topic delete "$xtopic" --yes
  fails_with 1 "UNKNOWN_TOPIC_OR_PARTITION"
}

# --- klog produce -------------------------------------------------------------
produced=$(for i in 1 2 3 4 5 6; do printf 'k%d v%d\n' "$i" "$i"; done)
produce_keyed() {
  echo "$produced" >"$work/in"
  kl produce-keyed produce "$topic" -K ' ' -H h1=a -H h2=b
  ok_rc && landed 6 "$topic"
}
produce_partition() {
  echo "p2 pinned" >"$work/in"
  kl produce-partition produce "$topic" -p 2 -K ' '
  ok_rc && landed 1 "$topic" || return 1
  grep -qE "^$topic\[2\]@[0-9]+$" <<<"$e" && return 0
  why="want ${topic}[2]@N on stderr: $e"
  return 1
}
produce_bad_partition() {
  echo "x" >"$work/in"
  kl produce-bad-partition produce "$topic" -p 9
  fails_with 1 "has 3 partitions"
}
produce_codecs() {
  local z
  for z in none gzip snappy lz4 zstd; do
    printf '%s-1\n%s-2\n%s-3\n' "$z" "$z" "$z" >"$work/in"
    kl "produce-codec-$z" produce "$ctopic" -z "$z" -k "$z"
    if ! { ok_rc && landed 3 "$ctopic"; }; then
      why="-z $z: $why"
      return 1
    fi
  done
  kl consume-codecs consume "$ctopic" -e -f '%k %v\n'
  ok_rc || return 1
  local want
  want=$(for z in none gzip snappy lz4 zstd; do printf '%s %s-1\n%s %s-2\n%s %s-3\n' "$z" "$z" "$z" "$z" "$z" "$z"; done)
  [ "$o" = "$want" ] && return 0
  why="read back $(tr '\n' '|' <<<"$o"), want $(tr '\n' '|' <<<"$want")"
  return 1
}
acks_read() { kl consume-acks consume "$ctopic" -o 15 -e -f '%o %k %v\n' && [ "$o" = $'15 acks acks1\n16 acks acks0' ]; }
produce_acks() {
  echo "acks1" >"$work/in"
  kl produce-acks-1 produce "$ctopic" --acks 1 -k acks
  ok_rc && landed 1 "$ctopic" || return 1
  echo "acks0" >"$work/in"
  kl produce-acks-0 produce "$ctopic" --acks 0 -k acks
  ok_rc || return 1
  # acks=0 has no answer to wait for: wait until the record is there.
  wait_for 10 acks_read && return 0
  why="offsets 15-16 hold $(tr '\n' '|' <<<"$o") (exit $rc), want the acks=1 and acks=0 records"
  return 1
}
produce_tombstone() {
  printf 'tomb \n' >"$work/in"
  kl produce-tombstone produce "$ctopic" -K ' ' -Z
  ok_rc && landed 1 "$ctopic" || return 1
  kl consume-tombstone consume "$ctopic" -o -1 -e -f json
  ok_rc && py "len(rs) == 1 and rs[0]['key'] == 'tomb' and rs[0]['value'] is None and rs[0]['offset'] == 17"
}
produce_auto_create() {
  echo "auto" >"$work/in"
  kl produce-missing produce "$atopic"
  fails_with 1 "topic does not exist; create it with klog topic create $atopic, or pass --create" || return 1
  echo "auto" >"$work/in" # kl used up the input
  kl produce-auto-create produce "$atopic" --create
  ok_rc && landed 1 "$atopic" || return 1
  kl topic-describe-auto topic describe "$atopic"
  ok_rc && field PARTITIONS 1
}
produce_json_copy() {
  kl consume-json consume "$topic" -e -f json
  ok_rc || return 1
  local src=$o
  echo "$src" >"$work/in"
  kl produce-json produce "$jtopic" -f json
  ok_rc && landed 7 "$jtopic" || return 1
  kl consume-json-copy consume "$jtopic" -e -f json
  ok_rc || return 1
  [ "$(sort <<<"$o")" = "$(sort <<<"${src//\"topic\":\"$topic\"/\"topic\":\"$jtopic\"}")" ] && return 0
  why="the copy differs from the source: $(diff <(sort <<<"$src") <(sort <<<"$o") | head -n 4 | tr '\n' '|')"
  return 1
}
# A committed transaction of 5 records, then one of 1 record that klog
# produce aborts on SIGTERM once it landed: read_committed sees the 5.
produce_txn_commit() {
  printf 'c1\nc2\nc3\nc4\nc5\n' >"$work/in"
  kl produce-txn-commit produce "$ttopic" --txn-id "$txn_commit"
  ok_rc && landed 5 "$ttopic" && grep -qxF "committed transaction \"$txn_commit\": 5 records" <<<"$e" && return 0
  [ -n "$why" ] || why="stderr lacks the commit line: $e"
  return 1
}
# open_txn ID NAME starts klog produce --txn-id ID on $ttopic reading from a
# FIFO held open on fd 4, writes one record and waits until it landed; the
# producer's pid is in txn_pid, its stderr in $work/NAME.err.
open_txn() {
  rm -f "$work/fifo"
  mkfifo "$work/fifo" || return 1
  # klog itself in the background (no timeout(1) between), so that a
  # SIGTERM reaches it; the waits below are bounded.
  "$klog" -b "$brokers" produce "$ttopic" --txn-id "$1" <"$work/fifo" >/dev/null 2>"$work/$2.err" &
  txn_pid=$!
  bg_pids+=("$txn_pid")
  exec 4>"$work/fifo"
  echo "${1%%-*}-record" >&4
  wait_for "$step_timeout" grep -q '@' "$work/$2.err" && return 0
  why="the open transaction's record did not land: $(cat "$work/$2.err")"
  return 1
}
# end_txn NAME commit|abort ends the input (commit) or stops the producer
# with SIGTERM (abort; the input is closed only once it exited, or the end
# of input could commit first), and sets rc to its exit status, e to its
# stderr.
end_txn() {
  local deadline
  if [ "$2" = abort ]; then kill -TERM "$txn_pid" 2>/dev/null; else exec 4>&-; fi
  deadline=$((SECONDS + step_timeout))
  while kill -0 "$txn_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  kill -KILL "$txn_pid" 2>/dev/null
  exec 4>&-
  wait "$txn_pid"
  rc=$?
  e=$(cat "$work/$1.err")
}
produce_txn_abort() {
  open_txn "$txn_abort" produce-txn-abort || return 1
  end_txn produce-txn-abort abort
  [ "$rc" -ne 0 ] && grep -qF "abort" <<<"$e" && return 0
  why="exit $rc after SIGTERM, want non-zero with 'abort': $(tr '\n' ' ' <<<"$e")"
  return 1
}

# --- klog consume -------------------------------------------------------------
consume_all() {
  kl consume-all consume "$topic" -e -f '%k %v\n'
  ok_rc || return 1
  [ "$(sort <<<"$o")" = "$(printf '%s\np2 pinned\n' "$produced" | sort)" ] && return 0
  why="consumed $(sort <<<"$o" | tr '\n' '|')"
  return 1
}
consume_json_headers() {
  kl consume-json-headers consume "$topic" -e -f json
  ok_rc && py "len(rs) == 7 and all(r['topic'] == '$topic' and r['partition'] in (0, 1, 2) and r['offset'] >= 0 and r['timestamp'] > 0 for r in rs) and sorted(r['key'] for r in rs if r['headers'] == [{'key': 'h1', 'value': 'a'}, {'key': 'h2', 'value': 'b'}]) == ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'] and [r['headers'] for r in rs if r['key'] == 'p2'] == [[]]"
}
consume_offsets() {
  kl consume-range consume "$ctopic" -o 2:5 -f '%o %v\n'
  expect_out $'2 none-3\n3 gzip-1\n4 gzip-2' "-o 2:5" || return 1
  kl consume-last consume "$ctopic" -o -3 -e -f '%o\n'
  expect_out $'15\n16\n17' "-o -3 -e" || return 1
  kl consume-after-start consume "$ctopic" -o +14 -n 2 -f '%o\n'
  expect_out $'14\n15' "-o +14 -n 2" || return 1
  kl consume-count consume "$topic" -n 4 -f '%v\n'
  expect_lines 4 "-n 4" || return 1
  kl consume-partition consume "$topic" -p 2 -e -f '%p\n'
  ok_rc || return 1
  [ -n "$o" ] && ! grep -qvx 2 <<<"$o" && return 0
  why="-p 2 printed records of partitions $(sort -u <<<"$o" | tr '\n' ' ')"
  return 1
}
consume_time() {
  kl consume-since consume "$topic" -o @-1h -e -f '%v\n'
  expect_lines 7 "-o @-1h -e" || return 1
  kl consume-future consume "$topic" -o @+1h -e -f '%v\n'
  expect_out "" "-o @+1h -e"
}
consume_idle_timeout() {
  kl consume-idle consume "$topic" -o end --timeout 2s
  expect_out "" "-o end --timeout 2s"
}
consume_missing() {
  kl consume-missing consume "kc-none-$run" -e
  fails_with 1 "topic does not exist" || return 1
  kl topic-list-after-consume-missing topic list
  ok_rc && lacks "kc-none-$run .*"
}
consume_read_committed() {
  kl consume-committed consume "$ttopic" -e -f '%v\n'
  expect_out $'c1\nc2\nc3\nc4\nc5' "read_committed -e" || return 1
  kl consume-uncommitted consume "$ttopic" --read-uncommitted -e -f '%v\n'
  expect_out $'c1\nc2\nc3\nc4\nc5\nkc-record' "--read-uncommitted -e"
}
consume_group() {
  kl consume-group consume "$topic" -g "$group" -e -f '%v\n'
  expect_lines 7 "-g $group -e"
}
# The group's commits live in __consumer_offsets: listed with -i only.
topic_list_internal() {
  kl topic-list-internal topic list -i
  ok_rc && match "__consumer_offsets [0-9]+ [0-9]+" || return 1
  kl topic-list-no-internal topic list
  ok_rc && lacks "__consumer_offsets .*" || return 1
  kl topic-describe-internal topic describe __consumer_offsets
  ok_rc && field INTERNAL true
}
# Two more records after the group left, so its lag is 2.
produce_more() {
  printf 'm1\nm2\n' >"$work/in"
  kl produce-more produce "$topic" -k more
  ok_rc && landed 2 "$topic"
}

# --- klog group ---------------------------------------------------------------
group_list() {
  kl group-list group list
  ok_rc && line "GROUP TYPE STATE PROTOCOL-TYPE PROTOCOL MEMBERS COORDINATOR" &&
    match "$group classic Empty consumer - 0 [0-9]+" || return 1
  kl group-list-empty group list --state empty
  ok_rc && match "$group classic Empty .*" || return 1
  kl group-list-stable group list --state Stable
  ok_rc && lacks "$group .*"
}
# lag_rows_sum: the LAG column of the partition table summed, every row
# checked: LAG is LSO - COMMITTED (no transactions on $topic).
lag_rows() { words | awk '$1 == "'"$topic"'" && NF >= 7 { n++; s += $7; if ($3 != "-" && $6 - $3 != $7) bad = bad " " $2 } END { print n + 0, s + 0, bad }'; }
group_describe() {
  local got
  kl group-describe group describe "$group"
  ok_rc && field GROUP "$group" && field TYPE classic && field STATE Empty && field PROTOCOL-TYPE consumer &&
    field MEMBERS 0 && field TOTAL-LAG 2 && line "TOPIC PARTITION COMMITTED LOG-START HW LSO LAG MEMBER-ID" || return 1
  got=$(lag_rows)
  [ "$got" = "3 2 " ] || { why="partition rows, lag sum, bad rows: '$got', want '3 2 '"; return 1; }
  kl group-describe-json --format json group describe "$group"
  ok_rc && py "d['version'] == 1 and d['groups'][0]['state'] == 'Empty' and d['groups'][0]['total_lag'] == 2 and sum(p['lag'] for p in d['groups'][0]['partitions']) == 2 and all(p['committed'] + p['lag'] == p['last_stable_offset'] for p in d['groups'][0]['partitions'])"
}
group_describe_missing() {
  kl group-describe-missing group describe "kc-nogroup-$run"
  fails_with 1 "group does not exist"
}
# bg NAME CMD... starts CMD in the background, its output in $work/NAME.*;
# sets bg_pid.
bg() {
  local name=$1
  shift
  "$@" </dev/null >"$work/$name.out" 2>"$work/$name.err" &
  bg_pid=$!
  bg_pids+=("$bg_pid")
}
# stop_bg stops bg_pid with SIGTERM (SIGKILL after the step timeout); sets
# rc. SIGTERM, not SIGINT: a background job of a script ignores SIGINT, and
# the JVM keeps it ignored.
stop_bg() {
  local deadline=$((SECONDS + step_timeout))
  kill -TERM "$bg_pid" 2>/dev/null
  while kill -0 "$bg_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  kill -KILL "$bg_pid" 2>/dev/null
  wait "$bg_pid"
  rc=$?
}
# stable_with_member NAME GROUP: klog group describe GROUP shows it Stable with
# one member.
stable_with_member() {
  kl "$1" group describe "$2"
  [ "$rc" -eq 0 ] && [ "$(value STATE)" = Stable ] && [ "$(value MEMBERS)" = 1 ]
}
# A klog consume -g left running: a Stable classic group with one member
# assigned every partition.
live_member() {
  if ! wait_for "$step_timeout" stable_with_member group-describe-live "$glive"; then
    why="no Stable group with one member within ${step_timeout}s: $(words | tr '\n' '|') $e"
    return 1
  fi
  field TYPE classic && field PROTOCOL cooperative-sticky &&
    line "MEMBER-ID INSTANCE-ID CLIENT-ID HOST ASSIGNED" && match "klog-[0-9a-f-]+ - klog [^ ]+ $topic\[0,1,2\]" &&
    match "$topic 0 [-0-9]+ 0 [0-9]+ [0-9]+ [0-9]+ klog-[0-9a-f-]+"
}
group_describe_live() {
  local ok=0
  bg consume-live "$klog" -b "$brokers" consume "$topic" -g "$glive" -f '%v\n'
  live_member || ok=1
  stop_bg
  [ "$ok" -eq 0 ] || return 1
  [ "$rc" -eq 0 ] || { why="klog consume -g exited $rc on SIGTERM: $(tail -n 2 "$work/consume-live.err" | tr '\n' ' ')"; return 1; }
  [ "$(grep -c . "$work/consume-live.out")" -ge 9 ] && return 0
  why="the live consumer printed $(grep -c . "$work/consume-live.out") records, want 9"
  return 1
}
# A KIP-848 group (group.protocol=consumer): Kafka's console consumer left
# running (klog group describe answers through ConsumerGroupDescribe; seek
# is refused), then gone: Empty, seeked to the start, deleted.
lag_zero_848() { kl group-describe-kip848-caught-up group describe "$group848" && [ "$(value TOTAL-LAG)" = 0 ]; }
empty_848() { kl group-describe-kip848 group describe "$group848" && [ "$(value STATE)" = Empty ]; }
member_848() {
  if ! wait_for "$step_timeout" stable_with_member group-describe-kip848-live "$group848"; then
    why="no Stable KIP-848 group with one member within ${step_timeout}s: $(words | tr '\n' '|') $e $(tail -n 2 "$work/console-848.err")"
    return 1
  fi
  field TYPE consumer && field PROTOCOL uniform && field PROTOCOL-TYPE consumer &&
    line "MEMBER-ID INSTANCE-ID CLIENT-ID HOST ASSIGNED" && match "[^ ]+ - console-consumer [^ ]+ $topic\[0,1,2\]" || return 1
  if ! wait_for 30 lag_zero_848; then
    why="TOTAL-LAG is '$(value TOTAL-LAG)', want 0 once the console consumer read all 9"
    return 1
  fi
  kl group-seek-kip848-live group seek "$group848" --to start --yes
  fails_with 1 "is Stable with 1 member:"
}
group_describe_848() {
  local ok=0
  bg console-848 timeout -k 5 $((step_timeout * 2)) "$here/kafka.sh" tool console-consumer \
    --bootstrap-server "$brokers" --topic "$topic" --group "$group848" --from-beginning \
    --command-property group.protocol=consumer --command-property auto.commit.interval.ms=200
  member_848 || ok=1
  stop_bg
  [ "$ok" -eq 0 ] || return 1
  if ! wait_for 30 empty_848; then
    why="the KIP-848 group is not Empty after its consumer left: $(words | tr '\n' '|') $e"
    return 1
  fi
  field TYPE consumer && field MEMBERS 0 && field TOTAL-LAG 0 || return 1
  kl group-seek-kip848 group seek "$group848" --to start --yes
  ok_rc || return 1
  kl group-describe-kip848-after-seek group describe "$group848"
  ok_rc && field TYPE consumer && field TOTAL-LAG 9 || return 1
  kl group-delete-kip848 group delete "$group848" --yes
  ok_rc && line "$group848 DELETED"
}
group_seek() {
  kl group-seek-dry-run group seek "$group" --to start --dry-run
  ok_rc && line "TOPIC PARTITION CURRENT NEW" && match "$topic [0-2] [0-9]+ 0" || return 1
  kl group-seek-unconfirmed group seek "$group" --to start
  fails_with 1 "not confirmed" || return 1
  kl group-describe-after-dry-run group describe "$group"
  ok_rc && field TOTAL-LAG 2 || return 1
  kl group-seek-start group seek "$group" --to start --yes
  ok_rc || return 1
  if ! grep -qF "committed 3 offsets for group \"$group\"" <<<"$o$e"; then
    why="no 'committed 3 offsets' line: $o $e"
    return 1
  fi
  kl group-describe-after-seek group describe "$group"
  ok_rc && field TOTAL-LAG 9 || return 1
  kl group-seek-end group seek "$group" --to end --yes
  ok_rc || return 1
  kl group-describe-after-seek-end group describe "$group"
  ok_rc && field TOTAL-LAG 0
}
group_delete() {
  kl group-delete-unconfirmed group delete "$group"
  fails_with 1 "not confirmed" || return 1
  kl group-delete group delete "$group" --yes
  ok_rc && line "GROUP STATUS" && line "$group DELETED" || return 1
  kl group-list-after-delete group list
  ok_rc && lacks "$group .*" || return 1
  kl group-delete-missing group delete "$group" --yes
  fails_with 1 "GROUP_ID_NOT_FOUND"
}

# --- klog txn -----------------------------------------------------------------
# txn_state NAME ID STATE: klog txn describe ID shows STATE. Kafka answers
# EndTxn once the transaction is PrepareCommit or PrepareAbort and writes
# the markers after, so a describe right after the end may show that.
txn_state() { kl "$1" txn describe "$2" && [ "$rc" -eq 0 ] && match "$2 [0-9]+ $3 .*"; }
# txn_complete NAME ID STATE waits up to 30 s for txn_state NAME ID STATE.
txn_complete() {
  wait_for 30 txn_state "$@" && return 0
  why="$2 is not $3 within 30s (exit $rc): $(words | tr '\n' '|') $e"
  return 1
}
txn_list() {
  txn_complete txn-describe-committed "$txn_commit" CompleteCommit &&
    txn_complete txn-describe-aborted "$txn_abort" CompleteAbort || return 1
  kl txn-list txn list
  ok_rc && line "TRANSACTIONAL-ID COORDINATOR STATE PRODUCER-ID EPOCH TIMEOUT PARTITIONS" &&
    match "$txn_commit [0-9]+ CompleteCommit [0-9]+ [0-9]+ 1m0s -" &&
    match "$txn_abort [0-9]+ CompleteAbort [0-9]+ [0-9]+ 1m0s -" || return 1
  kl txn-list-state txn list --state completeabort
  ok_rc && match "$txn_abort .*" && lacks "$txn_commit .*"
}
txn_describe() {
  kl txn-describe txn describe "$txn_commit" "$txn_abort"
  ok_rc && line "TRANSACTIONAL-ID COORDINATOR STATE PRODUCER-ID EPOCH TIMEOUT START PARTITIONS" &&
    match "$txn_commit [0-9]+ CompleteCommit [0-9]+ [0-9]+ 1m0s [0-9T:.-]+Z -" &&
    match "$txn_abort [0-9]+ CompleteAbort [0-9]+ [0-9]+ 1m0s [0-9T:.-]+Z -" || return 1
  kl txn-describe-json --format json txn describe "$txn_commit"
  ok_rc && py "d['version'] == 1 and [(t['transactional_id'], t['state'], t['timeout_ms'], t['partitions']) for t in d['transactions']] == [('$txn_commit', 'CompleteCommit', 60000, [])] and d['transactions'][0]['producer_id'] >= 0"
}
txn_describe_missing() {
  kl txn-describe-missing txn describe "kc-notxn-$run"
  fails_with 1 "TRANSACTIONAL_ID_NOT_FOUND"
}
# An open transaction: Ongoing with its partition, its first offset in txn
# producers, held back from read_committed, not hanging; then committed.
# open_txn_checks: what the commands show while $txn_open is open.
open_txn_checks() {
  local start
  kl txn-describe-open txn describe "$txn_open"
  ok_rc && match "$txn_open [0-9]+ Ongoing [0-9]+ [0-9]+ 1m0s [0-9T:.-]+Z $ttopic\[0\]" || return 1
  kl txn-list-ongoing txn list --state Ongoing
  ok_rc && match "$txn_open [0-9]+ Ongoing [0-9]+ [0-9]+ 1m0s $ttopic\[0\]" || return 1
  kl txn-producers-open txn producers "$ttopic/0"
  ok_rc || return 1
  start=$(words | awk '$1 == "'"$ttopic"'" && $NF != "-" { print $NF }')
  if [ "$start" != 8 ]; then
    why="txn producers shows open transactions at '$start', want 8: $(words | tr '\n' '|')"
    return 1
  fi
  kl txn-hanging-open txn hanging --topic "$ttopic" --max-age 0s
  expect_lines 1 "txn hanging during the open transaction" || return 1
  kl consume-held-back consume "$ttopic" -e -f '%v\n'
  expect_out $'c1\nc2\nc3\nc4\nc5' "read_committed -e during the open transaction"
}
txn_open() {
  local ok=0
  open_txn "$txn_open" produce-txn-open || { end_txn produce-txn-open abort; return 1; }
  open_txn_checks || ok=1
  end_txn produce-txn-open commit
  [ "$ok" -eq 0 ] || return 1
  [ "$rc" -eq 0 ] || { why="klog produce --txn-id exited $rc at the end of its input: $e"; return 1; }
  txn_complete txn-describe-closed "$txn_open" CompleteCommit || return 1
  match "$txn_open [0-9]+ CompleteCommit [0-9]+ [0-9]+ 1m0s [0-9T:.-]+Z -"
}
txn_producers() {
  kl txn-producers txn producers "$ttopic"
  ok_rc && line "TOPIC PARTITION PRODUCER-ID EPOCH LAST-SEQUENCE LAST-TIMESTAMP COORDINATOR-EPOCH TXN-START-OFFSET" || return 1
  local n
  n=$(words | grep -cE "^$ttopic 0 [0-9]+ [0-9]+ -?[0-9]+ [0-9T:.-]+Z -?[0-9]+ -$")
  [ "$n" -eq 3 ] && return 0
  why="want 3 producers without an open transaction on $ttopic/0, got $n: $(words | tr '\n' '|')"
  return 1
}
txn_hanging() {
  kl txn-hanging txn hanging --max-age 0s
  expect_lines 1 "txn hanging" &&
    line "TOPIC PARTITION PRODUCER-ID EPOCH COORDINATOR-EPOCH START-OFFSET LAST-TIMESTAMP TRANSACTIONAL-ID COORDINATOR-STATE"
}
txn_abort_none() {
  kl txn-abort-none txn abort --topic "$ttopic" --partition 0 --start-offset 0 --yes
  fails_with 1 "no open transaction starts at this offset"
}

say "target $target at $brokers, run suffix $run"
t0=$SECONDS
"$here/kafka.sh" fetch >/dev/null || { echo "FAIL klogcmds/fetch: kafka.sh fetch failed"; exit 1; }
check topic-create topic_create
check topic-create-exists topic_create_exists
check topic-create-invalid topic_create_invalid
check topic-list topic_list
check topic-describe topic_describe
check topic-describe-missing topic_describe_missing
check produce-keyed produce_keyed
check produce-partition produce_partition
check produce-bad-partition produce_bad_partition
check produce-codecs produce_codecs
check produce-acks produce_acks
check produce-tombstone produce_tombstone
check produce-auto-create produce_auto_create
check produce-json-copy produce_json_copy
check produce-txn-commit produce_txn_commit
check produce-txn-abort produce_txn_abort
check consume-all consume_all
check consume-json-headers consume_json_headers
check consume-offsets consume_offsets
check consume-time consume_time
check consume-idle-timeout consume_idle_timeout
check consume-missing consume_missing
check consume-read-committed consume_read_committed
check consume-group consume_group
check topic-list-internal topic_list_internal
check produce-more produce_more
check group-list group_list
check group-describe group_describe
check group-describe-missing group_describe_missing
check group-describe-live group_describe_live
check group-describe-kip848 group_describe_848
check group-seek group_seek
check group-delete group_delete
check txn-list txn_list
check txn-describe txn_describe
check txn-describe-missing txn_describe_missing
check txn-open txn_open
check txn-producers txn_producers
check txn-hanging txn_hanging
check txn-abort-none txn_abort_none
check topic-trim topic_trim
check topic-alter-config topic_alter_config
check topic-alter-config-invalid topic_alter_config_invalid
check topic-add-partitions topic_add_partitions
check topic-delete topic_delete
echo "klogcmds ($target): $passed passed, $failed failed ($((SECONDS - t0))s)"
[ "$failed" -eq 0 ]
