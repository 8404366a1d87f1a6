#!/usr/bin/env bash
# Runs every smoke test against one "klog up --memory" node.
#   scripts/smoke/run.sh path/to/klog
# Prints one PASS/FAIL/SKIP line per test; exits non-zero if any failed. A test
# that exits 77 is skipped (it prints its reason as a line starting "SKIP").
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
bin=${1:?usage: run.sh path/to/klog}

# Tests in run order: name and command. Each gets BROKERS (the broker's
# address) and KLOG_BIN (the klog binary) in its environment.
tests=(
  "kcat:$here/kcat.sh"
  "confluent-kafka-python:$here/confluent_kafka.sh"
  "kafka-python:$here/kafka_python.sh"
  "confluent-kafka-python-groups:$here/confluent_kafka_groups.sh"
  "confluent-kafka-python-kip848:$here/confluent_kafka_kip848.sh"
  "kafka-python-groups:$here/kafka_python_groups.sh"
  "kafkajs-groups:$here/kafkajs_groups.sh"
  "confluent-kafka-python-txn:$here/confluent_kafka_txn.sh"
  "kafkajs-txn:$here/kafkajs_txn.sh"
  "burrow:$here/burrow.sh"
  "librdkafka-2.11-kip848:$here/rdkafka_kip848.sh"
)

work=$(mktemp -d)
cleanup() {
  smoke_stop_broker >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0
failed=0
skipped=0
if ! smoke_start_broker "$bin" "$work"; then
  echo "FAIL smoke: broker start"
  echo "smoke: 0 passed, 1 failed"
  exit 1
fi
echo "smoke: broker ready at $SMOKE_BROKERS (pid $SMOKE_BROKER_PID)"

for t in "${tests[@]}"; do
  name=${t%%:*}
  cmd=${t#*:}
  start=$SECONDS
  rc=0
  BROKERS=$SMOKE_BROKERS KLOG_BIN=$bin "$cmd" >"$work/$name.log" 2>&1 || rc=$?
  sed 's/^/    /' "$work/$name.log"
  if [ "$rc" -eq 0 ]; then
    echo "PASS smoke/$name ($((SECONDS - start))s)"
    passed=$((passed + 1))
  elif [ "$rc" -eq 77 ]; then
    reason=$(grep -m 1 '^SKIP' "$work/$name.log" | sed 's/^SKIP[^:]*: *//')
    echo "SKIP smoke/$name (${reason:-no reason given})"
    skipped=$((skipped + 1))
  else
    echo "FAIL smoke/$name ($((SECONDS - start))s, exit $rc)"
    failed=$((failed + 1))
  fi
  if ! kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; then
    echo "FAIL smoke: broker died during $name"
    smoke_dump_broker_log "$work"
    SMOKE_BROKER_PID=
    failed=$((failed + 1))
    break
  fi
done

if [ -n "$SMOKE_BROKER_PID" ]; then
  if smoke_stop_broker; then
    echo "PASS smoke/shutdown (SIGTERM, exit 0)"
    passed=$((passed + 1))
  else
    echo "FAIL smoke/shutdown"
    smoke_dump_broker_log "$work"
    failed=$((failed + 1))
  fi
fi
if [ "$failed" -gt 0 ] && [ "${KLOG_SMOKE_LOG:-0}" = 1 ]; then
  smoke_dump_broker_log "$work"
fi
echo "smoke: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
