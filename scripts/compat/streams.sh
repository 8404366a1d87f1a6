#!/usr/bin/env bash
# The Kafka Streams check: a word count with processing.guarantee=
# exactly_once_v2 (scripts/compat/streams, kafka-streams 4.4.0), through a
# repartition topic into a persistent store with a compacted changelog,
# SIGKILLed twice mid-stream and restarted; its output must equal the
# expected counts exactly. Starts no broker; point it at one (klog or Kafka).
#
#   scripts/compat/streams.sh BROKERS
#
# The input is written in three thirds while the application runs:
#   1. the first third; the application starts and, once it has committed
#      a quarter of it (its committed input offsets, which move only when a
#      transaction commits) and has records in an open transaction (at half
#      a third at the latest), it is SIGKILLed while the second third flows;
#   2. it restarts on the same state directory and is SIGKILLed the same
#      way once it has committed another quarter of a third, while the last
#      third flows;
#   3. it restarts on a new, empty state directory (so its store is restored
#      from the changelog) and runs until its output, read read_committed,
#      shows every word's expected count; then it is stopped with SIGTERM.
# Then, once no transaction is open on the output (last stable offset =
# high watermark), it is read read_committed: every word's counts must be
# exactly 1, 2, ..., its number of occurrences in the input (a repeat is a
# record counted twice, a gap a lost one), the repartition and changelog
# topics must exist and the changelog must have cleanup.policy=compact.
#
# Prints "PASS streams/NAME: detail" or "FAIL streams/NAME: why" per check,
# then "streams: N passed, N failed" with the figures; exits 1 if any check
# failed. Names end in a per-run suffix, so reruns against one broker work.
# Each application's log (at WARN) is shown when a check fails.
#
# Environment:
#   KLOG_STREAMS_RECORDS  input records (default 30000)
#   KLOG_STREAMS_WORDS    distinct words (default 50)
#   KLOG_STREAMS_TIMEOUT  seconds one step may take (default 60)
#   KLOG_STREAMS_KEEP=1   keep the work directory (each run's log, app-N.err)
#   KLOG_COMPAT_BUILD_TIMEOUT seconds the Maven build may take (default 300)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
brokers=${1:?usage: streams.sh BROKERS}
records=${KLOG_STREAMS_RECORDS:-30000}
words=${KLOG_STREAMS_WORDS:-50}
step_timeout=${KLOG_STREAMS_TIMEOUT:-60}
build_timeout=${KLOG_COMPAT_BUILD_TIMEOUT:-300}
# shellcheck source-path=SCRIPTDIR source=mvn.sh
source "$here/mvn.sh"

run="$(date +%s%N | cut -c8-13)$$"
app_id=streams-wc-$run
in=$app_id-in
out=$app_id-out
work=$(mktemp -d)
app_pid=
producer_pid=
t0=$SECONDS
passed=0
failed=0

say() { echo "streams: [$((SECONDS - t0))s] $*" >&2; }
pass() { echo "PASS streams/$1"; passed=$((passed + 1)); }
fail() { echo "FAIL streams/$1"; failed=$((failed + 1)); }

# stop_pid PID SIGNAL sends SIGNAL and waits at most step_timeout seconds
# for PID to exit; SIGKILLs it then. Sets stopped=1 if it exited in time.
stop_pid() {
  local pid=$1 deadline=$((SECONDS + step_timeout))
  stopped=1
  kill "-$2" "$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      stopped=0
      kill -KILL "$pid" 2>/dev/null
      break
    fi
    sleep 0.1
  done
  wait "$pid" 2>/dev/null
}
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  [ -n "$app_pid" ] && stop_pid "$app_pid" KILL
  [ -n "$producer_pid" ] && stop_pid "$producer_pid" KILL
  if [ "${KLOG_STREAMS_KEEP:-0}" = 1 ]; then
    echo "streams: kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# finish prints the application logs if anything failed, the summary, and
# exits.
finish() {
  local f
  if [ "$failed" -gt 0 ]; then
    for f in "$work"/app-*.err "$work"/step.err; do
      [ -s "$f" ] || continue
      if grep -q '^streams: close did not finish' "$f"; then
        # The thread dump of a close that timed out, whole (bounded).
        echo "----- $(basename "$f") (from the timed-out close) -----" >&2
        sed -n '/^streams: close did not finish/,$p' "$f" | head -n 1500 >&2
      else
        echo "----- $(basename "$f") (last 40 lines) -----" >&2
        tail -n 40 "$f" >&2
      fi
    done
  fi
  echo "streams: $passed passed, $failed failed ($records records, $words words, $runs runs, SIGKILLed at ${killed_at:-none} committed${timings}; $((SECONDS - t0))s)"
  [ "$failed" -eq 0 ]
  exit
}

runs=0
killed_at=''
timings=''
command -v java >/dev/null || { fail "build: java is not installed"; finish; }
command -v mvn >/dev/null || { fail "build: mvn (Maven) is not installed"; finish; }
t=$SECONDS
if ! compat_mvn_build "$here/streams/pom.xml" "$work/build" "$work/build.log" "$build_timeout"; then
  fail "build: mvn build of scripts/compat/streams failed: $(grep -E 'ERROR|timed out' "$work/build.log" | head -n 3 | tr '\n' ' ' | cut -c1-300)"
  finish
fi
say "Maven build $((SECONDS - t))s"
java=(java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
  -cp "$work/build/classes:$(cat "$work/build/cp.txt")" dev.klog.compat.streams.Main)

# step NAME ARGS... runs one subcommand of Main, bounded by step_timeout
# seconds (by $limit if set: a subcommand that waits SECONDS is given 15 s
# more, for its JVM); its stdout is in $got. On failure it records FAIL NAME
# with the subcommand's stderr.
step() {
  local name=$1 rc=0
  shift
  got=$(timeout -k 5 "${limit:-$step_timeout}" "${java[@]}" "$@" 2>"$work/step.err") || rc=$?
  cat "$work/step.err" >>"$work/steps.err"
  [ "$rc" -eq 0 ] && return 0
  [ "$rc" -eq 124 ] && echo "timed out after ${limit:-$step_timeout}s" >>"$work/step.err"
  fail "$name: $* exited $rc: $(grep -v '^\s' "$work/step.err" | tail -n 3 | tr '\n' ' ' | cut -c1-400)"
  return 1
}

# start_app STATE_DIR starts the application in the background, disowned:
# it is SIGKILLed on purpose, and bash would print a "Killed" job notice.
# Its close on SIGTERM may take all but 10 s of the step_timeout that
# stop_pid waits for it to exit (half of it for a step under 20 s): the
# clean-close check waits for the close to end, not for a fixed window that
# a busy machine can overrun.
close_seconds=$((step_timeout >= 20 ? step_timeout - 10 : step_timeout / 2))
start_app() {
  runs=$((runs + 1))
  KLOG_STREAMS_CLOSE_SECONDS=$close_seconds "${java[@]}" app "$brokers" "$app_id" "$in" "$out" "$1" >"$work/app-$runs.out" 2>"$work/app-$runs.err" </dev/null &
  app_pid=$!
  disown "$app_pid"
  app_started=$SECONDS
  say "run $runs: application started (pid $app_pid, state dir $1)"
}

# produce FROM TO starts writing input records FROM..TO-1 in the background.
produce() {
  timeout -k 5 "$step_timeout" "${java[@]}" produce "$brokers" "$in" "$1" "$2" "$words" 2>>"$work/producer.err" &
  producer_pid=$!
}

# producer_done waits for the background producer; FAIL if it failed.
producer_done() {
  local rc=0
  wait "$producer_pid" || rc=$?
  producer_pid=
  [ "$rc" -eq 0 ] && return 0
  fail "produce: the input producer exited $rc: $(tail -n 3 "$work/producer.err" | tr '\n' ' ' | cut -c1-300)"
  return 1
}

# app_alive NAME: FAIL NAME if the application exited by itself.
app_alive() {
  kill -0 "$app_pid" 2>/dev/null && return 0
  fail "$1: run $runs of the application exited by itself: $(grep -v '^\s' "$work/app-$runs.err" | tail -n 3 | tr '\n' ' ' | cut -c1-400)"
  app_pid=
  return 1
}

# kill_app NAME MIN MAX: the kill step SIGKILLs the application once it
# has committed MIN input records, while it has a transaction open with
# records written (repartition topic, changelog or output; no JVM start
# between seeing that and the kill), or once it has committed MAX; sets
# committed to the progress it left. FAIL NAME unless input written before
# the kill was still uncommitted: mid-stream.
kill_app() {
  local written seen open open_out how
  limit=$((step_timeout + 15)) step "$1" kill "$brokers" "$app_id" "$in" "$out" "$2" "$3" "$step_timeout" "$app_pid" || return 1
  app_pid=
  read -r committed written seen open open_out <<<"$got"
  killed_at="$killed_at${killed_at:+ and }$committed"
  say "run $runs: SIGKILLed with $committed input records committed of $written written"
  if [ "$committed" -ge "$written" ]; then
    fail "$1: run $runs had committed all $written input records written before its SIGKILL: not mid-stream"
    return 1
  fi
  how="no open transaction seen by $3 committed"
  [ "$seen" = 1 ] && how="in an open transaction"
  pass "$1: run $runs SIGKILLed mid-stream ($how) $((SECONDS - app_started))s after its start: $((written - committed)) of $written input records written not yet committed; then $open records in open transactions ($open_out in the output)"
}

third=$((records / 3))
state1=$work/state-1
state2=$work/state-2
mkdir -p "$state1" "$state2"
step topics topics "$brokers" "$in" "$out" 3 || finish
step produce produce "$brokers" "$in" 0 "$third" "$words" || finish

# Run 1: killed once it has committed a quarter of the first third (in an
# open transaction; at half a third at the latest), while the second third
# flows.
start_app "$state1"
produce "$third" $((2 * third))
kill_app run-1-kill $((third / 4)) $((third / 2)) || finish
producer_done || finish

# Run 2: the same state directory; killed the same way once it has
# committed another quarter of a third, while the last third flows.
start_app "$state1"
produce $((2 * third)) "$records"
kill_app run-2-kill $((committed + third / 4)) $((committed + third / 2)) || finish
producer_done || finish

# Run 3: a new state directory, so the store is restored from its changelog.
rm -rf "$state1"
start_app "$state2"
limit=$((step_timeout + 15)) step "run-3-progress" wait "$brokers" "$app_id" "$in" "$records" "$step_timeout" || finish
limit=$((2 * step_timeout + 15)) step "run-3-output" output "$brokers" "$out" "$records" "$words" $((2 * step_timeout)) || finish
app_alive "run-3-output" || finish
timings=", run 3 counted all in $((SECONDS - app_started))s"
say "run 3: every count in the output $((SECONDS - app_started))s after its start"
pass "processed: all $records input records committed and counted after 2 SIGKILLs and 2 restarts (the last on an empty state directory)"
# On SIGTERM its shutdown hook closes KafkaStreams (state NOT_RUNNING).
stop_pid "$app_pid" TERM
app_pid=
# The shutdown hook prints CLOSED NOT_RUNNING once close returns: the
# state listener's own line can be lost to the JVM's halt.
if [ "$stopped" -eq 1 ] && grep -qE '^(STATE|CLOSED) NOT_RUNNING' "$work/app-$runs.out"; then
  pass "clean-close: run 3 closed on SIGTERM (NOT_RUNNING; $(grep -o -m1 'closed in [0-9]* ms' "$work/app-$runs.err" || echo 'close time not logged') of the ${close_seconds}s it may take)"
else
  fail "clean-close: run 3 did not close on SIGTERM (exited within ${step_timeout}s: $stopped; close bounded at ${close_seconds}s), states: $(sed -n 's/^STATE //p' "$work/app-$runs.out" | tr '\n' ' ')"
fi

# verify prints its own PASS and FAIL lines; a failure without one (it
# crashed or timed out) is a FAIL of its own.
vrc=0
got=$(timeout -k 5 $((3 * step_timeout)) "${java[@]}" verify "$brokers" "$app_id" "$out" "$records" "$words" 2>"$work/step.err") || vrc=$?
[ -n "$got" ] && printf '%s\n' "$got"
while read -r st _; do
  case $st in
  PASS) passed=$((passed + 1)) ;;
  FAIL) failed=$((failed + 1)) ;;
  esac
done <<<"$got"
if [ "$vrc" -ne 0 ] && ! grep -q '^FAIL' <<<"$got"; then
  fail "verify: exited $vrc: $(grep -v '^\s' "$work/step.err" | tail -n 3 | tr '\n' ' ' | cut -c1-400)"
fi
finish
