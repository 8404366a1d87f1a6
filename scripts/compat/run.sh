#!/usr/bin/env bash
# Runs klog's compatibility suite: the same scenarios with every client,
# against any Kafka bootstrap address (klog, Kafka, another broker). Starts
# nothing; point it at a running broker.
#
#   scripts/compat/run.sh BROKERS [client ...]
#
# Clients (default: all): franz-go sarama kafka-go kcat confluent-kafka-python
# confluent-kafka-pypi kafka-python aiokafka kafkajs kafka-clients. Each runner prints "RESULT <client> <scenario>
# PASS|FAIL|SKIP <detail>" lines; this script prints every line, then a
# client × scenario matrix and "N passed, N failed, N skipped", and exits 1 if
# any scenario failed. A client whose runner or library is missing has all its
# scenarios SKIP with the reason. A scenario a runner did not report (it
# crashed or timed out) is a FAIL. A scenario only some runners implement
# (only_in below) is n/a for the others: not run, not counted.
#
# The Go runners are built with go build, the Java runner (kafka-clients) with
# Maven into the temporary directory: offline first (a warm ~/.m2 needs no
# network), online when that fails; each build is bounded by
# KLOG_COMPAT_BUILD_TIMEOUT. The PyPI clients (confluent-kafka-pypi, aiokafka)
# run in the virtualenv of venv.sh, built on first use (pip install from
# PyPI, bounded by KLOG_COMPAT_BUILD_TIMEOUT too) and reused after; with
# KLOG_SKIP_PIP=1 only an existing one is used (their scenarios SKIP without).
#
# Environment:
#   KLOG_COMPAT_TIMEOUT   seconds one client's runner may take (default 180)
#   KLOG_COMPAT_BUILD_TIMEOUT seconds one Maven build may take (default 300)
#   KLOG_COMPAT_VERBOSE=1 show every runner's stderr, not only on failure
#   KLOG_SKIP_PIP=1       do not pip install the PyPI clients' virtualenv:
#                         use it only if venv.sh already built it
#   KLOG_COMPAT_SCENARIOS some scenarios only, space-separated (default: all)
#   KLOG_COMPAT_SECURITY  a client config file klog up --secure wrote
#                         (DATA-DIR/secure/app.properties for SASL_SSL,
#                         app-mtls.properties for mTLS) every runner connects
#                         with; BROKERS are then the SASL_SSL_BROKERS or
#                         SSL_BROKERS it printed (README.md says how each
#                         runner reads it)
#   KLOG_COMPAT_RESULTS   a file to write the matrix to, one "CLIENT SCENARIO
#                         STATUS" line per cell (n/a cells left out), for
#                         compare.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
brokers=${1:?usage: run.sh BROKERS [client ...]}
shift
runner_timeout=${KLOG_COMPAT_TIMEOUT:-180}
build_timeout=${KLOG_COMPAT_BUILD_TIMEOUT:-300}

scenarios=(admin produce-consume compression offsets-by-time group group-kip848 idempotent transactions consume-transform-produce share-group)
all_clients=(franz-go sarama kafka-go kcat confluent-kafka-python confluent-kafka-pypi kafka-python aiokafka kafkajs kafka-clients)
# Scenarios only some runners implement, with those runners; every other
# client shows n/a in that column.
declare -A only_in=([group-kip848]="kafka-clients confluent-kafka-python confluent-kafka-pypi kafka-python aiokafka" [share-group]="kafka-clients")
# KLOG_COMPAT_SCENARIOS picks some scenarios: each runner is given the
# ones it implements as arguments after BROKERS, and the matrix has only
# their columns.
if [ -n "${KLOG_COMPAT_SCENARIOS:-}" ]; then
  read -ra picked <<<"$KLOG_COMPAT_SCENARIOS"
  for s in "${picked[@]}"; do
    case " ${scenarios[*]} " in
    *" $s "*) ;;
    *)
      echo "run.sh: unknown scenario $s in KLOG_COMPAT_SCENARIOS (known: ${scenarios[*]})" >&2
      exit 2
      ;;
    esac
  done
  scenarios=("${picked[@]}")
fi
if [ $# -gt 0 ]; then
  clients=("$@")
  for c in "${clients[@]}"; do
    case " ${all_clients[*]} " in
    *" $c "*) ;;
    *)
      echo "run.sh: unknown client $c (known: ${all_clients[*]})" >&2
      exit 2
      ;;
    esac
  done
else
  clients=("${all_clients[@]}")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

declare -A status

# record CLIENT SCENARIO STATUS keeps the first result per cell.
record() {
  local key="$1/$2"
  [ -n "${status[$key]:-}" ] && return 0
  status[$key]=$3
}

# implements CLIENT SCENARIO: whether CLIENT's runner has SCENARIO.
implements() {
  [ -z "${only_in[$2]:-}" ] && return 0
  case " ${only_in[$2]} " in
  *" $1 "*) return 0 ;;
  esac
  return 1
}

# skip_all CLIENT REASON marks every scenario of CLIENT skipped.
skip_all() {
  local s
  for s in "${scenarios[@]}"; do
    implements "$1" "$s" || continue
    record "$1" "$s" SKIP
    echo "RESULT $1 $s SKIP $2"
  done
}

# go_runner DIR builds the Go runner once into $work and prints its path.
go_runner() {
  local bin="$work/$1"
  if [ ! -x "$bin" ]; then
    (cd "$root" && go build -o "$bin" "./scripts/compat/$1") >"$work/build-$1.log" 2>&1 || return 1
  fi
  echo "$bin"
}

# shellcheck source-path=SCRIPTDIR source=mvn.sh
source "$here/mvn.sh"

# java_runner builds scripts/compat/java into $work/java (classes and
# cp.txt, the dependency classpath); the log is $work/build-java.log.
java_runner() {
  compat_mvn_build "$here/java/pom.xml" "$work/java" "$work/build-java.log" "$build_timeout"
}

# venv_python prints the python of venv.sh's virtualenv, building it the
# first time (once per run.sh: the path is kept in venv_py); the log is
# $work/build-venv.log.
venv_py=""
venv_python() {
  local args=()
  [ "${KLOG_SKIP_PIP:-0}" = 1 ] && args=(--no-install)
  if [ -z "$venv_py" ]; then
    venv_py=$(KLOG_COMPAT_PIP_TIMEOUT=$build_timeout timeout -k 10 "$((build_timeout + 60))" \
      "$here/venv.sh" "${args[@]}" 2>"$work/build-venv.log") || { venv_py=""; return 1; }
  fi
  echo "$venv_py"
}

# runner_cmd CLIENT sets cmd (an array) or prints a reason and returns 1.
runner_cmd() {
  local c=$1 bin
  cmd=()
  case $c in
  franz-go | sarama | kafka-go)
    local dir=${c//-/}
    if ! command -v go >/dev/null; then
      echo "go is not installed"
      return 1
    fi
    if ! bin=$(go_runner "$dir"); then
      echo "go build ./scripts/compat/$dir failed: $(tr '\n' ' ' <"$work/build-$dir.log" | cut -c1-200)"
      return 1
    fi
    cmd=("$bin" "$brokers")
    ;;
  kcat)
    [ -f "$here/kcat.sh" ] || { echo "no runner scripts/compat/kcat.sh"; return 1; }
    command -v kcat >/dev/null || { echo "kcat is not installed"; return 1; }
    cmd=(bash "$here/kcat.sh" "$brokers")
    ;;
  confluent-kafka-python | kafka-python)
    local file=confluent_kafka.py module=confluent_kafka
    if [ "$c" = kafka-python ]; then file=kafka_python.py module=kafka; fi
    [ -f "$here/$file" ] || { echo "no runner scripts/compat/$file"; return 1; }
    [ -x /usr/bin/python3 ] || { echo "/usr/bin/python3 is not installed"; return 1; }
    /usr/bin/python3 -c "import $module" 2>/dev/null || { echo "python module $module is not installed"; return 1; }
    cmd=(/usr/bin/python3 "$here/$file" "$brokers")
    ;;
  confluent-kafka-pypi | aiokafka)
    local file=confluent_kafka.py py
    [ "$c" = aiokafka ] && file=aiokafka_runner.py
    [ -f "$here/$file" ] || { echo "no runner scripts/compat/$file"; return 1; }
    if ! py=$(venv_python); then
      echo "no virtualenv for the PyPI clients (scripts/compat/venv.sh failed: $(grep -v '^ ' "$work/build-venv.log" | tail -n 2 | tr '\n' ' ' | cut -c1-250))"
      return 1
    fi
    grep -h '^venv: ' "$work/build-venv.log" >&2
    cmd=(env "KLOG_COMPAT_CLIENT=$c" "$py" "$here/$file" "$brokers")
    ;;
  kafkajs)
    [ -f "$here/kafkajs.js" ] || { echo "no runner scripts/compat/kafkajs.js"; return 1; }
    command -v node >/dev/null || { echo "node is not installed"; return 1; }
    (cd "$root/scripts" && node -e 'require("kafkajs")') 2>/dev/null || { echo "kafkajs is not installed (npm ci in scripts/)"; return 1; }
    cmd=(node "$here/kafkajs.js" "$brokers")
    ;;
  kafka-clients)
    [ -f "$here/java/pom.xml" ] || { echo "no runner scripts/compat/java/pom.xml"; return 1; }
    command -v java >/dev/null || { echo "java is not installed"; return 1; }
    command -v mvn >/dev/null || { echo "mvn (Maven) is not installed"; return 1; }
    local t=$SECONDS
    if ! java_runner; then
      echo "mvn build of scripts/compat/java failed: $(grep -E 'ERROR|timed out' "$work/build-java.log" | head -n 3 | tr '\n' ' ' | cut -c1-300)"
      return 1
    fi
    echo "kafka-clients: Maven build $((SECONDS - t))s" >&2
    cmd=(java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
      -cp "$work/java/classes:$(cat "$work/java/cp.txt")" dev.klog.compat.Main "$brokers")
    ;;
  esac
}

for c in "${clients[@]}"; do
  echo "=== $c" >&2
  # runner_cmd runs in this shell (not a $(...) subshell) so it sets cmd.
  if ! runner_cmd "$c" >"$work/reason"; then
    skip_all "$c" "$(cat "$work/reason")"
    continue
  fi
  if [ -n "${KLOG_COMPAT_SCENARIOS:-}" ]; then
    for s in "${scenarios[@]}"; do
      implements "$c" "$s" && cmd+=("$s")
    done
  fi
  start=$SECONDS
  rc=0
  (cd "$root" && timeout -k 10 "$runner_timeout" "${cmd[@]}") >"$work/$c.out" 2>"$work/$c.err" || rc=$?
  grep '^RESULT ' "$work/$c.out"
  while read -r _ _ s st _; do
    case $st in PASS | FAIL | SKIP) ;; *) continue ;; esac
    record "$c" "$s" "$st"
  done < <(grep '^RESULT ' "$work/$c.out")
  missing=0
  for s in "${scenarios[@]}"; do
    implements "$c" "$s" || continue
    if [ -z "${status[$c/$s]:-}" ]; then
      why="runner exited $rc without a result"
      [ "$rc" -eq 124 ] && why="runner timed out after ${runner_timeout}s without a result"
      record "$c" "$s" FAIL
      echo "RESULT $c $s FAIL $why"
      missing=1
    fi
  done
  shown=0
  for s in "${scenarios[@]}"; do
    [ "${status[$c/$s]:-}" = FAIL ] && shown=1
  done
  if [ "$shown" -eq 1 ] || [ "$missing" -eq 1 ] || [ "${KLOG_COMPAT_VERBOSE:-0}" = 1 ]; then
    echo "----- $c stderr (last 60 lines, exit $rc) -----" >&2
    tail -n 60 "$work/$c.err" >&2
  fi
  echo "$c: $((SECONDS - start))s, exit $rc" >&2
done

# The matrix: one row per client, one column per scenario.
short() {
  case $1 in
  produce-consume) echo prod-cons ;;
  offsets-by-time) echo by-time ;;
  consume-transform-produce) echo c-t-p ;;
  compression) echo compress ;;
  idempotent) echo idempot ;;
  transactions) echo txn ;;
  group-kip848) echo kip848 ;;
  share-group) echo share ;;
  *) echo "$1" ;;
  esac
}
passed=0
failed=0
skipped=0
echo
printf '%-24s' client
for s in "${scenarios[@]}"; do printf ' %-10s' "$(short "$s")"; done
echo
for c in "${clients[@]}"; do
  printf '%-24s' "$c"
  for s in "${scenarios[@]}"; do
    st=${status[$c/$s]:-n/a}
    printf ' %-10s' "$st"
    case $st in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    n/a) ;;
    *) skipped=$((skipped + 1)) ;;
    esac
  done
  echo
done
echo "columns: ${scenarios[*]}"
if [ -n "${KLOG_COMPAT_RESULTS:-}" ]; then
  for c in "${clients[@]}"; do
    for s in "${scenarios[@]}"; do
      [ -n "${status[$c/$s]:-}" ] && echo "$c $s ${status[$c/$s]}"
    done
  done >"$KLOG_COMPAT_RESULTS"
fi
echo "compat: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
