#!/usr/bin/env bash
# The on-disk format, proven compatible both ways with Apache Kafka 4.4.0.
#
#   scripts/kafka/ondisk.sh [--keep]
#
# klog -> Kafka: klog up --data-dir writes a topic with real traffic (plain
#   records with keys and headers, every codec, idempotent producers, a
#   committed and an aborted transaction; small segments, so several roll and
#   the indexes fill). Kafka's DumpLogSegments then reads the partitions of a
#   SIGKILLed copy and of a cleanly stopped one (--deep-iteration over .log,
#   .index, .timeindex, .txnindex and .snapshot; --verify-index-only), and
#   must report no error, mismatch or exception; leader-epoch-checkpoint,
#   partition.metadata and the offset checkpoints are checked against
#   Kafka's text formats. A copy with one flipped byte must fail the check.
#   klog log dump --verify passes on the data directory and fails, naming
#   the file, on each flipped copy.
# Kafka -> klog: the reference broker (kafka.sh start) takes the same
#   traffic and is stopped cleanly; its partition directories replace those
#   of the same topic in a klog data directory (created in klog first, since
#   klog's metadata lives in its Raft log); klog starts, recovers them, and
#   serves every record with the offsets, keys, values, headers and
#   timestamps Kafka served, read_committed and read_uncommitted. Last,
#   Kafka itself opens klog's partition directories (with Kafka's topic id
#   in partition.metadata) and serves what klog served. klog log dump
#   --verify passes on Kafka's partitions, and its --print-data shows the
#   records klog consume read from Kafka, line for line.
# Compacted: klog's cleaner compacts a keyed topic (every codec, tombstones,
#   committed and aborted transactions) until its checkpoint reaches the
#   active segment; every key's latest committed value is still served, no
#   aborted record is (read_committed or read_uncommitted), and Kafka's
#   DumpLogSegments and klog log dump --verify read the cleaned segments
#   without error and without an aborted record.
#
# Prints "PASS ondisk/NAME" or "FAIL ondisk/NAME: why" per check and exits 1
# if any failed. The klog binary is built into a temporary directory unless
# KLOG_BIN names one. --keep leaves the work directory (printed) in place.
#
# Environment:
#   KLOG_BIN              klog binary to use (default: go build ./cmd/klog)
#   KLOG_ONDISK_TIMEOUT   seconds one tool or client may take (default 120)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../smoke/lib.sh
source "$root/scripts/smoke/lib.sh"

keep=0
case ${1:-} in
--keep) keep=1 ;;
'') ;;
*) echo "usage: ondisk.sh [--keep]" >&2; exit 2 ;;
esac
step_timeout=${KLOG_ONDISK_TIMEOUT:-120}
topic=ondisk
partitions=2

work=$(mktemp -d) || exit 1
kafka_run=''
cleanup() {
  smoke_stop_broker >/dev/null 2>&1
  [ -n "$kafka_run" ] && "$here/kafka.sh" stop "$kafka_run" >/dev/null 2>&1
  if [ "$keep" -eq 1 ]; then
    echo "ondisk: work directory kept: $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

passed=0
failed=0
say() { echo "ondisk: $*" >&2; }
pass() { echo "PASS ondisk/$1"; passed=$((passed + 1)); }
fail() { echo "FAIL ondisk/$1: $2"; failed=$((failed + 1)); }

if [ -n "${KLOG_BIN:-}" ]; then
  klog=$KLOG_BIN
else
  klog=$work/klog
  say "building klog"
  (cd "$root" && go build -o "$klog" ./cmd/klog) || { say "go build failed"; exit 1; }
fi
"$here/kafka.sh" fetch || exit 1

# kl ARGS... runs a klog client command with a bound.
kl() { timeout -k 5 "$step_timeout" "$klog" "$@"; }

# klog_up DIR [ARGS...] starts klog on data directory DIR; sets BROKERS.
# smoke_start_broker runs --memory, so this is its on-disk twin; its log is
# DIR.out and DIR.err.
klog_up() {
  local dir=$1 port deadline
  shift
  port=$(smoke_free_port) || { say "no free port"; return 1; }
  # Emptied here, not by the redirection below: that runs in the child,
  # and until it does, the wait would read the BROKERS= line of an
  # earlier klog_up on the same DIR (adopt's) and return before this
  # klog listens.
  : >"$dir.out"
  "$klog" up --data-dir "$dir" --listen "127.0.0.1:$port" --log-level info "$@" \
    >"$dir.out" 2>"$dir.err" </dev/null &
  SMOKE_BROKER_PID=$!
  deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if grep -qs 'BROKERS=' "$dir.out"; then
      BROKERS=127.0.0.1:$port
      return 0
    fi
    kill -0 "$SMOKE_BROKER_PID" 2>/dev/null || break
    sleep 0.1
  done
  say "klog up --data-dir $dir did not get ready; its log:"
  tail -n 30 "$dir.err" >&2
  smoke_stop_broker >/dev/null 2>&1
  return 1
}

# klog_kill sends SIGKILL to the running klog and reaps it.
klog_kill() {
  kill -KILL "$SMOKE_BROKER_PID" 2>/dev/null
  wait "$SMOKE_BROKER_PID" 2>/dev/null
  SMOKE_BROKER_PID=
}

# records N PREFIX prints N "key value" lines, values about 200 bytes.
records() {
  awk -v n="$1" -v p="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s-k%d %s-v%d-%0190d\n", p, i % 97, p, i, i * 7919 }'
}

# produce_mix BROKERS PLAIN_RECORDS PER_RUN writes the traffic to $topic:
# plain keyed records with headers, PER_RUN a klog produce run (one batch
# per partition each, so many batches and index entries), 300 records with
# each codec, every run an idempotent producer (klog produce with
# acks=all), one committed and one aborted transaction.
produce_mix() {
  local b=$1 n=$2 per=$3 c i
  for i in $(seq 1 $((n / per))); do
    records "$per" "plain$i" | kl -b "$b" produce "$topic" -K ' ' -H h1=v1 -H "run=$i" -q ||
      { say "produce plain $i failed"; return 1; }
  done
  for c in gzip snappy lz4 zstd; do
    for i in 1 2; do
      records 300 "$c$i" | kl -b "$b" produce "$topic" -z "$c" -K ' ' -H "codec=$c" -q ||
        { say "produce $c failed"; return 1; }
    done
  done
  records 40 committed | kl -b "$b" produce "$topic" -K ' ' -H txn=commit --txn-id "ondisk-commit-$RANDOM" -q ||
    { say "transactional produce (commit) failed"; return 1; }
  records 30 aborted | produce_aborted abort 30 "$b" "$topic" "ondisk-abort-$RANDOM" -H txn=abort || return 1
  records 20 after | kl -b "$b" produce "$topic" -z lz4 -K ' ' -q || { say "produce after failed"; return 1; }
}

# produce_aborted NAME N BROKERS TOPIC TXN_ID [FLAGS...] writes the N
# records on its input ("key value" lines) to TOPIC in a transaction of
# TXN_ID (klog produce FLAGS), waits until klog produce reports every one
# landed (topic[partition]@offset lines, in $work/NAME.err), then
# interrupts it: it aborts.
produce_aborted() {
  local name=$1 n=$2 b=$3 t=$4 id=$5 pid deadline rc
  shift 5
  rm -f "$work/fifo"
  mkfifo "$work/fifo" || return 1
  # klog itself in the background (no timeout(1) or function between), so
  # that the SIGINT reaches it; the loop below bounds the wait.
  "$klog" -b "$b" produce "$t" -K ' ' --txn-id "$id" "$@" <"$work/fifo" 2>"$work/$name.err" &
  pid=$!
  exec 4>"$work/fifo"
  cat >&4
  deadline=$((SECONDS + step_timeout))
  while [ "$(grep -c '@' "$work/$name.err")" -lt "$n" ] && [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -INT "$pid" 2>/dev/null
  deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  exec 4>&-
  wait "$pid"
  rc=$?
  if [ "$(grep -c '@' "$work/$name.err")" -lt "$n" ] || [ "$rc" -eq 0 ] ||
    ! grep -q 'abort' "$work/$name.err"; then
    say "the aborted transaction $name did not go as planned (exit $rc):"
    cat "$work/$name.err" >&2
    return 1
  fi
}

# --- the DumpLogSegments check ----------------------------------------
# dump NAME DIR... runs DumpLogSegments over the partition directories DIR:
# --deep-iteration over every segment file, then --verify-index-only over
# the indexes. Output in $work/NAME.dump; prints the problems found (empty
# when none).
dump() {
  local name=$1 files rc1 rc2
  shift
  files=$(find "$@" -maxdepth 1 -type f \( -name '*.log' -o -name '*.index' -o -name '*.timeindex' \
    -o -name '*.txnindex' -o -name '*.snapshot' \) | sort | paste -sd,)
  timeout -k 5 "$step_timeout" "$here/kafka.sh" tool dump-log --deep-iteration --files "$files" \
    >"$work/$name.dump" 2>&1
  rc1=$?
  files=$(find "$@" -maxdepth 1 -type f \( -name '*.index' -o -name '*.timeindex' \) | sort | paste -sd,)
  timeout -k 5 "$step_timeout" "$here/kafka.sh" tool dump-log --verify-index-only --files "$files" \
    >"$work/$name.verify" 2>&1
  rc2=$?
  [ "$rc1" -eq 0 ] || echo "DumpLogSegments --deep-iteration exited $rc1"
  [ "$rc2" -eq 0 ] || echo "DumpLogSegments --verify-index-only exited $rc2"
  # DumpLogSegments 4.4 starts its offset continuity check at -1 for every
  # file, so a segment whose base offset is not 0 always reports "-1 is
  # followed by BASE" (Kafka's own segments too); only that pair is dropped.
  # File names are no finding: the "Dumping FILE" lines go, and paths
  # lose the work directory.
  cat "$work/$name.dump" "$work/$name.verify" | grep -v '^Dumping ' | sed -E 's|[^ ]*/||g' |
    grep -v -E '^  -1 is followed by [0-9]+$' |
    grep -i -E "error|mismatch|exception|corrupt|invalid|isvalid: false|doesn't match|does not match|not found in the log|out of order|non-consecutive|warn" |
    grep -v -E '^Non-consecutive offsets in .*\.log$' | head -n 20
  # A non-consecutive pair other than the -1 one is a real gap.
  grep -A1000 '^Non-consecutive offsets' "$work/$name.dump" | grep -E '^  [0-9]+ is followed by' | head -n 5
}

# expect_dump NAME [notxn]: the dump shows every kind of batch the traffic
# wrote; notxn: an aborted transaction in .txnindex is not required.
expect_dump() {
  local d=$work/$1.dump what notxn=${2:-}
  for what in 'compresscodec: none' 'compresscodec: gzip' 'compresscodec: snappy' \
    'compresscodec: lz4' 'compresscodec: zstd' 'isTransactional: true' \
    'endTxnMarker: COMMIT' 'endTxnMarker: ABORT' 'headerKeys: \[h1,run\]'; do
    grep -q "$what" "$d" || { echo "no '$what' in the dump"; return; }
  done
  grep -q -E '^offset: [0-9]+ position: [0-9]+' "$d" || { echo "no offset index entry in the dump"; return; }
  grep -q -E '^timestamp: [0-9]+ offset: [0-9]+' "$d" || { echo "no time index entry in the dump"; return; }
  [ -n "$notxn" ] || txn_entry "$d" ||
    { echo "no aborted transaction entry (.txnindex) in the dump"; return; }
  grep -q -E '^producerId: [0-9]+ producerEpoch' "$d" || { echo "no producer snapshot entry in the dump"; return; }
  [ "$(grep -c '^Dumping .*\.log$' "$d")" -gt "$partitions" ] || echo "no partition rolled a second segment"
}

# txn_entry DUMP: DumpLogSegments printed an aborted transaction of a
# .txnindex.
txn_entry() { grep -q -E '^version: 0 producerId: [0-9]+ firstOffset: [0-9]+ lastOffset: [0-9]+ lastStableOffset: [0-9]+$' "$1"; }

# check_checkpoint FILE: Kafka's CheckpointFile text format: a version line
# (0), a count line, then that many entries (EPOCH OFFSET, or TOPIC
# PARTITION OFFSET for the broker-wide offset checkpoints), newline-ended.
check_checkpoint() {
  local f=$1 fields=$2
  awk -v fields="$fields" '
    NR == 1 { if ($0 != "0") { print FILENAME ": version line is \"" $0 "\", not 0"; bad = 1 } next }
    NR == 2 { if ($0 !~ /^[0-9]+$/) { print FILENAME ": count line is \"" $0 "\""; bad = 1 } n = $0; next }
    { if (NF != fields) { print FILENAME ": line " NR " has " NF " fields, not " fields; bad = 1 }
      for (i = (fields == 3 ? 2 : 1); i <= NF; i++) if ($i !~ /^-?[0-9]+$/) { print FILENAME ": line " NR ": \"" $i "\" is not a number"; bad = 1 } }
    END { if (!bad && NR - 2 != n) print FILENAME ": count says " n ", " NR - 2 " entries follow" }' "$f"
  [ -z "$(tail -c 1 "$f")" ] || echo "$f: does not end in a newline"
}

# check_formats DATADIR: the text files of a data directory, in Kafka's
# formats; when Kafka's own files are in $work/kafka-ref (from
# kafka_to_klog), partition.metadata must equal Kafka's byte for byte but
# for the topic id, and leader-epoch-checkpoint must equal Kafka's.
check_formats() {
  local dir=$1 p f out=''
  for p in "$dir/$topic"-*; do
    f=$p/leader-epoch-checkpoint
    [ -f "$f" ] || { out+="$f: missing"$'\n'; continue; }
    out+=$(check_checkpoint "$f" 2)
    if [ -f "$work/kafka-ref/${p##*/}/leader-epoch-checkpoint" ]; then
      cmp -s "$f" "$work/kafka-ref/${p##*/}/leader-epoch-checkpoint" ||
        out+="${f#"$work"/}: differs from Kafka's: $(od -An -c "$f" | tr -s ' ') vs $(od -An -c "$work/kafka-ref/${p##*/}/leader-epoch-checkpoint" | tr -s ' ')"$'\n'
    fi
    f=$p/partition.metadata
    grep -q -x -E 'version: 0' "$f" && grep -q -E '^topic_id: [A-Za-z0-9_-]{22}$' "$f" ||
      out+="${f#"$work"/}: not Kafka's 'version: 0' / 'topic_id: ID' format"$'\n'
    if [ -f "$work/kafka-ref/${p##*/}/partition.metadata" ]; then
      cmp -s <(sed 's/^topic_id: .*/topic_id: ID/' "$f") \
        <(sed 's/^topic_id: .*/topic_id: ID/' "$work/kafka-ref/${p##*/}/partition.metadata") ||
        out+="${f#"$work"/}: differs from Kafka's beyond the topic id: $(od -An -c "$f" | tr -s ' ' | tail -c 40) vs $(od -An -c "$work/kafka-ref/${p##*/}/partition.metadata" | tr -s ' ' | tail -c 40)"$'\n'
    fi
  done
  for f in recovery-point-offset-checkpoint log-start-offset-checkpoint; do
    [ -f "$dir/$f" ] && out+=$(check_checkpoint "$dir/$f" 3)
  done
  printf '%s' "$out"
}

# check_dump NAME DATADIR [notxn]: DumpLogSegments and the formats over the
# topic.
check_dump() {
  local name=$1 dir=$2 problems
  problems=$(dump "$name" "$dir/$topic"-*)
  [ -n "$problems" ] || problems=$(expect_dump "$name" "${3:-}")
  [ -n "$problems" ] || problems=$(check_formats "$dir")
  if [ -n "$problems" ]; then
    fail "$name" "$(head -n 5 <<<"$problems" | paste -sd'|')"
    return 1
  fi
  pass "$name ($(grep -c '^baseOffset' "$work/$name.dump") batches, $(grep -c '^Dumping .*\.log$' "$work/$name.dump") segments)"
}

# klog_verify NAME DIR: klog log dump --verify passes on every file of the
# data or partition directory DIR.
klog_verify() {
  if kl log dump --verify "$2" >"$work/$1.klogverify" 2>&1; then
    pass "$1 ($(grep -c ': ok$' "$work/$1.klogverify") files)"
  else
    fail "$1" "$(grep -v ': ok$' "$work/$1.klogverify" | sed 's|[^ ]*/||g' | head -n 3 | cut -c1-200 | paste -sd'|')"
  fi
}

# klog_print_data NAME DIR CONSUMED: klog log dump --print-data of DIR's
# segments holds, sorted, the records of CONSUMED (klog consume -f json
# --read-uncommitted, sorted): the same JSON lines.
klog_print_data() {
  kl log dump --print-data -f json "$2" 2>"$work/$1.err" | grep -v '^{"type":' | sort >"$work/$1.records"
  if [ -s "$work/$1.records" ] && cmp -s "$3" "$work/$1.records"; then
    pass "$1 ($(wc -l <"$work/$1.records") records)"
  else
    fail "$1" "$(diff "$3" "$work/$1.records" | head -n 4 | cut -c1-200 | paste -sd'|') $(head -c 200 "$work/$1.err")"
  fi
}

# --- klog -> Kafka ------------------------------------------------------
klog_to_kafka() {
  local k=$work/klog-data killed=$work/klog-killed
  mkdir -p "$k"
  klog_up "$k" || { fail klog-write "klog did not start"; return; }
  kl -b "$BROKERS" topic create "$topic" -p "$partitions" -c internal.segment.bytes=65536 \
    -c index.interval.bytes=1024 >/dev/null || { fail klog-write "topic create failed"; return; }
  produce_mix "$BROKERS" 4000 100 || { fail klog-write "producing the traffic failed"; return; }
  klog_kill
  cp -a "$k" "$killed"
  # The .txnindex entry of the aborted transaction is written as its marker
  # is appended, as Kafka writes it, so the killed copy has it; the
  # active segment's .index and .timeindex entries wait for the next flush
  # (a sparse index with fewer entries is still a valid one).
  check_dump klog-sigkill "$killed/node-0"
  # The killed directory restarts (recovery), takes more and stops cleanly.
  klog_up "$k" || { fail klog-restart "klog did not restart after SIGKILL"; return; }
  records 50 again | kl -b "$BROKERS" produce "$topic" -z zstd -K ' ' -q || fail klog-restart "produce after the restart failed"
  consume_json "$BROKERS" klog-own || fail klog-restart "consuming from klog failed"
  if smoke_stop_broker; then pass klog-clean-stop; else fail klog-clean-stop "klog did not stop cleanly"; fi
  grep -E 'truncating|inconsistent|unreadable|overlaps' "$k.err" && fail klog-restart "recovery after SIGKILL repaired something (above)"
  check_dump klog-clean "$k/node-0"
  klog_verify klog-log-verify "$k/node-0"

  # The check can fail: one byte flipped inside a record of the first
  # batch, or inside the first offset index entry.
  corrupt "$k" "$work/flip-log" log 200
  corrupt "$k" "$work/flip-index" index 3
  kafka_serves_klog "$k/node-0"
}

# kafka_serves_klog KLOGDATA: Kafka itself opens klog's partitions. In the
# stopped Kafka of kafka_to_klog, its $topic-N directories are replaced by
# klog's, with partition.metadata's topic id set to Kafka's (with another id
# Kafka 4.4 sets the directory aside: "Log in DIR marked stray and renamed
# to DIR.UUID-stray", and starts the partition empty); without its clean
# shutdown marker Kafka recovers them from its recovery point, 0. It must
# serve what klog served, with no recovery warning.
kafka_serves_klog() {
  local src=$1 kdata p n id deadline pid
  [ -n "$kafka_run" ] || { fail kafka-adopt "no stopped Kafka to adopt klog's partitions (Kafka -> klog failed?)"; return; }
  kdata=$kafka_run/node-0/data
  id=$(sed -n 's/^topic_id: //p' "$kdata/$topic-0/partition.metadata")
  for p in "$src/$topic"-*; do
    n=${p##*/}
    rm -rf "${kdata:?}/$n"
    cp -a "$p" "$kdata/$n"
    printf 'version: 0\ntopic_id: %s' "$id" >"$kdata/$n/partition.metadata"
  done
  rm -f "$kdata/.kafka_cleanshutdown"
  # kafka.sh has no restart; its tool runs kafka.Kafka (logging at WARN)
  # and its pid file lets kafka.sh stop stop it.
  KLOG_KAFKA_TOOL_HEAP=${KLOG_KAFKA_HEAP:-512m} "$here/kafka.sh" tool kafka.Kafka \
    "$kafka_run/node-0/server.properties" >"$work/kafka-adopt.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$kafka_run/node-0/pid"
  BROKERS=$(cat "$kafka_run/brokers")
  deadline=$((SECONDS + step_timeout))
  until kl -b "$BROKERS" consume "$topic" -f json -e --timeout 5s >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      fail kafka-adopt "Kafka did not serve klog's partitions: $(grep -m2 -E 'ERROR|Exception' "$work/kafka-adopt.log" | paste -sd'|')"
      return
    fi
    sleep 0.5
  done
  consume_json "$BROKERS" kafka-adopt || { fail kafka-adopt "consuming from Kafka failed"; return; }
  KLOG_KAFKA_KEEP=1 "$here/kafka.sh" stop "$kafka_run" || fail kafka-adopt "Kafka did not stop cleanly"
  if grep -i -E 'truncat|invalid|corrupt|ERROR|Exception' "$work/kafka-adopt.log" >"$work/kafka-adopt.warn"; then
    fail kafka-adopt-recovery "Kafka's recovery of klog's segments: $(head -n 3 "$work/kafka-adopt.warn" | cut -c1-200 | paste -sd'|')"
  else
    pass kafka-adopt-recovery
  fi
  for n in committed uncommitted; do
    if cmp -s "$work/klog-own.$n" "$work/kafka-adopt.$n"; then
      pass "kafka-serves-klog-read-$n ($(wc -l <"$work/kafka-adopt.$n") records)"
    else
      fail "kafka-serves-klog-read-$n" "$(diff "$work/klog-own.$n" "$work/kafka-adopt.$n" | head -n 4 | cut -c1-200 | paste -sd'|')"
    fi
  done
}

# corrupt SRC DST EXT POS copies the data directory SRC to DST, flips the
# byte at POS of the first non-empty .EXT file of partition 0, and expects
# the check to fail.
corrupt() {
  local f
  cp -a "$1" "$2"
  f=$(find "$2/node-0/$topic-0" -name "*.$3" -size +0 | sort | head -n 1)
  [ -n "$f" ] || { fail "corrupt-$3" "no non-empty .$3 file to corrupt"; return; }
  # shellcheck disable=SC2059 # the format is the byte, built on purpose
  printf "\\x$(printf '%02x' $((0x$(od -An -tx1 -j "$4" -N 1 "$f" | tr -d ' ') ^ 0xff)))" |
    dd of="$f" bs=1 seek="$4" conv=notrunc status=none
  # In a subshell: its FAIL line is the expected outcome, not a failure.
  if (check_dump "flip-$3" "$2/node-0") >"$work/flip-$3.result"; then
    fail "corrupt-$3-detected" "DumpLogSegments found nothing wrong after byte $4 of ${f##*/} was flipped"
  else
    pass "corrupt-$3-detected (byte $4 of ${f##*/}: $(sed 's/^FAIL ondisk\/flip-[a-z]*: //' "$work/flip-$3.result" | grep -o -i -E "isvalid: false|[^|]*(mismatch|match|exception|error)[^|]*" | head -n 1 | cut -c1-140))"
  fi
  # klog log dump --verify exits 1 and names the file.
  if kl log dump --verify "$2/node-0/$topic-0" >/dev/null 2>"$work/flip-$3.klog"; then
    fail "corrupt-$3-klog-verify" "klog log dump --verify found nothing wrong after byte $4 of ${f##*/} was flipped"
  elif grep -q "/${f##*/}: " "$work/flip-$3.klog"; then
    pass "corrupt-$3-klog-verify ($(grep -m1 "/${f##*/}: " "$work/flip-$3.klog" | sed 's|^klog: [^ ]*/||' | cut -c1-140))"
  else
    fail "corrupt-$3-klog-verify" "exit 1 without naming ${f##*/}: $(head -n 2 "$work/flip-$3.klog" | paste -sd'|')"
  fi
}

# --- Kafka -> klog ------------------------------------------------------
# consume_json BROKERS NAME [TOPIC]: every record of TOPIC (default
# $topic) as sorted JSON lines, read_committed into NAME.committed,
# read_uncommitted into NAME.uncommitted; as served, in NAME.c.raw and
# NAME.u.raw.
consume_json() {
  local b=$1 name=$2 t=${3:-$topic}
  if ! kl -b "$b" consume "$t" -f json -e >"$work/$name.c.raw" 2>"$work/$name.c.err" ||
    ! kl -b "$b" consume "$t" -f json -e --read-uncommitted >"$work/$name.u.raw" 2>"$work/$name.u.err"; then
    cat "$work/$name.c.err" "$work/$name.u.err" >&2 2>/dev/null
    return 1
  fi
  sort "$work/$name.c.raw" >"$work/$name.committed"
  sort "$work/$name.u.raw" >"$work/$name.uncommitted"
}

# adopt DIR: a klog data directory DIR learns the topic (klog's metadata is
# its Raft log: the topic must exist there), klog stops, and its partition
# directories are swapped for Kafka's from $work/kafka-ref, partition.metadata
# included, with klog's topic id written in place of Kafka's: a log of
# another topic id is another topic's, which klog, as Kafka, moves aside as
# stray and never serves (the same as klog_to_kafka does the other way).
adopt() {
  local a=$1 p n id ids=''
  mkdir -p "$a"
  klog_up "$a" || { fail klog-adopt "klog did not start"; return 1; }
  kl -b "$BROKERS" topic create "$topic" -p "$partitions" -c segment.bytes=1048576 \
    -c index.interval.bytes=1024 >/dev/null || { fail klog-adopt "topic create on klog failed"; return 1; }
  smoke_stop_broker || { fail klog-adopt "klog did not stop cleanly"; return 1; }
  for p in "$work/kafka-ref/$topic"-*; do
    n=${p##*/}
    ids+="$n: klog $(sed -n 's/^topic_id: //p' "$a/node-0/$n/partition.metadata"), Kafka $(sed -n 's/^topic_id: //p' "$p/partition.metadata"); "
    id=$(sed -n 's/^topic_id: //p' "$a/node-0/$n/partition.metadata")
    rm -rf "${a:?}/node-0/$n"
    cp -a "$p" "$a/node-0/$n"
    sed -i "s/^topic_id: .*/topic_id: $id/" "$a/node-0/$n/partition.metadata"
  done
  say "topic ids: $ids"
  # Without klog's clean-shutdown marker, klog recovers the swapped logs from
  # its recovery point (0: they were empty), so every batch is checked.
  rm -f "$a/node-0/.kafka_cleanshutdown"
  : >"$a.err"
}

# end_offset NAME PARTITION: the offset after the last batch of a partition
# in a dump.
end_offset() {
  awk -v want="/$topic-$2/" '
    /^Dumping / { on = index($0, want) > 0 && $2 ~ /\.log$/ }
    on && /^baseOffset: / { for (i = 1; i < NF; i++) if ($i == "lastOffset:" && $(i + 1) + 0 > max) max = $(i + 1) + 0 }
    END { print max + 1 }' "$work/$1.dump"
}

kafka_to_klog() {
  local out kdata a=$work/adopt p n ids
  out=$("$here/kafka.sh" start) || { fail kafka-write "kafka.sh start failed"; return; }
  eval "$out"
  kafka_run=$KAFKA_RUN_DIR
  kdata=$KAFKA_RUN_DIR/node-0/data
  # segment.bytes is at least 1 MiB on both (KIP-1030); Kafka's segments
  # stay at that size, as they always were here.
  kl -b "$BROKERS" topic create "$topic" -p "$partitions" -r 1 -c segment.bytes=1048576 \
    -c index.interval.bytes=1024 >/dev/null || { fail kafka-write "topic create on Kafka failed"; return; }
  produce_mix "$BROKERS" 16000 400 || { fail kafka-write "producing to Kafka failed"; return; }
  consume_json "$BROKERS" kafka || { fail kafka-write "consuming from Kafka failed"; return; }
  KLOG_KAFKA_KEEP=1 "$here/kafka.sh" stop "$kafka_run" || { fail kafka-write "Kafka did not stop cleanly"; return; }
  mkdir -p "$work/kafka-ref"
  cp -a "$kdata/$topic"-* "$work/kafka-ref/"
  # The control: Kafka's own segments pass the same check.
  check_dump kafka-control "$work/kafka-ref" || return
  klog_verify klog-log-verify-kafka "$work/kafka-ref"
  klog_print_data klog-log-print-data-kafka "$work/kafka-ref" "$work/kafka.uncommitted"
  grep -c . "$work/kafka.committed" "$work/kafka.uncommitted" | sed 's/^/ondisk: /' >&2

  adopt "$a" || return
  klog_up "$a" || { fail klog-adopt "klog did not start on Kafka's partitions: $(grep -m1 -iE 'error|fail' "$a.err")"; return; }
  if grep -E 'truncat|inconsistent|unreadable|overlaps|dropping|rebuild|corrupt' "$a.err" >"$work/adopt.warn"; then
    fail klog-adopt-recovery "klog's recovery changed Kafka's segments: $(head -n 3 "$work/adopt.warn" | paste -sd'|')"
  else
    pass klog-adopt-recovery
  fi
  consume_json "$BROKERS" klog || { fail klog-adopt-serve "consuming from klog failed"; return; }
  if cmp -s "$work/kafka.committed" "$work/klog.committed"; then
    pass "klog-serves-kafka-read-committed ($(wc -l <"$work/klog.committed") records)"
  else
    fail klog-serves-kafka-read-committed "$(diff "$work/kafka.committed" "$work/klog.committed" | head -n 4 | cut -c1-200 | paste -sd'|')"
  fi
  if cmp -s "$work/kafka.uncommitted" "$work/klog.uncommitted"; then
    pass "klog-serves-kafka-read-uncommitted ($(wc -l <"$work/klog.uncommitted") records)"
  else
    fail klog-serves-kafka-read-uncommitted "$(diff "$work/kafka.uncommitted" "$work/klog.uncommitted" | head -n 4 | cut -c1-200 | paste -sd'|')"
  fi
  # The aborted records are there read_uncommitted, filtered read_committed.
  n=$(grep -c '"key":"aborted-' "$work/klog.uncommitted")
  if [ "$n" -eq 30 ] && ! grep -q '"key":"aborted-' "$work/klog.committed"; then
    pass klog-filters-kafka-aborted
  else
    fail klog-filters-kafka-aborted "read_uncommitted has $n aborted records (want 30), read_committed $(grep -c '"key":"aborted-' "$work/klog.committed") (want 0)"
  fi
  # The adopted logs take new records after Kafka's last offset.
  records 10 adopted | kl -b "$BROKERS" produce "$topic" -K ' ' -p 0 2>"$work/adopt.produce" >/dev/null
  n=$(end_offset kafka-control 0)
  if grep -q "^$topic\[0\]@$n\$" "$work/adopt.produce"; then
    pass "klog-appends-after-kafka (partition 0 at offset $n, Kafka's end offset)"
  else
    fail klog-appends-after-kafka "partition 0 ended at $n on Kafka; klog put the next records at $(head -n 1 "$work/adopt.produce")"
  fi
  if smoke_stop_broker; then pass klog-adopt-stop; else fail klog-adopt-stop "klog did not stop cleanly"; fi
  ids=''
  for p in "$work/kafka-ref/$topic"-*; do
    ids+="${p##*/} $(sed -n 's/^topic_id: //p' "$a/node-0/${p##*/}/partition.metadata") "
  done
  # klog does not compare partition.metadata's topic id with its metadata's
  # (Kafka renames such a directory to DIR.UUID-stray and starts the
  # partition empty); it serves the log and leaves Kafka's id in the file.
  say "partition.metadata after klog served them: $ids"

  # Recovery reads Kafka's batches: a torn write after the last one (junk
  # appended to partition 0's last segment) is cut off exactly there, and
  # every record before it is still served.
  a=$work/adopt-torn
  adopt "$a" || return
  p=$(find "$a/node-0/$topic-0" -name '*.log' | sort | tail -n 1)
  n=$(stat -c %s "$p")
  head -c 100 /dev/urandom >>"$p"
  klog_up "$a" || { fail klog-adopt-torn "klog did not start: $(grep -m1 -iE 'error|fail' "$a.err")"; return; }
  consume_json "$BROKERS" torn || { fail klog-adopt-torn "consuming from klog failed"; return; }
  smoke_stop_broker || fail klog-adopt-torn "klog did not stop cleanly"
  if grep -q "truncating damaged segment tail.*position=$n " "$a.err" && cmp -s "$work/kafka.uncommitted" "$work/torn.uncommitted"; then
    pass "klog-adopt-torn (recovery cut Kafka's segment at its end, byte $n; every record served)"
  else
    fail klog-adopt-torn "want a 'truncating damaged segment tail ... position=$n' warning and Kafka's records; klog logged: $(grep -v __transaction_state "$a.err" | grep -m2 -E 'WARN|ERROR' | paste -sd'|')"
  fi
}

# --- compacted segments -------------------------------------------------
# cleaner_progress PARTDIR prints, from klog log segments, a partition's
# cleaner checkpoint (its first dirty offset; -1 before the first pass),
# its active segment's base and the aborted transactions (.txnindex
# entries) of the segments below it; nothing when the files could not be
# read (a segment swapped away under the read).
cleaner_progress() {
  kl log segments -f json "$1" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["partitions"][0]
segs = p["segments"]
cp = p["cleaner_checkpoint"]
print(-1 if cp is None else cp, segs[-1]["base_offset"], sum(max(s["aborted_txns"], 0) for s in segs[:-1]))' 2>/dev/null
}

# klog_compacted: klog's cleaner compacts a topic (keyed records with every
# codec, tombstones, committed and aborted transactions of one
# transactional id; small segments, min.cleanable.dirty.ratio 0.01). Once
# its passes have covered everything below the active segment (the
# cleaner checkpoint at the active segment's base, every transaction
# below it), the latest committed value of every key is served,
# read_committed and read_uncommitted alike, no aborted record is, and
# records are gone; after a clean stop Kafka's DumpLogSegments reads the
# cleaned segments (their offset gaps are the cleaning, not a finding) and
# finds none of the aborted records in them, and klog log dump --verify
# passes on them.
klog_compacted() {
  local d=$work/compacted ct=ondisk-compact txn=ondisk-compact-txn produced=0 committed c i problems deadline
  local p pos=() n
  p=$d/node-0/$ct-0
  mkdir -p "$d"
  klog_up "$d" -X log.cleaner.backoff.ms=100 || { fail compacted "klog did not start"; return; }
  kl -b "$BROKERS" topic create "$ct" -p 1 -c cleanup.policy=compact -c internal.segment.bytes=8192 \
    -c min.cleanable.dirty.ratio=0.01 >/dev/null || { fail compacted "topic create failed"; smoke_stop_broker; return; }
  # Five rounds over 20 keys, a codec each; then tombstones for keys 0-4.
  i=0
  for c in none gzip snappy lz4 zstd; do
    i=$((i + 1))
    awk -v r="$i" 'BEGIN { for (j = 0; j < 100; j++) printf "ck%d r%d-%d-%0120d\n", j % 20, r, j, j }' |
      kl -b "$BROKERS" produce "$ct" -z "$c" -K ' ' -q || { fail compacted "produce $c failed"; smoke_stop_broker; return; }
    produced=$((produced + 100))
  done
  printf 'ck%d \n' 0 1 2 3 4 | kl -b "$BROKERS" produce "$ct" -K ' ' -Z -q ||
    { fail compacted "produce tombstones failed"; smoke_stop_broker; return; }
  produced=$((produced + 5))
  # Four transactions of one transactional id: tk0-tk9 committed
  # (commit1-), aborted newer values for them (aborted-) with keys ak0-ak4
  # that only aborted transactions write, tk5-tk9 committed again
  # (commit2-), then aborted values for tk0-tk4 and keys ak5-ak9. The
  # aborted records' offsets go to compacted-aborted.offsets.
  awk 'BEGIN { for (j = 0; j < 10; j++) printf "tk%d commit1-%d-%0120d\n", j, j, j }' |
    kl -b "$BROKERS" produce "$ct" -K ' ' -q --txn-id "$txn" ||
    { fail compacted "transactional produce (commit 1) failed"; smoke_stop_broker; return; }
  awk 'BEGIN { for (j = 0; j < 10; j++) printf "tk%d aborted-1-%d-%0120d\n", j, j, j
               for (j = 0; j < 5; j++) printf "ak%d aborted-1-%d-%0120d\n", j, j, j }' |
    produce_aborted compacted-abort1 15 "$BROKERS" "$ct" "$txn" -z lz4 ||
    { fail compacted "transactional produce (abort 1) failed"; smoke_stop_broker; return; }
  awk 'BEGIN { for (j = 5; j < 10; j++) printf "tk%d commit2-%d-%0120d\n", j, j, j }' |
    kl -b "$BROKERS" produce "$ct" -K ' ' -z zstd -q --txn-id "$txn" ||
    { fail compacted "transactional produce (commit 2) failed"; smoke_stop_broker; return; }
  awk 'BEGIN { for (j = 0; j < 5; j++) printf "tk%d aborted-2-%d-%0120d\n", j, j, j
               for (j = 5; j < 10; j++) printf "ak%d aborted-2-%d-%0120d\n", j, j, j }' |
    produce_aborted compacted-abort2 10 "$BROKERS" "$ct" "$txn" ||
    { fail compacted "transactional produce (abort 2) failed"; smoke_stop_broker; return; }
  produced=$((produced + 40))
  sed -n 's/^.*\]@\([0-9][0-9]*\)$/\1/p' "$work/compacted-abort1.err" "$work/compacted-abort2.err" \
    >"$work/compacted-aborted.offsets"
  # Rounds over 20 more keys roll segments until both aborted transactions'
  # markers (their .txnindex entries) are below the active segment; then
  # nothing more is written.
  deadline=$((SECONDS + 60))
  while :; do
    awk 'BEGIN { for (j = 0; j < 20; j++) printf "ck%d late-%d-%0120d\n", j + 5, j, j }' |
      kl -b "$BROKERS" produce "$ct" -K ' ' -q || { fail compacted "produce failed"; smoke_stop_broker; return; }
    produced=$((produced + 20))
    read -r -a pos <<<"$(cleaner_progress "$p")"
    [ "${pos[2]:-0}" -ge 2 ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail compacted "the aborted transactions were not below the active segment within 60s ($produced records written; cleaner checkpoint, active base, aborted below: ${pos[*]:-unreadable})"
      smoke_stop_broker
      return
    fi
  done
  # The cleaner's passes cover every segment below the active one: its
  # checkpoint (first dirty offset) reaches the active segment's base.
  deadline=$((SECONDS + 60))
  while :; do
    read -r -a pos <<<"$(cleaner_progress "$p")"
    if [ "${#pos[@]}" -eq 3 ] && [ "${pos[0]}" -ge "${pos[1]}" ]; then
      pass "compacted-cleaned (cleaner checkpoint ${pos[0]}, active segment base ${pos[1]}, $(grep -c "cleaned log.* log=$ct-0 " "$d.err") passes)"
      break
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail compacted-cleaned "the cleaner checkpoint of $ct-0 is ${pos[0]:-unreadable}, not at the active segment's base ${pos[1]:-unreadable}, 60s after the last write"
      break
    fi
    sleep 0.2
  done
  consume_json "$BROKERS" compacted "$ct" || { fail compacted "consume failed"; smoke_stop_broker; return; }
  smoke_stop_broker || fail compacted-stop "klog did not stop cleanly"
  # Read_committed and read_uncommitted alike, every key's last record is
  # its latest committed value: ck0-ck4 tombstones (delete.retention.ms
  # keeps them a day), ck5-ck24 their last "late" value, tk0-tk4 commit1-,
  # tk5-tk9 commit2-; no aborted value and no ak key; offsets strictly
  # increasing, fewer records than the committed ones written.
  committed=$((produced - $(grep -c . "$work/compacted-aborted.offsets")))
  for n in c u; do
    problems=$(python3 - "$work/compacted.$n.raw" "$committed" 2>"$work/compacted.$n.count" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
committed = int(sys.argv[2])
last, prev, out = {}, -1, []
for r in recs:
    if r["offset"] <= prev:
        out.append("offset %d after %d" % (r["offset"], prev))
    prev = r["offset"]
    last[r["key"]] = r["value"]
    if (r["key"] or "").startswith("ak") or (r["value"] or "").startswith("aborted-"):
        out.append("aborted record at offset %d: %s %s" % (r["offset"], r["key"], (r["value"] or "")[:12]))
want = {"ck%d" % k: None for k in range(5)}
want.update({"ck%d" % k: "late-" for k in range(5, 25)})
want.update({"tk%d" % k: "commit1-" for k in range(5)})
want.update({"tk%d" % k: "commit2-" for k in range(5, 10)})
for k, w in want.items():
    v = last.get(k, "missing")
    if (v is not None) if w is None else (v is None or not v.startswith(w)):
        out.append("%s: %r, want %s" % (k, v if v is None else v[:20], "its tombstone" if w is None else "its last %s value" % w))
if len(recs) >= committed:
    out.append("%d records served of %d committed: nothing removed" % (len(recs), committed))
print("|".join(out[:5]))
print("%d" % len(recs), file=sys.stderr)
PY
    )
    c=read_committed
    [ "$n" = u ] && c=read_uncommitted
    if [ -n "$problems" ]; then
      fail "compacted-$c" "$problems"
    else
      pass "compacted-$c ($(cat "$work/compacted.$n.count") of $committed committed records served after cleaning, every key's latest committed value, no aborted record)"
    fi
  done
  # DumpLogSegments over the cleaned partition: gaps are expected, any
  # other finding is not.
  # DumpLogSegments checks a time index entry against the largest record
  # timestamp of the batch it names; a batch the cleaner kept empty (a
  # producer's last, Kafka's RETAIN_EMPTY) has no record, so it reports
  # "log timestamp: -1" though the entry holds the batch header's max
  # timestamp, which is what Kafka's cleaner indexes too: on a segment
  # whose last batch it emptied (an idempotent producer's last, its keys
  # rewritten in the next segment), Kafka 4.4's cleaner leaves the same
  # .index and .timeindex entries, naming that batch, and DumpLogSegments
  # reports the same mismatch. Only mismatches of that kind are dropped,
  # and only when every mismatch is one.
  problems=$(dump compacted-dump "$p" | grep -v -E '^  [0-9]+ is followed by [0-9]+$')
  if [ "$(grep -c '^Found timestamp mismatch' "$work/compacted-dump.verify")" -eq \
    "$(grep -c -E '^  Index timestamp: [0-9]+, log timestamp: -1$' "$work/compacted-dump.verify")" ]; then
    problems=$(grep -v '^Found timestamp mismatch in ' <<<"$problems")
  fi
  # No record of an aborted transaction is left in the segments (an
  # aborted batch its producer's last keeps its header, without records);
  # the four markers are, until delete.retention.ms.
  problems+=$'\n'$(awk 'NR == FNR { aborted[$1] = 1; next }
    /^\| offset: [0-9]+ / && ($3 in aborted) { printf "aborted record at offset %d left in the segments\n", $3 }' \
    "$work/compacted-aborted.offsets" "$work/compacted-dump.dump" | head -n 3)
  for c in COMMIT ABORT; do
    [ "$(grep -c "endTxnMarker: $c " "$work/compacted-dump.dump")" -eq 2 ] ||
      problems+=$'\n'"$(grep -c "endTxnMarker: $c " "$work/compacted-dump.dump") $c markers in the segments, want 2"
  done
  problems=$(grep . <<<"$problems")
  if [ -n "$problems" ]; then
    fail compacted-dump "$(head -n 5 <<<"$problems" | paste -sd'|')"
  elif [ "$(grep -c -E '^\| offset: [0-9]+' "$work/compacted-dump.dump")" -ge "$produced" ]; then
    fail compacted-dump "DumpLogSegments shows $(grep -c -E '^\| offset: [0-9]+' "$work/compacted-dump.dump") records of $produced written: the segments it read were not cleaned"
  else
    pass "compacted-dump (DumpLogSegments: $(grep -c -E '^\| offset: [0-9]+' "$work/compacted-dump.dump") records in $(grep -c '^baseOffset' "$work/compacted-dump.dump") batches, $(grep -c '^Dumping .*\.log$' "$work/compacted-dump.dump") segments, none of the $(grep -c . "$work/compacted-aborted.offsets") aborted, no error)"
  fi
  klog_verify compacted-klog-verify "$p"
}

kafka_to_klog
klog_to_kafka
klog_compacted
if [ -n "$kafka_run" ] && [ "$keep" -eq 1 ]; then
  say "Kafka run directory kept: $kafka_run"
elif [ -n "$kafka_run" ]; then
  rm -rf "$kafka_run"
fi
kafka_run=''
echo "ondisk: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
