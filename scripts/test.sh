#!/usr/bin/env bash
# klog's test command: the one CI runs (.ci/run) and the README names.
#
#   scripts/test.sh [--under-load]
#
# Stages, in order: deps (apt, npm, pip), gofmt, vet, staticcheck, go test -race, build,
# smoke (real clients against "klog up"), tui (klog tui in tmux), docs (the
# README's quickstart run as printed, scripts/docs/quickstart.sh), compat
# (the client × scenario matrix of scripts/compat/run.sh against "klog up
# --memory"), compat/3-nodes
# (the same against "klog up -n 3"), kgo-suite
# (franz-go's own kgo integration tests, scripts/compat/kgo-suite.sh, against
# "klog up --memory"), kgo-suite/3-nodes (the same against "klog up -n 3",
# KGO_TEST_RF=3), security (klog up --secure and -n 3 --secure: the compat
# matrix over SASL_SSL and mTLS from the client configs it wrote, franz-go's
# kgo suite over mTLS and its SCRAM tests, Kafka's tools with
# --command-config), hostile (scripts/hostile/run.sh: one bounded probe per
# finding of issue 9, each against its own "klog up"), chaos (scripts/chaos:
# SIGKILL, SIGSTOP and restarts of a node under an idempotent acks=all
# producer, with a checker of what was acknowledged; then the same on
# "klog up -n 3" faulted with "klog node": leader kill and follower stop,
# not enough replicas, rolling restart, controller kill, coordinator
# failover), reference (Kafka 4.4's
# own command-line tools, scripts/kafka/tools.sh, and klog's own commands,
# scripts/kafka/klogcmds.sh, against "klog up --memory" and against the
# Kafka 4.4 reference broker of scripts/kafka/kafka.sh, fetched with Maven;
# ~/.m2 caches it between runs; on both, the Kafka Streams check,
# scripts/compat/streams.sh; then the compat matrix
# against that broker, compared cell by cell with klog's by
# scripts/compat/compare.sh; scripts/kafka/ondisk.sh, the on-disk format
# both ways; and scripts/kafka/protodiff between a fresh klog and that
# broker: any mismatch it does not expect fails the stage). Every stage prints a PASS or FAIL line; the script goes on after a failure where later
# stages still make sense and exits non-zero if any stage failed.
#
# The summary at the end repeats, for each failed stage, what failed: each
# failed Go test with its failure text (and seed, when it logs one), each
# FAIL line of a check, client cell, chaos scenario or probe, or else the
# stage's last lines; then a "rerun:" line per failure with the command
# that runs it alone (BIN is a klog built with go build -o BIN ./cmd/klog,
# BROKERS a klog up --memory, or klog up -n 3 for a 3-nodes stage).
#
#   --under-load  (or KLOG_UNDER_LOAD=1) runs the suite on a busy machine:
#                 stress-ng --cpu 2 --io 1 (Debian's stress-ng, which
#                 deps/apt then installs) runs beside every stage after the
#                 deps stages and is stopped at exit, on a failure or an
#                 interrupt too. Each stage's line shows the load average at
#                 its end; the summary says the run was under load, and a
#                 hog that stopped early fails the run. The suite must pass
#                 so: no test may depend on an idle machine.
#
# For local runs, skip stages with environment variables (CI runs them all):
#   KLOG_SKIP_APT=1          do not apt-get the client packages
#   KLOG_SKIP_NPM=1          do not npm install the JavaScript clients
#   KLOG_SKIP_PIP=1          do not pip install the PyPI clients (the compat
#                            matrix then uses their virtualenv only if it is
#                            already built, else their columns SKIP)
#   KLOG_SKIP_LINT=1         skip gofmt, vet and staticcheck
#   KLOG_SKIP_STATICCHECK=1  skip staticcheck only
#   KLOG_SKIP_GOTEST=1       skip go test
#   KLOG_SKIP_SMOKE=1        skip the smoke tests
#   KLOG_SKIP_TUI=1          skip klog tui's end-to-end check in tmux
#   KLOG_SKIP_DOCS=1         skip running the README's quickstart
#   KLOG_SKIP_COMPAT=1       skip the compat matrix
#   KLOG_SKIP_COMPAT_3NODES=1 skip the compat matrix against klog up -n 3
#   KLOG_SKIP_KGO_SUITE=1    skip franz-go's kgo integration suite
#   KLOG_SKIP_KGO_SUITE_3NODES=1 skip the kgo suite against klog up -n 3
#   KLOG_SKIP_SECURITY=1     skip the security stages (klog up --secure)
#   KLOG_SKIP_SECURITY_3NODES=1 skip only their klog up -n 3 --secure stages
#   KLOG_SKIP_SECURITY_COMPAT=1 skip only their compat matrices
#   KLOG_SKIP_HOSTILE=1      skip the hostile-client probes
#   KLOG_SKIP_CHAOS=1        skip the fault tests with a checker
#   KLOG_SKIP_REFERENCE=1    skip the Kafka 4.4 reference stage
#   KLOG_SKIP_REFERENCE_COMPAT=1 skip only its compat matrix against Kafka
#   KLOG_SKIP_REFERENCE_KLOGCMDS=1 skip only its klog commands (klogcmds.sh)
#   KLOG_SKIP_REFERENCE_STREAMS=1 skip only its Kafka Streams check
#   KLOG_SKIP_REFERENCE_CLUSTER=1 skip only its protodiff -nodes 3 (klog up -n 3
#                            against a 3-node Kafka 4.4)
# Other knobs:
#   KLOG_GOTEST_TIMEOUT      go test -timeout (default 15m)
#   KLOG_GOTEST_PKGS         packages for go test (default ./...)
#   KLOG_UNDER_LOAD=1        as --under-load
#   KLOG_UNDER_LOAD_MAX      seconds after which the hog of --under-load ends
#                            by itself, should test.sh be killed (default 7200)
set -uo pipefail

under_load=${KLOG_UNDER_LOAD:-0}
for arg in "$@"; do
  case $arg in
  --under-load) under_load=1 ;;
  -h | --help)
    sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"
    exit 0
    ;;
  *)
    echo "test.sh: unknown argument $arg (usage: scripts/test.sh [--under-load])" >&2
    exit 2
    ;;
  esac
done

STATICCHECK_VERSION=v0.8.2 # staticcheck 2026.2.2, builds with Go 1.26
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1

start_all=$SECONDS
passed=0
failed=0
failures=()
declare -A stage_rc=() # how a failed stage ended, for the summary
# took SECONDS says how long a stage took and, under load, the load
# average at its end.
took() {
  if [ "$under_load" = 1 ]; then
    echo "$1s, load $(cut -d' ' -f1 /proc/loadavg)"
  else
    echo "$1s"
  fi
}
pass() { echo "PASS $1 ($(took "$2"))"; passed=$((passed + 1)); }
fail() { echo "FAIL $1 ($(took "$2"))"; failed=$((failed + 1)); failures+=("$1"); }
skip() { echo "SKIP $1 ($2)"; }
stage() { echo; echo "=== $1"; }
skipped() { [ "${CI:-}" != true ] && [ "${1:-0}" = 1 ]; }

# run_stage NAME CMD... runs CMD and records PASS/FAIL for NAME. The
# stage's output is also kept in $stage_logs, so that the summary at the
# end can repeat why a failed stage failed: a CI log is often read from
# its last lines only.
stage_logs=$(mktemp -d)
# The clusters the suite starts register in a state directory of its own
# (klog status, down and node find clusters there): a klog up the
# developer runs is never one of the suite's candidates, and the suite
# leaves nothing in theirs.
export XDG_STATE_HOME="$stage_logs/state"
bindir=
# cleanup runs at exit, however the script ends: the load hog must not
# outlive it.
cleanup() {
  stop_load
  rm -rf "$stage_logs" ${bindir:+"$bindir"}
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
stage_log() { echo "$stage_logs/${1//\//_}.log"; }
run_stage() {
  local name=$1 t=$SECONDS log rc=0 tee_pid n
  shift
  stage "$name"
  log=$(stage_log "$name")
  exec 3>&1 4>&2 > >(tee "$log") 2>&1
  tee_pid=$!
  "$@" || rc=$?
  exec 1>&3 2>&4 3>&- 4>&-
  # tee ends once nothing holds the stage's output open; a process the
  # stage left behind may, so the wait is bounded (it only orders lines).
  for ((n = 0; n < 40; n++)); do
    kill -0 "$tee_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ "$rc" -eq 0 ]; then pass "$name" $((SECONDS - t)); return 0; fi
  stage_rc[$name]="exit $rc"
  [ "$rc" -eq 124 ] && stage_rc[$name]+=", killed by its timeout"
  fail "$name" $((SECONDS - t))
  return 1
}

# fail_reasons NAME prints, indented, what stage NAME's output says
# failed, each with a "rerun:" line (scripts/test-failures.awk), or else
# its last lines; each line cut to 240 characters.
fail_reasons() {
  local log out
  log=$(stage_log "$1")
  [ -s "$log" ] || return 0
  out=$(awk -v stage="$1" -f "$root/scripts/test-failures.awk" "$log")
  if [ -z "$out" ]; then
    echo "    (no line says what failed; the stage's last lines:)"
    out=$(grep -a -v -E '^[[:space:]]*$' "$log" | tail -n 10)
  fi
  printf '%s\n' "$out" | cut -c1-240 | sed 's/^/    /'
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

# --- load (--under-load) ----------------------------------------------------
# stress-ng --cpu 2 --io 1 in a session of its own, so that stop_load ends
# it and its workers together; should this script be killed without
# running its EXIT trap, a watchdog ends it, and its --timeout at last.
load_cmd=(stress-ng --cpu 2 --io 1)
load_pid=
load_start=
load_avg_start=
load_log=$stage_logs/stress-ng.out
start_load() {
  local n workers=0
  if ! command -v stress-ng >/dev/null; then
    echo "load: stress-ng is not installed (deps/apt installs it for --under-load; KLOG_SKIP_APT=1 skipped that)"
    return 1
  fi
  setsid "${load_cmd[@]}" --timeout "${KLOG_UNDER_LOAD_MAX:-7200}s" >"$load_log" 2>&1 </dev/null 3>&- 4>&- &
  load_pid=$!
  load_start=$SECONDS
  # A watchdog ends the hog once this script is gone, even SIGKILLed
  # (which runs no trap).
  (
    while kill -0 "$$" 2>/dev/null && kill -0 "$load_pid" 2>/dev/null; do
      sleep 2
    done
    kill -KILL -- "-$load_pid" 2>/dev/null
  ) >/dev/null 2>&1 </dev/null 3>&- 4>&- &
  # Under way once its three workers run (bounded: a hog that does not
  # start fails the stage).
  for ((n = 0; n < 100; n++)); do
    workers=$(pgrep -c -P "$load_pid" 2>/dev/null) || workers=0
    [ "$workers" -ge 3 ] && break
    kill -0 "$load_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$workers" -lt 3 ]; then
    echo "load: ${load_cmd[*]} did not start its workers ($workers running):"
    cat "$load_log"
    stop_load
    return 1
  fi
  load_avg_start=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "load: ${load_cmd[*]} running (pid $load_pid, $workers workers) beside every stage from here on; load average $load_avg_start"
}
# load_running says whether the hog still runs.
load_running() { [ -n "$load_pid" ] && kill -0 "$load_pid" 2>/dev/null; }
# stop_load ends the hog and its workers: SIGTERM to its session, SIGKILL
# to what is left after 10 s.
stop_load() {
  local n
  [ -n "$load_pid" ] || return 0
  kill -TERM -- "-$load_pid" 2>/dev/null
  for ((n = 0; n < 100; n++)); do
    kill -0 -- "-$load_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$load_pid" 2>/dev/null
  wait "$load_pid" 2>/dev/null
  load_pid=
}

# --- deps -----------------------------------------------------------------
# burrow and zookeeper (with java) for scripts/smoke/burrow.sh; the python
# codec modules let kafka-python's compat runner check every codec;
# python3-venv gives /usr/bin/python3 the venv module for deps/pip; tmux
# runs klog tui for scripts/tui/e2e.sh.
apt_packages=(kcat python3-confluent-kafka python3-kafka python3-snappy python3-lz4 python3-zstandard python3-venv burrow zookeeper tmux)
# stress-ng is the hog of --under-load.
[ "$under_load" = 1 ] && apt_packages+=(stress-ng)
deps_missing() {
  [ "$under_load" = 1 ] && ! command -v stress-ng >/dev/null && return 0
  command -v kcat >/dev/null || return 0
  command -v tmux >/dev/null || return 0
  [ -x /usr/bin/python3 ] || return 0
  /usr/bin/python3 -c 'import confluent_kafka, kafka, snappy, lz4.frame, zstandard, venv, ensurepip' 2>/dev/null || return 0
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
# kafkajs for the smoke tests (scripts/smoke/kafkajs_*.sh) and the compat
# matrix (scripts/compat/kafkajs.js), pinned by scripts/package-lock.json and
# installed into scripts/node_modules/, where node finds it from both.
install_npm() {
  if ! command -v npm >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -q &&
      as_root apt-get install -y -q --no-install-recommends nodejs npm || return 1
  fi
  (cd scripts && npm ci --no-audit --no-fund)
}
if skipped "${KLOG_SKIP_NPM:-0}"; then
  skip deps/npm "KLOG_SKIP_NPM=1"
elif [ ! -f scripts/package-lock.json ]; then
  skip deps/npm "no scripts/package-lock.json"
else
  run_stage deps/npm install_npm
fi

# --- pip (PyPI clients of the compat matrix) --------------------------------
# confluent-kafka (with a current librdkafka) and aiokafka, pinned by
# scripts/compat/requirements.txt, in the virtualenv scripts/compat/venv.sh
# keeps under .cache/ and reuses. A failure here (PyPI unreachable) fails the
# stage, and the compat matrix then shows those two columns SKIP.
install_pip() {
  timeout -k 10 420 scripts/compat/venv.sh >/dev/null
}
if skipped "${KLOG_SKIP_PIP:-0}"; then
  skip deps/pip "KLOG_SKIP_PIP=1"
else
  unset KLOG_SKIP_PIP
  # After a failure the compat runs do not try PyPI again.
  run_stage deps/pip install_pip || export KLOG_SKIP_PIP=1
fi

if [ "$under_load" = 1 ]; then
  run_stage load start_load
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
bindir=$(mktemp -d) # removed by cleanup
klog_bin=$bindir/klog
built=0
if run_stage build go build -o "$klog_bin" ./cmd/klog; then
  built=1
fi

# built_stage NAME SKIPVAR CMD... runs the stage NAME unless SKIPVAR=1
# skips it; it fails without running when klog did not build.
built_stage() {
  local name=$1 var=$2
  shift 2
  if skipped "${!var:-0}"; then
    skip "$name" "$var=1"
  elif [ "$built" -ne 1 ]; then
    stage "$name"
    stage_rc[$name]="not run: klog did not build"
    fail "$name" 0
  else
    run_stage "$name" "$@"
  fi
}

# --- smoke ------------------------------------------------------------------
built_stage smoke KLOG_SKIP_SMOKE timeout 600 scripts/smoke/run.sh "$klog_bin"

# --- tui --------------------------------------------------------------------
# klog tui in a real terminal (tmux) against klog up: keys sent, screens read;
# then at 80 columns while a 3-node cluster loses a node and its quorum; then
# the security screens and events against klog up --secure.
# Without tmux (a local run with KLOG_SKIP_APT=1) it is skipped, not failed;
# in CI it fails.
tui_e2e() {
  local rc=0
  timeout 300 scripts/tui/e2e.sh "$klog_bin" || rc=$?
  [ "$rc" -eq 77 ] && return 0
  [ "$rc" -eq 0 ] || return "$rc"
  timeout 300 scripts/tui/down.sh "$klog_bin" || rc=$?
  timeout 300 scripts/tui/security.sh "$klog_bin" || rc=$?
  return "$rc"
}
built_stage tui KLOG_SKIP_TUI tui_e2e

# --- docs -------------------------------------------------------------------
# The README's quickstart, run as printed against its own klog up, each
# command's output compared with the page's (ids, timings, ports and paths
# masked).
built_stage docs KLOG_SKIP_DOCS timeout 300 scripts/docs/quickstart.sh "$klog_bin"

# part DESC CMD... runs one part of a stage and, if it fails, says which
# in a FAIL line the summary repeats.
part() {
  local desc=$1 rc=0
  shift
  "$@" || rc=$?
  [ "$rc" -eq 0 ] || echo "FAIL part: $desc (exit $rc)"
  return "$rc"
}
# on_klog [--secure sasl_ssl|mtls] NAME NODES CMD... starts "klog up
# --memory", or with NODES > 1 a local cluster, "klog up -n NODES"
# (scripts/smoke/lib.sh), runs CMD with the whole bootstrap list as its
# last argument, checks that the broker (every node of a cluster) lived
# through the run and stops it; the broker's log is printed when anything
# failed. With --secure it starts "klog up --secure" (-n NODES --secure)
# and gives CMD the SASL_SSL listeners and KLOG_COMPAT_SECURITY=DATA-DIR/
# secure/app.properties (sasl_ssl: SCRAM-SHA-512 as app), or the SSL
# listeners and app-mtls.properties (mtls: app's client certificate).
# With --sasl-plaintext (one node) the node also serves SASL_PLAINTEXT
# (SCRAM) at $SMOKE_SASL_PLAINTEXT_BROKERS.
on_klog() {
  local secure='' secure_on=0 sasl_plaintext=0
  if [ "$1" = --secure ]; then
    secure=$2 secure_on=1
    shift 2
  elif [ "$1" = --sasl-plaintext ]; then
    sasl_plaintext=1
    shift
  fi
  local name=$1 nodes=$2 dir rc=0 brokers conf=''
  shift 2
  dir=$(mktemp -d)
  # shellcheck source=smoke/lib.sh
  source "$root/scripts/smoke/lib.sh"
  if ! SMOKE_SECURE=$secure_on SMOKE_SASL_PLAINTEXT=$sasl_plaintext smoke_start_broker "$klog_bin" "$dir" "$nodes"; then
    rm -rf "$dir"
    return 1
  fi
  brokers=$SMOKE_BROKERS
  case $secure in
  sasl_ssl) brokers=$SMOKE_SASL_SSL_BROKERS conf=$SMOKE_SECURE_DIR/app.properties ;;
  mtls) brokers=$SMOKE_SSL_BROKERS conf=$SMOKE_SECURE_DIR/app-mtls.properties ;;
  esac
  echo "$name: $nodes node(s) ready at $brokers${conf:+ (KLOG_COMPAT_SECURITY=$conf)} (pid $SMOKE_BROKER_PID)"
  if [ -n "$conf" ]; then
    KLOG_COMPAT_SECURITY=$conf "$@" "$brokers" || rc=$?
  else
    "$@" "$brokers" || rc=$?
  fi
  if ! kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; then
    echo "$name: the broker died during the run"
    smoke_dump_broker_log "$dir"
    rc=1
  else
    if [ "$nodes" -gt 1 ] && ! smoke_cluster_running "$klog_bin"; then
      echo "$name: a node died during the run"
      rc=1
    fi
    smoke_stop_broker || rc=1
    [ "$rc" -eq 0 ] || smoke_dump_broker_log "$dir"
  fi
  rm -rf "$dir"
  return "$rc"
}

# --- compat -----------------------------------------------------------------
# Every client runner of scripts/compat/ against one fresh node; prints the
# client × scenario matrix and keeps it in $compat_klog_results for the
# reference stage to compare with Kafka's. compat/3-nodes runs the same
# matrix against "klog up -n 3", every client given all three addresses:
# the cluster defaults (RF 3, min.insync.replicas 2) apply where a runner
# leaves the replication factor to the broker, and partitions, group and
# transaction coordinators are spread over the nodes.
compat_klog_results=$bindir/compat-klog.txt
built_stage compat KLOG_SKIP_COMPAT on_klog compat 1 \
  env "KLOG_COMPAT_RESULTS=$compat_klog_results" timeout -k 10 1200 scripts/compat/run.sh
built_stage compat/3-nodes KLOG_SKIP_COMPAT_3NODES on_klog compat/3-nodes 3 \
  timeout -k 10 1200 scripts/compat/run.sh

# --- kgo-suite ---------------------------------------------------------------
# franz-go's own integration tests (package kgo) against one fresh node, and
# against "klog up -n 3" with KGO_TEST_RF=3 (kgo-suite/3-nodes); the settings
# and exclusions are in scripts/compat/kgo-suite.sh.
built_stage kgo-suite KLOG_SKIP_KGO_SUITE on_klog kgo-suite 1 \
  env KGO_SUITE_TIMEOUT=10m timeout -k 10 720 scripts/compat/kgo-suite.sh
built_stage kgo-suite/3-nodes KLOG_SKIP_KGO_SUITE_3NODES on_klog kgo-suite/3-nodes 3 \
  env KGO_SUITE_TIMEOUT=10m KGO_TEST_RF=3 timeout -k 10 720 scripts/compat/kgo-suite.sh

# --- security -----------------------------------------------------------------
# klog up --secure (issue 30): every client of the compat matrix connects
# with the client configs klog up --secure wrote (run.sh's
# KLOG_COMPAT_SECURITY: app.properties, SASL_SSL with SCRAM-SHA-512 as app,
# or app-mtls.properties, mTLS with app's client certificate, User:app),
# authorized by the ACLs --secure gives app. Four full matrices would cost
# CI about as much as compat and compat/3-nodes together again, so the full
# matrix runs over SASL_SSL on one node (security/sasl-ssl) and over mTLS
# on "klog up -n 3 --secure" (security/mtls-3-nodes), and the two other
# pairs run every client on the scenarios of security_subset
# (security/mtls, security/sasl-ssl-3-nodes). Each runner may take 300 s
# (KLOG_COMPAT_TIMEOUT; 180 s in the compat stages): at load 20 the Java
# runner over SASL_SSL ran past 180 s, fresh JVMs' TLS handshakes running
# past klog's 10 s bound on them (socket.request.progress.timeout.ms)
# and retrying.
# security/kgo-suite runs
# franz-go's kgo suite over mTLS (KGO_TEST_TLS), security/kgo-scram its
# SCRAM tests (KGO_TEST_SCRAM) against a SASL_PLAINTEXT listener,
# security/tools Kafka 4.4's tools with --command-config
# (scripts/kafka/tools.sh --secure: kafka-configs SCRAM users and client
# quotas, kafka-acls, the console producer and consumer over SASL_SSL and
# mTLS), and kafka-delegation-tokens (scripts/kafka/delegation-tokens.sh,
# on a node of its own).
security_subset="admin produce-consume group transactions"
: "${KLOG_SKIP_SECURITY_COMPAT:=${KLOG_SKIP_SECURITY:-0}}"
: "${KLOG_SKIP_SECURITY_3NODES:=${KLOG_SKIP_SECURITY:-0}}"
KLOG_SKIP_SECURITY_COMPAT_3NODES=$KLOG_SKIP_SECURITY_COMPAT
[ "$KLOG_SKIP_SECURITY_3NODES" = 1 ] && KLOG_SKIP_SECURITY_COMPAT_3NODES=1
# security_matrix BROKERS runs the whole matrix, then the Kafka Streams
# check (scripts/compat/streams.sh, which reads KLOG_COMPAT_SECURITY too)
# on 6,000 records: exactly-once through two SIGKILLs over the secured
# listener (about 2.5 min at load 30; the reference stage runs it on
# 30,000 records over PLAINTEXT).
security_matrix() {
  local rc=0
  KLOG_COMPAT_TIMEOUT=300 timeout -k 10 1800 scripts/compat/run.sh "$1" || rc=1
  KLOG_STREAMS_RECORDS=6000 KLOG_STREAMS_TIMEOUT=120 timeout -k 10 600 scripts/compat/streams.sh "$1" || rc=1
  return "$rc"
}
built_stage security/sasl-ssl KLOG_SKIP_SECURITY_COMPAT on_klog --secure sasl_ssl security/sasl-ssl 1 security_matrix
built_stage security/mtls KLOG_SKIP_SECURITY_COMPAT on_klog --secure mtls security/mtls 1 \
  env KLOG_COMPAT_SCENARIOS="$security_subset" KLOG_COMPAT_TIMEOUT=300 timeout -k 10 1200 scripts/compat/run.sh
built_stage security/mtls-3-nodes KLOG_SKIP_SECURITY_COMPAT_3NODES on_klog --secure mtls security/mtls-3-nodes 3 security_matrix
built_stage security/sasl-ssl-3-nodes KLOG_SKIP_SECURITY_COMPAT_3NODES on_klog --secure sasl_ssl security/sasl-ssl-3-nodes 3 \
  env KLOG_COMPAT_SCENARIOS="$security_subset" KLOG_COMPAT_TIMEOUT=300 timeout -k 10 1200 scripts/compat/run.sh

# security_kgo BROKERS runs franz-go's kgo suite against the SSL listeners
# BROKERS of klog up --secure, every test client with app's certificate
# (KGO_TEST_TLS), less the two long ETL tests the kgo-suite stages run and
# TestIssue769, whose client sets a Dialer of its own: with KGO_TEST_TLS's
# DialTLSConfig franz-go refuses that config ("cannot set both Dialer and
# DialTLSConfig"), the test ignores the error and dereferences the nil
# client;
# security_kgo_scram BROKERS runs the suite's SCRAM tests (TestSCRAMAuth,
# TestSCRAMAuthBadCredentials) against the SASL_PLAINTEXT listener of
# on_klog --sasl-plaintext (the tests dial without TLS), for a user klog
# user create made with SCRAM-SHA-512 (KGO_TEST_SCRAM=USER:PASSWORD:512).
security_kgo() {
  local d rc=0
  d=$(dirname "$KLOG_COMPAT_SECURITY")
  KGO_TEST_TLS="ca:$d/ca.pem,cert:$d/client-app.pem,key:$d/client-app.key" KGO_SUITE_EXCLUDE='TestGroupETL|TestTxnEtl|TestIssue769' \
    KGO_SUITE_TIMEOUT=6m timeout -k 10 420 scripts/compat/kgo-suite.sh "$1" || rc=1
  return "$rc"
}
built_stage security/kgo-suite KLOG_SKIP_SECURITY on_klog --secure mtls security/kgo-suite 1 security_kgo
security_kgo_scram() {
  "$klog_bin" user create kgo-scram --password kgo-scram-secret -b "$1" >/dev/null || return 1
  KGO_TEST_SCRAM=kgo-scram:kgo-scram-secret:512 KGO_TEST_SCRAM_SEEDS=$SMOKE_SASL_PLAINTEXT_BROKERS \
    KGO_SUITE_RUN='^(TestSCRAMAuth|TestSCRAMAuthBadCredentials)$' timeout -k 10 300 scripts/compat/kgo-suite.sh "$1"
}
built_stage security/kgo-scram KLOG_SKIP_SECURITY on_klog --sasl-plaintext security/kgo-scram 1 security_kgo_scram
# security_tools BROKERS runs scripts/kafka/tools.sh --secure against the
# SASL_SSL listeners BROKERS.
security_tools() {
  local rc=0
  timeout -k 10 600 scripts/kafka/tools.sh "$1" --target klog --secure "$(dirname "$KLOG_COMPAT_SECURITY")" || rc=1
  # kafka-delegation-tokens against a klog up --secure of its own.
  KLOG_BIN=$klog_bin timeout -k 10 300 scripts/kafka/delegation-tokens.sh || rc=1
  return "$rc"
}
built_stage security/tools KLOG_SKIP_SECURITY on_klog --secure sasl_ssl security/tools 1 security_tools

# --- hostile ------------------------------------------------------------------
# One bounded probe per finding of issue 9 (memory, descriptors, transactions
# a client can wedge, garbage, log floods) and for issue 30's bad SASL logins
# and stalled TLS handshakes, each starting its own node; prints
# a PROBE line with its figures per probe. About 3 minutes on an idle
# machine, the decode-bound attack of issue 26 included, 4 at load 15; the
# bound leaves room for a busy one (the descriptors probe alone may take
# 5.5 minutes).
built_stage hostile KLOG_SKIP_HOSTILE timeout -k 10 720 scripts/hostile/run.sh "$klog_bin"

# --- chaos --------------------------------------------------------------------
# scripts/chaos: klog up as a real process, SIGKILLed, SIGSTOPped and
# restarted while an idempotent acks=all producer writes numbered records;
# the checker counts what was acknowledged, lost, duplicated and reordered.
# Every scenario runs, one CHAOS line each: the three on one node (about 6 s
# together), then those on a fresh klog up -n 3 each (5 to 30 s each),
# every one bounded by -timeout. Among them isolated-leader and truncation
# (tests 2 and 4 of issue 11, scripts/chaos/isolation.go) and
# coord-failover (test 7, scripts/chaos/coordinator.go), which kills the
# coordinators' node under a consumer group and an exactly-once copier;
# and issue 26's dup-kill, dup-kill-durable (a leader SIGKILLed 20 times
# with 4 KiB segments) and leader-tail-cut (a killed leader restarted at
# once with half its last segment).
# The stage's bound is above the sum of the scenarios' own (thirteen of
# 120 s): on a busy machine a slow scenario then fails by itself, named,
# instead of the whole stage being killed.
built_stage chaos KLOG_SKIP_CHAOS timeout -k 10 1620 go run ./scripts/chaos -klog "$klog_bin" -timeout 120s

# --- reference: protodiff ---------------------------------------------------------
# scripts/kafka/protodiff against a fresh klog node and the running Kafka 4.4
# broker, last (its destructive cases delete __consumer_offsets on both): it
# fails the stage on any field mismatch or error message not in its
# expected.go, each of which names where it is documented as deliberate.
run_protodiff() {
  local dir=$1 kafka_brokers=$2 rc=0 t=$SECONDS
  mkdir -p "$dir/protodiff"
  go build -o "$dir/protodiff/protodiff" ./scripts/kafka/protodiff || { echo "reference: protodiff did not build"; return 1; }
  if ! smoke_start_broker "$klog_bin" "$dir/protodiff"; then
    echo "reference: protodiff not run, klog did not start"
    return 1
  fi
  timeout -k 10 300 "$dir/protodiff/protodiff" -destructive -messages -klog "$SMOKE_BROKERS" -kafka "$kafka_brokers" || rc=1
  smoke_stop_broker || rc=1
  echo "reference: protodiff took $((SECONDS - t))s"
  return "$rc"
}

# run_protodiff_authz DIR runs scripts/kafka/protodiff -authz, the
# authorization corpus, between a klog node and a Kafka 4.4 broker both
# configured with scripts/kafka/protodiff/authz.properties (the
# StandardAuthorizer; PLAIN users on a SASL_PLAINTEXT listener named
# SASL), each started for it alone. Any unexpected mismatch fails.
run_protodiff_authz() {
  local dir=$1/authz rc=0 t=$SECONDS out kafka_brokers kafka_sasl line
  local props=scripts/kafka/protodiff/authz.properties xargs=() klog_addrs=()
  mkdir -p "$dir"
  go build -o "$dir/protodiff" ./scripts/kafka/protodiff || { echo "reference: protodiff did not build"; return 1; }
  while IFS= read -r line; do
    case $line in '' | '#'*) ;; *) xargs+=(-X "$line") ;; esac
  done <"$props"
  if ! "$klog_bin" up --detach --any-port --data-dir "$dir/klog" --format json \
    -X listeners=PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0 \
    -X listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT "${xargs[@]}" >"$dir/klog.json" 2>"$dir/klog.err"; then
    echo "reference: klog with the authorizer did not start:"
    cat "$dir/klog.err"
    return 1
  fi
  read -r -a klog_addrs < <(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["listeners"]; print(l["PLAINTEXT"], l["SASL"])' "$dir/klog.json")
  if out=$(timeout -k 10 300 scripts/kafka/kafka.sh start --dir "$dir/kafka" --sasl "$props"); then
    kafka_brokers=$(sed -n 's/^BROKERS=//p' <<<"$out")
    kafka_sasl=$(sed -n 's/^SASL_BROKERS=//p' <<<"$out")
    timeout -k 10 300 "$dir/protodiff" -authz -klog "${klog_addrs[0]}" -klog-sasl "${klog_addrs[1]}" \
      -kafka "$kafka_brokers" -kafka-sasl "$kafka_sasl" || rc=1
    scripts/kafka/kafka.sh stop "$dir/kafka" || rc=1
  else
    echo "reference: Kafka 4.4 with the authorizer did not start"
    rc=1
  fi
  "$klog_bin" down --data-dir "$dir/klog" || rc=1
  echo "reference: protodiff -authz took $((SECONDS - t))s"
  return "$rc"
}

# run_protodiff_cluster DIR runs scripts/kafka/protodiff -nodes 3, the
# cluster corpus, between klog up -n 3 (RF 3, min.insync.replicas 2) and a
# 3-node Kafka 4.4 (kafka.sh start --nodes 3, 384m heaps), started for it
# alone; each side's follower is killed and started again with klog node
# and kafka.sh node. Any unexpected mismatch fails the stage.
run_protodiff_cluster() {
  local dir=$1/cluster rc=0 t=$SECONDS out kafka_brokers
  if skipped "${KLOG_SKIP_REFERENCE_CLUSTER:-0}"; then
    echo "reference: protodiff -nodes 3 skipped (KLOG_SKIP_REFERENCE_CLUSTER=1)"
    return 0
  fi
  mkdir -p "$dir"
  go build -o "$dir/protodiff" ./scripts/kafka/protodiff || { echo "reference: protodiff did not build"; return 1; }
  if ! out=$(KLOG_KAFKA_HEAP=${KLOG_KAFKA_HEAP:-384m} timeout -k 10 300 scripts/kafka/kafka.sh start --nodes 3 --dir "$dir/kafka"); then
    echo "reference: the 3-node Kafka 4.4 did not start"
    return 1
  fi
  kafka_brokers=$(sed -n 's/^BROKERS=//p' <<<"$out")
  if smoke_start_cluster "$klog_bin" "$dir" 3 -X default.replication.factor=3 -X min.insync.replicas=2; then
    echo "reference: klog up -n 3 at $SMOKE_BROKERS, Kafka 4.4's 3 nodes at $kafka_brokers"
    timeout -k 10 400 "$dir/protodiff" -nodes 3 -messages -klog "$SMOKE_BROKERS" -kafka "$kafka_brokers" \
      -klog-node "$klog_bin node --data-dir $SMOKE_CLUSTER_DIR" -kafka-node "scripts/kafka/kafka.sh node --dir $dir/kafka" || rc=1
    smoke_stop_broker || { smoke_dump_broker_log "$dir"; rc=1; }
  else
    rc=1
  fi
  # All three stop at once; now and then the last one's controlled shutdown
  # waits for a controller quorum its peers took with them (Kafka waits up
  # to 5 minutes) and is killed: the reference's own stop, not a mismatch.
  KLOG_KAFKA_STOP_TIMEOUT=15 scripts/kafka/kafka.sh stop "$dir/kafka" ||
    echo "reference: a Kafka node was killed 15s after SIGTERM (not counted as a failure)"
  echo "reference: protodiff -nodes 3 took $((SECONDS - t))s"
  return "$rc"
}

# --- reference ------------------------------------------------------------------
# Kafka 4.4's own tools (scripts/kafka/tools.sh) and klog's own commands
# (scripts/kafka/klogcmds.sh, first) against a fresh klog node, then
# against the Kafka 4.4 reference broker: a tools.sh check that fails on
# Kafka is a wrong check; a klogcmds.sh check must pass on both.
# reference_klogcmds BROKERS TARGET runs scripts/kafka/klogcmds.sh.
reference_klogcmds() {
  if skipped "${KLOG_SKIP_REFERENCE_KLOGCMDS:-0}"; then
    echo "reference: klog's commands against $2 skipped (KLOG_SKIP_REFERENCE_KLOGCMDS=1)"
    return 0
  fi
  KLOG_BIN="$klog_bin" timeout -k 10 240 scripts/kafka/klogcmds.sh "$1" --target "$2"
}
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
# reference_streams NAME BROKERS runs the Kafka Streams check
# (scripts/compat/streams.sh: exactly_once_v2, SIGKILLed twice mid-stream)
# against one broker and prints how long it took.
reference_streams() {
  local rc=0 t=$SECONDS
  if skipped "${KLOG_SKIP_REFERENCE_STREAMS:-0}"; then
    echo "reference: the Kafka Streams check against $1 skipped (KLOG_SKIP_REFERENCE_STREAMS=1)"
    return 0
  fi
  echo "reference: the Kafka Streams check against $1"
  timeout -k 10 300 scripts/compat/streams.sh "$2" || rc=1
  echo "reference: the Kafka Streams check against $1 took $((SECONDS - t))s (exit $rc)"
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
    part "klog's commands against klog" reference_klogcmds "$SMOKE_BROKERS" klog || rc=1
    # tools.sh starts a JVM for each of its 42 steps: 83 s at load 6-14,
    # over 240 s at load 30; its own steps have timeouts of their own, so
    # this bound only catches a hang.
    part "Kafka's tools against klog" timeout -k 10 600 scripts/kafka/tools.sh "$SMOKE_BROKERS" --target klog || rc=1
    part "Kafka Streams against klog" reference_streams klog "$SMOKE_BROKERS" || rc=1
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
    # klog's commands first, on a cluster that has not created its
    # coordinator topics yet, as a fresh Kafka cluster meets them.
    part "klog's commands against Kafka 4.4" reference_klogcmds "$kafka_brokers" kafka || rc=1
    # klog tui degrades to the Kafka-protocol screens against Kafka.
    part "klog tui against Kafka 4.4" timeout -k 10 180 scripts/tui/kafka.sh "$klog_bin" "$kafka_brokers" || rc=1
    part "Kafka's tools against Kafka 4.4" timeout -k 10 600 scripts/kafka/tools.sh "$kafka_brokers" --target kafka || rc=1
    part "Kafka Streams against Kafka 4.4" reference_streams "Kafka 4.4" "$kafka_brokers" || rc=1
    # --- the compat matrix against Kafka 4.4 (scripts/compat/) ---
    part "the compat matrix against Kafka 4.4" reference_compat "$kafka_brokers" "$dir" || rc=1
    # --- end of the compat matrix against Kafka 4.4 ---
    part "protodiff" run_protodiff "$dir" "$kafka_brokers" || rc=1
    # Last, as it may leave Kafka spent: the hostile tier's decode-bound
    # attack (issue 26), Kafka's figures to set beside klog's.
    part "the decode attack against Kafka 4.4" timeout -k 10 300 scripts/hostile/run.sh "$klog_bin" \
      -bootstrap "${kafka_brokers%%,*}" -pid "$(cat "$dir/kafka/node-0/pid" 2>/dev/null || echo 0)" || rc=1
    # The attack may leave Kafka's JVM too spent to stop within kafka.sh's
    # bound after SIGTERM (seen: still running 30 s after it), and kafka.sh
    # then kills it: a figure of Kafka's, printed, not a failure of klog's.
    scripts/kafka/kafka.sh stop "$dir/kafka" ||
      echo "reference: Kafka 4.4 did not stop on SIGTERM after the decode attack and was killed"
  else
    echo "reference: the Kafka 4.4 reference broker did not start"
    rc=1
  fi
  # The cluster corpus: its own klog up -n 3 and 3-node Kafka, once the
  # single node has stopped.
  part "protodiff -nodes 3" run_protodiff_cluster "$dir" || rc=1
  # The authorization corpus: its own klog and Kafka with the authorizer.
  part "protodiff -authz" run_protodiff_authz "$dir" || rc=1
  # The on-disk format both ways: starts and stops its own klog and Kafka.
  part "the on-disk format" env KLOG_BIN="$klog_bin" timeout -k 10 300 scripts/kafka/ondisk.sh || rc=1
  rm -rf "$dir"
  return "$rc"
}
built_stage reference KLOG_SKIP_REFERENCE run_reference

echo
load_note=
if [ "$under_load" = 1 ] && [ -n "$load_pid" ]; then
  if load_running; then
    load_note=", under load: ${load_cmd[*]} for all $((SECONDS - load_start))s of the stages after deps"
    echo "under load: ${load_cmd[*]} ran beside every stage after deps ($((SECONDS - load_start))s); load average $load_avg_start at its start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  else
    stage "load"
    {
      echo "load: ${load_cmd[*]} died before the stages ended: the run was not all under load"
      tail -n 5 "$load_log"
    } | tee -a "$(stage_log load)"
    stage_rc[load]="the hog stopped early"
    fail load "$((SECONDS - load_start))"
    load_note=", NOT all under load"
  fi
  stop_load
elif [ "$under_load" = 1 ]; then
  load_note=", NOT under load: the hog did not start"
fi
if [ "$failed" -gt 0 ]; then
  echo "failed stages: ${failures[*]}"
  for name in "${failures[@]}"; do
    echo "  $name (${stage_rc[$name]:-failed}):"
    fail_reasons "$name"
  done
fi
echo "total $((SECONDS - start_all))s"
echo "test.sh: $passed passed, $failed failed$load_note"
[ "$failed" -eq 0 ]
