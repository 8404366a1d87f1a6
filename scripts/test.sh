#!/usr/bin/env bash
# klog's test command: the one CI runs (.ci/run) and the README names.
#
#   scripts/test.sh
#
# Stages, in order: deps, gofmt, vet, staticcheck, go test -race, build,
# smoke (real clients against "klog up"), compat (the client × scenario
# matrix of scripts/compat/run.sh against "klog up --memory"), kgo-suite
# (franz-go's own kgo integration tests, scripts/compat/kgo-suite.sh, against
# "klog up --memory"), hostile (scripts/hostile/run.sh: one bounded probe per
# finding of issue 9, each against its own "klog up"), reference (Kafka 4.4's
# own command-line tools, scripts/kafka/tools.sh, against "klog up --memory"
# and against the Kafka 4.4 reference broker of scripts/kafka/kafka.sh,
# fetched with Maven; ~/.m2 caches it between runs; then the compat matrix
# against that broker, compared cell by cell with klog's by
# scripts/compat/compare.sh; scripts/kafka/ondisk.sh, the on-disk format
# both ways; and scripts/kafka/protodiff between a fresh klog and that
# broker, informational: its mismatches are printed and do not fail the
# stage yet). Every stage prints a PASS or FAIL line; the script goes on after a failure where later
# stages still make sense and exits non-zero if any stage failed.
#
# For local runs, skip stages with environment variables (CI runs them all):
#   KLOG_SKIP_APT=1          do not apt-get the client packages
#   KLOG_SKIP_NPM=1          do not npm install the JavaScript clients
#   KLOG_SKIP_LINT=1         skip gofmt, vet and staticcheck
#   KLOG_SKIP_STATICCHECK=1  skip staticcheck only
#   KLOG_SKIP_GOTEST=1       skip go test
#   KLOG_SKIP_SMOKE=1        skip the smoke tests
#   KLOG_SKIP_COMPAT=1       skip the compat matrix
#   KLOG_SKIP_KGO_SUITE=1    skip franz-go's kgo integration suite
#   KLOG_SKIP_HOSTILE=1      skip the hostile-client probes
#   KLOG_SKIP_REFERENCE=1    skip the Kafka 4.4 reference stage
#   KLOG_SKIP_REFERENCE_COMPAT=1 skip only its compat matrix against Kafka
# Other knobs:
#   KLOG_GOTEST_TIMEOUT      go test -timeout (default 15m)
#   KLOG_GOTEST_PKGS         packages for go test (default ./...)
set -uo pipefail

STATICCHECK_VERSION=v0.8.2 # staticcheck 2026.2.2, builds with Go 1.26
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1

start_all=$SECONDS
passed=0
failed=0
failures=()
pass() { echo "PASS $1 ($2s)"; passed=$((passed + 1)); }
fail() { echo "FAIL $1 ($2s)"; failed=$((failed + 1)); failures+=("$1"); }
skip() { echo "SKIP $1 ($2)"; }
stage() { echo; echo "=== $1"; }
skipped() { [ "${CI:-}" != true ] && [ "${1:-0}" = 1 ]; }

# run_stage NAME CMD... runs CMD and records PASS/FAIL for NAME.
run_stage() {
  local name=$1 t=$SECONDS
  shift
  stage "$name"
  if "$@"; then pass "$name" $((SECONDS - t)); return 0; fi
  fail "$name" $((SECONDS - t))
  return 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "need root (or sudo) to run: $*" >&2
    return 1
  fi
}

# --- deps -----------------------------------------------------------------
# burrow and zookeeper (with java) for scripts/smoke/burrow.sh; the python
# codec modules let kafka-python's compat runner check every codec.
apt_packages=(kcat python3-confluent-kafka python3-kafka python3-snappy python3-lz4 python3-zstandard burrow zookeeper)
deps_missing() {
  command -v kcat >/dev/null || return 0
  [ -x /usr/bin/python3 ] || return 0
  /usr/bin/python3 -c 'import confluent_kafka, kafka, snappy, lz4.frame, zstandard' 2>/dev/null || return 0
  [ -x /usr/bin/Burrow ] || return 0
  [ -f /usr/share/java/zookeeper.jar ] || return 0
  return 1
}
install_apt() {
  if ! deps_missing; then
    echo "client packages already installed"
    return 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q &&
    as_root apt-get install -y -q --no-install-recommends "${apt_packages[@]}"
}
if skipped "${KLOG_SKIP_APT:-0}"; then
  skip deps/apt "KLOG_SKIP_APT=1"
else
  run_stage deps/apt install_apt
fi

# --- npm (JavaScript clients) ----------------------------------------------
# kafkajs for scripts/smoke/kafkajs_groups.sh, pinned by package-lock.json in
# the repo root and installed into node_modules/ there.
install_npm() {
  if ! command -v npm >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -q &&
      as_root apt-get install -y -q --no-install-recommends nodejs npm || return 1
  fi
  npm ci --no-audit --no-fund
}
if skipped "${KLOG_SKIP_NPM:-0}"; then
  skip deps/npm "KLOG_SKIP_NPM=1"
elif [ ! -f package-lock.json ]; then
  skip deps/npm "no package-lock.json"
else
  run_stage deps/npm install_npm
fi

# --- lint -----------------------------------------------------------------
check_gofmt() {
  local out
  out=$(gofmt -l . 2>&1)
  if [ -n "$out" ]; then
    echo "gofmt -l lists files that are not formatted:"
    echo "$out"
    return 1
  fi
}
run_staticcheck() {
  go run "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}" ./...
}
if skipped "${KLOG_SKIP_LINT:-0}"; then
  skip lint "KLOG_SKIP_LINT=1"
else
  run_stage gofmt check_gofmt
  run_stage vet go vet ./...
  if skipped "${KLOG_SKIP_STATICCHECK:-0}"; then
    skip staticcheck "KLOG_SKIP_STATICCHECK=1"
  else
    run_stage staticcheck run_staticcheck
  fi
fi

# --- go test ----------------------------------------------------------------
if skipped "${KLOG_SKIP_GOTEST:-0}"; then
  skip "go test" "KLOG_SKIP_GOTEST=1"
else
  # shellcheck disable=SC2086 # the package list is meant to split
  run_stage "go test -race" go test -race -count=1 -timeout "${KLOG_GOTEST_TIMEOUT:-15m}" ${KLOG_GOTEST_PKGS:-./...}
fi

# --- build ------------------------------------------------------------------
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
klog_bin=$bindir/klog
built=0
if run_stage build go build -o "$klog_bin" ./cmd/klog; then
  built=1
fi

# --- smoke ------------------------------------------------------------------
if skipped "${KLOG_SKIP_SMOKE:-0}"; then
  skip smoke "KLOG_SKIP_SMOKE=1"
elif [ "$built" -ne 1 ]; then
  stage smoke
  fail smoke 0
  echo "smoke: not run, klog did not build"
else
  run_stage smoke timeout 600 scripts/smoke/run.sh "$klog_bin"
fi

# --- compat -----------------------------------------------------------------
# Every client runner of scripts/compat/ against one fresh node; prints the
# client × scenario matrix and keeps it in $compat_klog_results for the
# reference stage to compare with Kafka's.
compat_klog_results=$bindir/compat-klog.txt
run_compat() {
  local dir rc=0
  dir=$(mktemp -d)
  # shellcheck source=smoke/lib.sh
  source "$root/scripts/smoke/lib.sh"
  if ! smoke_start_broker "$klog_bin" "$dir"; then
    rm -rf "$dir"
    return 1
  fi
  echo "compat: broker ready at $SMOKE_BROKERS (pid $SMOKE_BROKER_PID)"
  KLOG_COMPAT_RESULTS=$compat_klog_results timeout -k 10 1200 scripts/compat/run.sh "$SMOKE_BROKERS" || rc=$?
  if ! kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; then
    echo "compat: the broker died during the run"
    smoke_dump_broker_log "$dir"
    rc=1
  elif ! smoke_stop_broker; then
    smoke_dump_broker_log "$dir"
    rc=1
  fi
  rm -rf "$dir"
  return "$rc"
}
if skipped "${KLOG_SKIP_COMPAT:-0}"; then
  skip compat "KLOG_SKIP_COMPAT=1"
elif [ "$built" -ne 1 ]; then
  stage compat
  fail compat 0
  echo "compat: not run, klog did not build"
else
  run_stage compat run_compat
fi

# --- kgo-suite ---------------------------------------------------------------
# franz-go's own integration tests (package kgo) against one fresh node; the
# settings and exclusions are in scripts/compat/kgo-suite.sh.
run_kgo_suite() {
  local dir rc=0
  dir=$(mktemp -d)
  # shellcheck source=smoke/lib.sh
  source "$root/scripts/smoke/lib.sh"
  if ! smoke_start_broker "$klog_bin" "$dir"; then
    rm -rf "$dir"
    return 1
  fi
  echo "kgo-suite: broker ready at $SMOKE_BROKERS (pid $SMOKE_BROKER_PID)"
  KGO_SUITE_TIMEOUT=10m timeout -k 10 720 scripts/compat/kgo-suite.sh "$SMOKE_BROKERS" || rc=$?
  if ! kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; then
    echo "kgo-suite: the broker died during the run"
    smoke_dump_broker_log "$dir"
    rc=1
  elif ! smoke_stop_broker; then
    smoke_dump_broker_log "$dir"
    rc=1
  elif [ "$rc" -ne 0 ]; then
    smoke_dump_broker_log "$dir"
  fi
  rm -rf "$dir"
  return "$rc"
}
if skipped "${KLOG_SKIP_KGO_SUITE:-0}"; then
  skip kgo-suite "KLOG_SKIP_KGO_SUITE=1"
elif [ "$built" -ne 1 ]; then
  stage kgo-suite
  fail kgo-suite 0
  echo "kgo-suite: not run, klog did not build"
else
  run_stage kgo-suite run_kgo_suite
fi

# --- hostile ------------------------------------------------------------------
# One bounded probe per finding of issue 9 (memory, descriptors, transactions
# a client can wedge, garbage, log floods), each starting its own node; prints
# a PROBE line with its figures per probe.
if skipped "${KLOG_SKIP_HOSTILE:-0}"; then
  skip hostile "KLOG_SKIP_HOSTILE=1"
elif [ "$built" -ne 1 ]; then
  stage hostile
  fail hostile 0
  echo "hostile: not run, klog did not build"
else
  run_stage hostile timeout -k 10 300 scripts/hostile/run.sh "$klog_bin"
fi

# --- reference: protodiff (informational) ---------------------------------------
# scripts/kafka/protodiff against a fresh klog node and the running Kafka 4.4
# broker: prints its table of mismatches. Informational for now: it never
# fails the stage (klog has known mismatches, listed in scripts/kafka/README.md,
# not yet fixed); it only says whether it found any.
run_protodiff_informational() {
  local dir=$1 kafka_brokers=$2 rc=0
  mkdir -p "$dir/protodiff"
  go build -o "$dir/protodiff/protodiff" ./scripts/kafka/protodiff || { echo "reference: protodiff did not build (informational)"; return 0; }
  if ! smoke_start_broker "$klog_bin" "$dir/protodiff"; then
    echo "reference: protodiff not run, klog did not start (informational)"
    return 0
  fi
  timeout -k 10 300 "$dir/protodiff/protodiff" -klog "$SMOKE_BROKERS" -kafka "$kafka_brokers" || rc=$?
  smoke_stop_broker || true
  echo "reference: protodiff exit $rc (informational: mismatches do not fail the stage yet)"
  return 0
}

# --- reference ------------------------------------------------------------------
# Kafka 4.4's own tools (scripts/kafka/tools.sh) against a fresh klog node,
# then against the Kafka 4.4 reference broker as the control: a check that
# fails on Kafka is a wrong check.
# reference_compat BROKERS DIR runs scripts/compat/run.sh against Kafka 4.4
# and compares its matrix with klog's from the compat stage (compare.sh): it
# fails if a scenario fails on Kafka (a wrong scenario) or if a cell differs
# from klog's without being a documented difference. Without klog's matrix
# (the compat stage skipped or failed to start) only Kafka's is checked.
reference_compat() {
  local rc=0 t=$SECONDS
  if skipped "${KLOG_SKIP_REFERENCE_COMPAT:-0}"; then
    echo "reference: compat matrix against Kafka 4.4 skipped (KLOG_SKIP_REFERENCE_COMPAT=1)"
    return 0
  fi
  echo "reference: the compat matrix against Kafka 4.4"
  KLOG_COMPAT_RESULTS=$2/compat-kafka.txt timeout -k 10 600 scripts/compat/run.sh "$1" || rc=1
  echo "reference: Kafka 4.4's compat matrix took $((SECONDS - t))s"
  if [ -s "$compat_klog_results" ]; then
    echo "reference: klog's compat matrix (compat stage) against Kafka 4.4's"
    scripts/compat/compare.sh "$compat_klog_results" "$2/compat-kafka.txt" || rc=1
  else
    echo "reference: no klog compat matrix to compare with (the compat stage did not run or wrote none)"
  fi
  return "$rc"
}
run_reference() {
  local dir rc=0 out kafka_brokers
  dir=$(mktemp -d)
  # shellcheck source=smoke/lib.sh
  source "$root/scripts/smoke/lib.sh"
  timeout -k 10 600 scripts/kafka/kafka.sh fetch || { rm -rf "$dir"; return 1; }
  if smoke_start_broker "$klog_bin" "$dir"; then
    echo "reference: klog ready at $SMOKE_BROKERS (pid $SMOKE_BROKER_PID)"
    timeout -k 10 240 scripts/kafka/tools.sh "$SMOKE_BROKERS" --target klog || rc=1
    if ! kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; then
      echo "reference: klog died during the run"
      smoke_dump_broker_log "$dir"
      rc=1
    elif ! smoke_stop_broker; then
      smoke_dump_broker_log "$dir"
      rc=1
    fi
  else
    rc=1
  fi
  if out=$(timeout -k 10 300 scripts/kafka/kafka.sh start --dir "$dir/kafka"); then
    kafka_brokers=$(sed -n 's/^BROKERS=//p' <<<"$out")
    echo "reference: Kafka 4.4 ready at $kafka_brokers"
    timeout -k 10 240 scripts/kafka/tools.sh "$kafka_brokers" --target kafka || rc=1
    # --- the compat matrix against Kafka 4.4 (scripts/compat/) ---
    reference_compat "$kafka_brokers" "$dir" || rc=1
    # --- end of the compat matrix against Kafka 4.4 ---
    run_protodiff_informational "$dir" "$kafka_brokers" # informational: never fails the stage
    scripts/kafka/kafka.sh stop "$dir/kafka" || rc=1
  else
    echo "reference: the Kafka 4.4 reference broker did not start"
    rc=1
  fi
  # The on-disk format both ways: starts and stops its own klog and Kafka.
  KLOG_BIN="$klog_bin" timeout -k 10 300 scripts/kafka/ondisk.sh || rc=1
  rm -rf "$dir"
  return "$rc"
}
if skipped "${KLOG_SKIP_REFERENCE:-0}"; then
  skip reference "KLOG_SKIP_REFERENCE=1"
elif [ "$built" -ne 1 ]; then
  stage reference
  fail reference 0
  echo "reference: not run, klog did not build"
else
  run_stage reference run_reference
fi

echo
if [ "$failed" -gt 0 ]; then
  echo "failed stages: ${failures[*]}"
fi
echo "total $((SECONDS - start_all))s"
echo "test.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
