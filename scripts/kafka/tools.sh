#!/usr/bin/env bash
# Kafka 4.4's own command-line tools against any broker, with their output
# checked: kafka-topics, kafka-console-producer and -consumer (classic and
# KIP-848 groups, read_committed), kafka-consumer-groups (list, describe with
# lag, state, reset, delete), kafka-get-offsets, kafka-transactions (list,
# describe, describe-producers, find-hanging), kafka-configs (alter,
# describe, delete), kafka-log-dirs, kafka-leader-election and
# kafka-delete-records. The tools run through their main classes with the
# jars of scripts/kafka/kafka.sh (fetched on first use); README.md lists the
# checks and the differences found.
#
#   scripts/kafka/tools.sh BROKERS [--target klog|kafka] [--out DIR] [--secure DIR]
#
# With --secure DIR (the secure directory of "klog up --secure", BROKERS its
# SASL_SSL listeners) it runs the security checks instead: kafka-configs
# SCRAM-SHA-512 users, kafka-acls, client quotas with kafka-configs, and the
# console producer and consumer with --command-config over SASL_SSL and mTLS.
#
# Prints one line per check, "PASS tools/NAME", "FAIL tools/NAME: why" or,
# for a check in the known-differences list below and --target klog,
# "KNOWN-DIFF tools/NAME: why (reason)", then a summary; exits 1 if any
# check failed. Topic, group and transactional id names end in a per-run
# suffix, so reruns against one broker do not collide. --out DIR keeps every
# tool's stdout, stderr and exit code (NAME.out, NAME.err, NAME.rc; the run
# suffix replaced by RUN) for comparing two brokers with diff -r.
#
# Environment:
#   KLOG_TOOLS_TIMEOUT  seconds one tool may take (default 60)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=checks.sh
source "$here/checks.sh"
check_args tools.sh "$@"
step_timeout=${KLOG_TOOLS_TIMEOUT:-60}

# Checks that fail against klog for a reason found and reported, with that
# reason. Each still runs; its failure prints KNOWN-DIFF, not FAIL. A known
# difference that passes is printed as FIXED, so the entry can go.
declare -A known_diff_klog=()

run="$(date +%s%N | cut -c8-13)$$"
topic=tools-$run
txn_topic=tools-txn-$run
extra_topic=tools-x-$run
group=tools-g-$run
group848=tools-g848-$run
txn_id=tools-txn-id-$run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check_prefix=tools
if [ "$target" = klog ]; then
  for k in "${!known_diff_klog[@]}"; do known_diff[$k]=${known_diff_klog[$k]}; done
fi
say() { echo "tools: $*" >&2; }

# tool NAME TOOL ARGS... runs one Kafka tool (stdin from $work/in if it
# exists) into $work/NAME.{out,err,rc}; sets rc, o (stdout) and e (stderr).
tool() {
  local name=$1 input=/dev/null
  shift
  [ -f "$work/in" ] && input=$work/in
  timeout -k 5 "$step_timeout" "$here/kafka.sh" tool "$@" <"$input" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  rm -f "$work/in"
  echo "$rc" >"$work/$name.rc"
  o=$(cat "$work/$name.out")
  e=$(cat "$work/$name.err")
  if [ -n "$out" ]; then
    mkdir -p "$out"
    local f
    for f in out err rc; do
      sed "s/$run/RUN/g" "$work/$name.$f" >"$out/$name.$f"
    done
  fi
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    e="timed out after ${step_timeout}s; $e"
  fi
}

# has TEXT: the last tool's stdout contains the line fragment TEXT.
has() {
  grep -qF -- "$1" <<<"$o" && return 0
  why="stdout lacks '$1': $(head -c 300 <<<"$o" | tr '\n' '|')"
  return 1
}

bs=(--bootstrap-server "$brokers")

# cells prints the last tool's stdout, a kafka-transactions table (cells
# padded with spaces, ended by tabs), as cells ended by "|".
cells() { sed -E $'s/ *\t/|/g' <<<"$o"; }

# --- kafka-topics ----------------------------------------------------------
topics_create() {
  tool topics-create topics "${bs[@]}" --create --topic "$topic" --partitions 3 --replication-factor 1
  ok_rc && has "Created topic $topic."
}
topics_list() {
  tool topics-list topics "${bs[@]}" --list
  ok_rc || return 1
  grep -qx -- "$topic" <<<"$o" && return 0
  why="--list does not list $topic"
  return 1
}
topics_describe() {
  local p
  tool topics-describe topics "${bs[@]}" --describe --topic "$topic"
  ok_rc && has "Topic: $topic" && has "PartitionCount: 3" && has "ReplicationFactor: 1" || return 1
  for p in 0 1 2; do
    grep -qE "Partition: $p"$'\t'"Leader: [0-9]+"$'\t'"Replicas: [0-9]+"$'\t'"Isr: [0-9]+" <<<"$o" && continue
    why="no leader, replicas and ISR line for partition $p"
    return 1
  done
}
topics_describe_missing() {
  tool topics-describe-missing topics "${bs[@]}" --describe --topic "no-such-topic-$run"
  [ "$rc" -ne 0 ] || { why="exit 0 for a topic that does not exist"; return 1; }
  grep -qF "Topic 'no-such-topic-$run' does not exist" <<<"$e" && return 0
  why="exit $rc without the does-not-exist message: $(tail -n 2 <<<"$e" | tr '\n' ' ')"
  return 1
}

# topics_describe_elr: the partition lines of topics-describe end in empty
# ELR lists, from DescribeTopicPartitions (a broker without it makes the
# tool fall back to Metadata and print "Elr: N/A").
topics_describe_elr() {
  local n
  o=$(cat "$work/topics-describe.out" 2>/dev/null)
  n=$(grep -c $'\tElr: \tLastKnownElr: $' <<<"$o")
  [ "$n" -eq 3 ] && return 0
  why="$n of 3 partition lines end in empty Elr and LastKnownElr: $(grep -m 1 'Partition: ' <<<"$o" | tr '\t' ' ')"
  return 1
}

# --- console producer and consumer ------------------------------------------
produced=$(for i in 1 2 3 4 5 6; do printf 'k%d:v%d\n' "$i" "$i"; done)
console_produce() {
  echo "$produced" >"$work/in"
  tool console-producer console-producer "${bs[@]}" --topic "$topic" \
    --reader-property parse.key=true --reader-property key.separator=:
  ok_rc
}
# consume_all NAME GROUP [ARGS...] reads the six records as GROUP and compares
# them with what console_produce wrote.
consume_all() {
  local name=$1 g=$2 got want
  shift 2
  tool "$name" console-consumer "${bs[@]}" --topic "$topic" --group "$g" --from-beginning \
    --max-messages 6 --timeout-ms 30000 --formatter-property print.key=true \
    --formatter-property key.separator=: "$@"
  ok_rc || return 1
  got=$(sort <<<"$o")
  want=$(sort <<<"$produced")
  if [ "$got" != "$want" ]; then
    why="consumed $(tr '\n' ' ' <<<"$got") want $(tr '\n' ' ' <<<"$want")"
    return 1
  fi
  grep -qF "Processed a total of 6 messages" <<<"$e" && return 0
  why="stderr lacks 'Processed a total of 6 messages'"
  return 1
}
console_consume() { consume_all console-consumer "$group"; }
console_consume_848() {
  consume_all console-consumer-kip848 "$group848" --command-property group.protocol=consumer
}
# Two more records, so the groups have a lag of 2.
console_produce_more() {
  printf 'x1\nx2\n' >"$work/in"
  tool console-producer-more console-producer "${bs[@]}" --topic "$topic"
  ok_rc
}

# --- kafka-consumer-groups --------------------------------------------------
groups_list() {
  tool consumer-groups-list consumer-groups "${bs[@]}" --list
  ok_rc || return 1
  grep -qx -- "$group" <<<"$o" && grep -qx -- "$group848" <<<"$o" && return 0
  why="--list lacks $group or $group848: $(tr '\n' ' ' <<<"$o")"
  return 1
}
# describe_lag NAME GROUP: three rows for the topic whose offsets sum to 6
# committed, 8 at the end, and a lag of 2, each row's lag its end minus its
# committed offset.
describe_lag() {
  local sums
  tool "$1" consumer-groups "${bs[@]}" --describe --group "$2"
  ok_rc && has "CURRENT-OFFSET  LOG-END-OFFSET  LAG" || return 1
  sums=$(awk -v g="$2" -v t="$topic" '
    $1 == g && $2 == t { n++; cur += $4; end += $5; lag += $6; if ($5 - $4 != $6) bad++ }
    END { printf "rows=%d committed=%d end=%d lag=%d bad=%d", n, cur, end, lag, bad }' <<<"$o")
  [ "$sums" = "rows=3 committed=6 end=8 lag=2 bad=0" ] && return 0
  why="got $sums, want rows=3 committed=6 end=8 lag=2 bad=0"
  return 1
}
groups_describe() { describe_lag consumer-groups-describe "$group"; }
groups_describe_848() { describe_lag consumer-groups-describe-kip848 "$group848"; }
# describe_state NAME GROUP: the group is Empty with no members.
describe_state() {
  tool "$1" consumer-groups "${bs[@]}" --describe --group "$2" --state
  ok_rc || return 1
  grep -qE "^$2 .* Empty +0 *$" <<<"$o" && return 0
  why="no Empty state with 0 members for $2: $(tr '\n' '|' <<<"$o")"
  return 1
}
groups_describe_state() { describe_state consumer-groups-describe-state "$group"; }
groups_describe_state_848() { describe_state consumer-groups-describe-state-kip848 "$group848"; }
# After --delete-offsets the KIP-848 group, empty and without offsets, is still
# a group: Kafka drops such a group only in its periodic offsets cleanup
# (offsets.retention.check.interval.ms, ten minutes after the broker starts).
groups_kept_after_delete_offsets() { describe_state consumer-groups-state-after-delete-offsets "$group848"; }

# After the lag checks: reset the classic group to the start (lag 8), delete
# the KIP-848 group's offsets, delete the classic group. The tool exits 0
# even when a group operation fails, so the output is what tells.
groups_reset() {
  tool consumer-groups-reset consumer-groups "${bs[@]}" --group "$group" --topic "$topic" \
    --reset-offsets --to-earliest --execute
  ok_rc && has "NEW-OFFSET" || return 1
  [ "$(awk -v g="$group" '$1 == g && $4 == 0 { n++ } END { print n + 0 }' <<<"$o")" = 3 ] && return 0
  why="want three rows with NEW-OFFSET 0: $(tr '\n' '|' <<<"$o")"
  return 1
}
groups_describe_after_reset() {
  local sums
  tool consumer-groups-describe-after-reset consumer-groups "${bs[@]}" --describe --group "$group"
  ok_rc || return 1
  sums=$(awk -v g="$group" -v t="$topic" '$1 == g && $2 == t { n++; cur += $4; lag += $6 }
    END { printf "rows=%d committed=%d lag=%d", n, cur, lag }' <<<"$o")
  [ "$sums" = "rows=3 committed=0 lag=8" ] && return 0
  why="got $sums, want rows=3 committed=0 lag=8"
  return 1
}
groups_delete_offsets() {
  tool consumer-groups-delete-offsets consumer-groups "${bs[@]}" --group "$group848" --topic "$topic" --delete-offsets
  ok_rc && has "Request succeeded for deleting offsets from group $group848." || return 1
  [ "$(grep -cE "^$topic +[0-2] +Successful" <<<"$o")" = 3 ] && return 0
  why="want three Successful partitions: $(tr '\n' '|' <<<"$o")"
  return 1
}
groups_describe_missing() {
  tool consumer-groups-describe-missing consumer-groups "${bs[@]}" --describe --group "no-such-group-$run"
  # The tool exits 0 here too.
  ok_rc || return 1
  grep -qF "GroupIdNotFoundException" <<<"$e" && return 0
  why="stderr lacks GroupIdNotFoundException: $(tail -n 2 <<<"$e" | tr '\n' ' ')"
  return 1
}
groups_delete() {
  tool consumer-groups-delete consumer-groups "${bs[@]}" --group "$group" --delete
  ok_rc && has "Deletion of requested consumer groups ('$group') was successful." || return 1
  tool consumer-groups-list-after-delete consumer-groups "${bs[@]}" --list
  ok_rc || return 1
  grep -qx -- "$group" <<<"$o" || return 0
  why="--list still lists $group after --delete"
  return 1
}

# --- kafka-transactions -----------------------------------------------------
txn_produce() {
  tool txn-topic-create topics "${bs[@]}" --create --topic "$txn_topic" --partitions 1 --replication-factor 1
  ok_rc || return 1
  tool txn-produce producer-perf --topic "$txn_topic" --num-records 20 --record-size 10 \
    --throughput -1 --command-property "bootstrap.servers=$brokers" \
    --transactional-id "$txn_id" --transaction-duration-ms 50
  ok_rc && has "20 records sent"
}
txn_list() {
  tool transactions-list transactions "${bs[@]}" list
  ok_rc && has "TransactionalId" || return 1
  cells | grep -qE "^$txn_id\|[0-9]+\|[0-9]+\|CompleteCommit\|$" && return 0
  why="no CompleteCommit row for $txn_id: $(grep -F -- "$txn_id" <<<"$o" | tr '\t' ' ')"
  return 1
}
txn_describe() {
  tool transactions-describe transactions "${bs[@]}" describe --transactional-id "$txn_id"
  ok_rc && has "TransactionState" || return 1
  cells | grep -qE "^[0-9]+\|$txn_id\|[0-9]+\|[0-9]+\|CompleteCommit\|60000\|" && return 0
  why="no CompleteCommit row with a 60000 ms timeout: $(tail -n 1 <<<"$o" | tr '\t' ' ')"
  return 1
}
txn_describe_producers() {
  tool transactions-describe-producers transactions "${bs[@]}" describe-producers --topic "$txn_topic" --partition 0
  ok_rc && has "CurrentTransactionStartOffset" || return 1
  cells | grep -qE "^[0-9]+\|[0-9]+\|-?[0-9]+\|-?[0-9]+\|[0-9]+\|None\|$" && return 0
  why="no producer row without an open transaction: $(tr '\t\n' ' |' <<<"$o")"
  return 1
}
txn_find_hanging() {
  tool transactions-find-hanging transactions "${bs[@]}" find-hanging --broker-id 0
  ok_rc && has "Duration(min)" || return 1
  [ "$(grep -c . <<<"$o")" = 1 ] && return 0
  why="want the header only: $(tr '\t\n' ' |' <<<"$o")"
  return 1
}
# The twenty committed records, read with read_committed.
txn_consume_committed() {
  tool console-consumer-read-committed console-consumer "${bs[@]}" --topic "$txn_topic" --from-beginning \
    --isolation-level read_committed --max-messages 20 --timeout-ms 30000
  ok_rc || return 1
  [ "$(grep -c . <<<"$o")" = 20 ] && grep -qF "Processed a total of 20 messages" <<<"$e" && return 0
  why="want 20 records: got $(grep -c . <<<"$o"); $(tail -n 1 <<<"$e")"
  return 1
}
txn_describe_missing() {
  tool transactions-describe-missing transactions "${bs[@]}" describe --transactional-id "no-such-txn-$run"
  [ "$rc" -ne 0 ] && grep -qF "failed because the ID could not be found" <<<"$e" && return 0
  why="exit $rc; want non-zero with 'the ID could not be found': $(tail -n 2 <<<"$e" | tr '\n' ' ')"
  return 1
}

# --- kafka-configs ----------------------------------------------------------
cfg=(--entity-type topics --entity-name "$topic")
configs_alter() {
  tool configs-alter configs "${bs[@]}" "${cfg[@]}" --alter --add-config retention.ms=123456,cleanup.policy=compact
  ok_rc && has "Completed updating config for topic $topic."
}
configs_describe() {
  tool configs-describe configs "${bs[@]}" "${cfg[@]}" --describe
  ok_rc && has "Dynamic configs for topic $topic are:" &&
    has "retention.ms=123456 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=123456" &&
    has "cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact"
}
configs_describe_all() {
  tool configs-describe-all configs "${bs[@]}" "${cfg[@]}" --describe --all
  ok_rc && has "All configs for topic $topic are:" && has "retention.ms=123456 " &&
    has "segment.bytes=" && has "max.message.bytes="
}
configs_delete() {
  tool configs-delete configs "${bs[@]}" "${cfg[@]}" --alter --delete-config retention.ms
  ok_rc && has "Completed updating config for topic $topic." || return 1
  tool configs-describe-after-delete configs "${bs[@]}" "${cfg[@]}" --describe
  ok_rc && has "cleanup.policy=compact" || return 1
  grep -qF "retention.ms=" <<<"$o" || return 0
  why="retention.ms is still set after --delete-config"
  return 1
}
configs_invalid() {
  tool configs-invalid configs "${bs[@]}" "${cfg[@]}" --alter --add-config retention.ms=notanumber
  [ "$rc" -ne 0 ] && grep -qF "InvalidConfigurationException" <<<"$e" && return 0
  why="exit $rc; want non-zero with InvalidConfigurationException: $(grep -v '^\s*at ' <<<"$e" | tail -n 2 | tr '\n' ' ')"
  return 1
}

# --- kafka-get-offsets --------------------------------------------------------
# offsets NAME WANT ARGS...: the partition:offset lines of the topic, sorted.
offsets() {
  local name=$1 want=$2 got
  shift 2
  tool "$name" get-offsets "${bs[@]}" --topic "$topic" "$@"
  ok_rc || return 1
  got=$(grep -F -- "$topic:" <<<"$o" | sed "s/^$topic://" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] && return 0
  why="got '$got', want '$want'"
  return 1
}
# The six keyed records spread by key hash; the two unkeyed ones go to one
# partition. So only the totals are fixed: read them from the latest offsets.
get_offsets_latest() {
  local got total
  tool get-offsets-latest get-offsets "${bs[@]}" --topic "$topic"
  ok_rc || return 1
  got=$(grep -cE "^$topic:[0-2]:[0-9]+$" <<<"$o")
  total=$(awk -F: '{ s += $3 } END { print s + 0 }' <<<"$o")
  latest=$o
  [ "$got" -eq 3 ] && [ "$total" -eq 8 ] && return 0
  why="got $got partitions with $total records, want 3 with 8: $(tr '\n' ' ' <<<"$o")"
  return 1
}
get_offsets_earliest() { offsets get-offsets-earliest "0:0 1:0 2:0 " --time -2; }
# --time -3 is the offset of the record with the largest timestamp (ListOffsets
# v7): on each partition (the keys put a record on every one) at least 0 and
# below that partition's end offset.
latest=''
get_offsets_max_timestamp() {
  local bad
  tool get-offsets-max-timestamp get-offsets "${bs[@]}" --topic "$topic" --time -3
  ok_rc || return 1
  [ -n "$latest" ] || { why="no latest offsets to compare with"; return 1; }
  bad=$(awk -F: -v t="$topic" '
    NR == FNR { end[$2] = $3; next }
    $1 == t { n++; if ($3 < 0 || $3 >= end[$2]) b = b " " $2 ":" $3 }
    END { if (n != 3) print "rows=" n; else if (b != "") print "out of range:" b }' <(echo "$latest") - <<<"$o")
  [ -z "$bad" ] && return 0
  why="$bad (latest offsets: $(tr '\n' ' ' <<<"$latest"))"
  return 1
}

# --- kafka-log-dirs and kafka-leader-election -------------------------------
log_dirs_describe() {
  local p
  tool log-dirs-describe org.apache.kafka.tools.LogDirsCommand "${bs[@]}" --describe --topic-list "$topic"
  ok_rc && has '"error":null' || return 1
  grep -qE '"logDir":"[^"]+"' <<<"$o" || { why="no logDir: $(head -c 300 <<<"$o")"; return 1; }
  for p in 0 1 2; do
    grep -qE "\"partition\":\"$topic-$p\",\"size\":[0-9]+,\"offsetLag\":0,\"isFuture\":false" <<<"$o" && continue
    why="no size, offset lag 0 and isFuture false for $topic-$p: $(head -c 300 <<<"$o")"
    return 1
  done
  # The console producers wrote records: some partition has bytes.
  grep -qE '"size":[1-9]' <<<"$o" && return 0
  why="every partition of $topic has size 0 after records were written"
  return 1
}
leader_election_preferred() {
  tool leader-election-preferred org.apache.kafka.tools.LeaderElectionCommand "${bs[@]}" --election-type preferred --topic "$topic" --partition 0
  ok_rc && has "Valid replica already elected for partitions $topic-0"
}
leader_election_unknown_topic() {
  tool leader-election-unknown-topic org.apache.kafka.tools.LeaderElectionCommand "${bs[@]}" --election-type preferred --topic "no-such-topic-$run" --partition 0
  [ "$rc" -ne 0 ] || { why="exit 0 for a topic that does not exist"; return 1; }
  grep -qF "UnknownTopicOrPartitionException: No such topic as no-such-topic-$run" <<<"$o$e" && return 0
  why="exit $rc without UnknownTopicOrPartitionException: $(grep -v '^\s*at ' <<<"$e" | tail -n 2 | tr '\n' ' ')"
  return 1
}

# --- a topic's life: records deleted, partitions added, the topic deleted ----
extra_create() {
  tool extra-create topics "${bs[@]}" --create --topic "$extra_topic" --partitions 1 --replication-factor 1
  ok_rc || return 1
  printf 'a\nb\nc\n' >"$work/in"
  tool extra-produce console-producer "${bs[@]}" --topic "$extra_topic"
  ok_rc
}
delete_records() {
  printf '{"partitions":[{"topic":"%s","partition":0,"offset":1}],"version":1}\n' "$extra_topic" >"$work/delete.json"
  tool delete-records org.apache.kafka.tools.DeleteRecordsCommand "${bs[@]}" --offset-json-file "$work/delete.json"
  # It exits 0 when a partition fails; the partition's line tells.
  ok_rc && has "partition: $extra_topic-0"$'\t'"low_watermark: 1" || return 1
  tool delete-records-offsets get-offsets "${bs[@]}" --topic "$extra_topic" --time -2
  ok_rc && has "$extra_topic:0:1"
}
topics_alter_partitions() {
  tool topics-alter topics "${bs[@]}" --alter --topic "$extra_topic" --partitions 2
  ok_rc || return 1
  tool topics-describe-after-alter topics "${bs[@]}" --describe --topic "$extra_topic"
  ok_rc && has "PartitionCount: 2" && has "Partition: 1"$'\t'"Leader: "
}
topics_delete() {
  tool topics-delete topics "${bs[@]}" --delete --topic "$extra_topic"
  ok_rc || return 1
  tool topics-list-after-delete topics "${bs[@]}" --list
  ok_rc || return 1
  grep -qx -- "$extra_topic" <<<"$o" || return 0
  why="--list still lists $extra_topic after --delete"
  return 1
}

# --- a --secure cluster (--secure DIR) -------------------------------------------
# With --secure DIR (DATA-DIR/secure of "klog up --secure"), BROKERS are its
# SASL_SSL listeners and only these checks run, each tool given the client
# config klog up --secure wrote with --command-config: kafka-configs makes
# a SCRAM-SHA-512 user as admin, that user is refused a topic until
# kafka-acls allows it, client quotas are set and read back with
# kafka-configs (Kafka 4.4 has no client-quotas command: its jars hold
# none; kafka-configs sends AlterClientQuotas and DescribeClientQuotas),
# and app produces and consumes with the console tools over SASL_SSL and
# over mTLS with its client certificate.
sec_user=tools-user-$run
sec_password=tools-pw-$run
sec_topic=tools-sec-$run
sec_group=tools-sec-g-$run
# sec_admin and sec_app are the client configs of admin and app over
# SASL_SSL, sec_mtls app's over mTLS, sec_user_conf the new user's.
secure_setup() {
  sec_admin=$secure_dir/admin.properties
  sec_app=$secure_dir/app.properties
  sec_mtls=$secure_dir/app-mtls.properties
  sec_user_conf=$work/user.properties
  # The new user's config: app's, with its name and password.
  sed -e "s/username=\"[^\"]*\"/username=\"$sec_user\"/" -e "s/password=\"[^\"]*\"/password=\"$sec_password\"/" \
    "$sec_app" >"$sec_user_conf"
  mtls_brokers=$(sed -n 's/^bootstrap.servers=//p' "$sec_mtls")
}
scram_add() {
  tool configs-scram-add configs "${bs[@]}" --command-config "$sec_admin" --alter \
    --add-config "SCRAM-SHA-512=[iterations=8192,password=$sec_password]" --entity-type users --entity-name "$sec_user"
  ok_rc && has "Completed updating config for user $sec_user."
}
scram_describe() {
  tool configs-scram-describe configs "${bs[@]}" --command-config "$sec_admin" --describe --entity-type users --entity-name "$sec_user"
  ok_rc && has "SCRAM credential configs for user-principal '$sec_user' are SCRAM-SHA-512=iterations=8192"
}
sec_topic_create() {
  tool sec-topic-create topics "${bs[@]}" --command-config "$sec_app" --create --topic "$sec_topic" --partitions 1 --replication-factor 1
  ok_rc && has "Created topic $sec_topic."
}
sec_produce() {
  echo "$produced" >"$work/in"
  tool sec-console-producer console-producer "${bs[@]}" --command-config "$sec_app" --topic "$sec_topic" \
    --reader-property parse.key=true --reader-property key.separator=:
  ok_rc
}
# sec_consume NAME CONFIG [BROKERS]: CONFIG's user reads the six records.
sec_consume() {
  local got
  tool "$1" console-consumer --bootstrap-server "${3:-$brokers}" --command-config "$2" --topic "$sec_topic" \
    --group "$sec_group-$1" --from-beginning --max-messages 6 --timeout-ms 30000 \
    --formatter-property print.key=true --formatter-property key.separator=:
  ok_rc || return 1
  got=$(sort <<<"$o")
  [ "$got" = "$(sort <<<"$produced")" ] && return 0
  why="consumed $(tr '\n' ' ' <<<"$got")"
  return 1
}
sec_consume_app() { sec_consume sec-console-consumer "$sec_app"; }
sec_consume_mtls() { sec_consume sec-console-consumer-mtls "$sec_mtls" "$mtls_brokers"; }
sec_user_denied() {
  tool sec-user-denied console-consumer "${bs[@]}" --command-config "$sec_user_conf" --topic "$sec_topic" \
    --group "$sec_group-denied" --from-beginning --max-messages 1 --timeout-ms 15000
  # The console consumer prints the error and exits 0, as with Kafka.
  grep -qF "TopicAuthorizationException: Not authorized to access topics: [$sec_topic]" <<<"$e" &&
    grep -qF "Processed a total of 0 messages" <<<"$e" && return 0
  why="exit $rc; want TopicAuthorizationException and no record before any ACL: $(grep -v '^\s*at ' <<<"$e" | tail -n 2 | tr '\n' ' ')"
  return 1
}
acls_add() {
  tool acls-add acls "${bs[@]}" --command-config "$sec_admin" --add --allow-principal "User:$sec_user" \
    --operation Read --topic "$sec_topic" --group "$sec_group-sec-console-consumer-user"
  ok_rc && has "Adding ACLs for resource \`ResourcePattern(resourceType=TOPIC, name=$sec_topic, patternType=LITERAL)\`"
}
acls_list() {
  tool acls-list acls "${bs[@]}" --command-config "$sec_admin" --list --topic "$sec_topic"
  ok_rc && has "(principal=User:$sec_user, host=*, operation=READ, permissionType=ALLOW)"
}
sec_consume_user() { sec_consume sec-console-consumer-user "$sec_user_conf"; }
acls_remove() {
  tool acls-remove acls "${bs[@]}" --command-config "$sec_admin" --remove --force --allow-principal "User:$sec_user" \
    --operation Read --topic "$sec_topic"
  ok_rc || return 1
  tool acls-list-after-remove acls "${bs[@]}" --command-config "$sec_admin" --list --topic "$sec_topic"
  ok_rc || return 1
  grep -qF "User:$sec_user" <<<"$o" || return 0
  why="--list still shows User:$sec_user after --remove"
  return 1
}
quotas_alter() {
  tool quotas-alter configs "${bs[@]}" --command-config "$sec_admin" --alter \
    --add-config producer_byte_rate=1048576,consumer_byte_rate=2097152 --entity-type users --entity-name "$sec_user"
  ok_rc && has "Completed updating config for user $sec_user."
}
quotas_describe() {
  tool quotas-describe configs "${bs[@]}" --command-config "$sec_admin" --describe --entity-type users --entity-name "$sec_user"
  ok_rc && has "Quota configs for user-principal '$sec_user' are" && has "producer_byte_rate=1048576.0" &&
    has "consumer_byte_rate=2097152.0"
}
scram_delete() {
  tool configs-scram-delete configs "${bs[@]}" --command-config "$sec_admin" --alter \
    --delete-config SCRAM-SHA-512 --entity-type users --entity-name "$sec_user"
  ok_rc && has "Completed updating config for user $sec_user."
}
# kafka-delegation-tokens: scripts/kafka/delegation-tokens.sh, on a node
# of its own (scripts/test.sh's security/tools runs both).
run_secure_checks() {
  secure_setup
  check configs-scram-add scram_add
  check configs-scram-describe scram_describe
  check secure-topics-create sec_topic_create
  check secure-console-producer sec_produce
  check secure-console-consumer sec_consume_app
  check secure-console-consumer-mtls sec_consume_mtls
  check secure-user-denied sec_user_denied
  check acls-add acls_add
  check acls-list acls_list
  check secure-console-consumer-user sec_consume_user
  check acls-remove acls_remove
  check client-quotas-alter quotas_alter
  check client-quotas-describe quotas_describe
  check configs-scram-delete scram_delete
}

say "target $target at $brokers, run suffix $run"
t0=$SECONDS
"$here/kafka.sh" fetch || { echo "FAIL tools/fetch: kafka.sh fetch failed"; exit 1; }
if [ -n "$secure_dir" ]; then
  run_secure_checks
  echo "tools ($target, --secure): $passed passed, $failed failed, $known known differences ($((SECONDS - t0))s)"
  [ "$failed" -eq 0 ]
  exit
fi
check topics-create topics_create
check topics-list topics_list
check topics-describe topics_describe
check topics-describe-elr topics_describe_elr
check topics-describe-missing topics_describe_missing
check console-producer console_produce
check console-consumer console_consume
check console-consumer-kip848 console_consume_848
check console-producer-more console_produce_more
check log-dirs-describe log_dirs_describe
check leader-election-preferred leader_election_preferred
check leader-election-unknown-topic leader_election_unknown_topic
check consumer-groups-list groups_list
check consumer-groups-describe groups_describe
check consumer-groups-describe-kip848 groups_describe_848
check consumer-groups-describe-state groups_describe_state
check consumer-groups-describe-state-kip848 groups_describe_state_848
check consumer-groups-describe-missing groups_describe_missing
check get-offsets-latest get_offsets_latest
check get-offsets-earliest get_offsets_earliest
check get-offsets-max-timestamp get_offsets_max_timestamp
check transactions-produce txn_produce
check transactions-list txn_list
check transactions-describe txn_describe
check transactions-describe-producers txn_describe_producers
check transactions-find-hanging txn_find_hanging
check console-consumer-read-committed txn_consume_committed
check transactions-describe-missing txn_describe_missing
check configs-alter configs_alter
check configs-describe configs_describe
check configs-describe-all configs_describe_all
check configs-delete configs_delete
check configs-invalid configs_invalid
check consumer-groups-reset-offsets groups_reset
check consumer-groups-describe-after-reset groups_describe_after_reset
check consumer-groups-delete-offsets groups_delete_offsets
check consumer-groups-kept-after-delete-offsets groups_kept_after_delete_offsets
check consumer-groups-delete groups_delete
check topics-extra-create extra_create
check delete-records delete_records
check topics-alter-partitions topics_alter_partitions
check topics-delete topics_delete
echo "tools ($target): $passed passed, $failed failed, $known known differences ($((SECONDS - t0))s)"
[ "$failed" -eq 0 ]
