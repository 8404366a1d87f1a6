#!/usr/bin/env bash
# Side-by-side benchmark of klog against franz-go's kfake (with its
# page-cache data dir) and Apache Kafka 4.4 (JVM, its defaults plus a data
# directory), following the protocol of the project's performance study:
# reference config P (1 partition, 1M x 1 KiB records, acks=all, idempotent,
# linger 5 ms, batch max 1 MiB, no compression), broker pinned to CPU 1 and
# client to CPU 0, a fresh broker process and data directory for every run,
# "sync; sleep 3" before each, the brokers of a pair in one order and the
# next pair in the reverse order (ABBA; ABC CBA with Kafka). Not a test: it
# prints figures. scripts/bench/README.md explains the table.
#
#   scripts/bench/run.sh [pairs]        (default 5 pairs)
#   scripts/bench/run.sh --replication [pairs]
#   scripts/bench/run.sh --memory [pairs]
#   scripts/bench/run.sh --matrix [pairs]
#   scripts/bench/run.sh --durable [pairs]
#   scripts/bench/run.sh --security [pairs]
#
# --replication is the replication run instead: klog up -n 3 (RF 3,
# min.insync.replicas 2), klog on one node (RF 1) and, where Kafka runs,
# kafka.sh start --nodes 3 (RF 3, min ISR 2, heap KAFKA3_HEAP each,
# default 512m), all acks=all: the throughput and e2e runs of each pair,
# no startup runs, every node of a cluster pinned to the broker CPU. The
# clusters' CPU and RSS are not sampled (several processes); the table
# has no goals column (the goals are config P's, against kfake).
#
# --matrix runs the other cases of the performance issue's matrix, each
# produce then consume on a fresh broker, klog against kfake (and Kafka
# where it runs), a table each: small (100 B records, 8 partitions,
# SMALL_RECORDS, default 3000000), acks1 (config P with acks=1, not
# idempotent) and p1000 (1,000 partitions, a run of 100 records to each
# in turn, then 1,000 Metadata requests; klog8 is klog on 8 partitions
# with the same records, what the 1,000 are compared with). MATRIX_CASES
# (default "small acks1 p1000") picks some of them.
#
# --durable runs klog up --durable (klogdur: every produce acknowledged
# once fsynced, group commit) against klog on the same disk without it:
# the throughput runs and the e2e runs, no startup runs, no Kafka peer.
# The performance study's anchor for it is fio's append with an fdatasync
# every MiB, about 300 MB/s here (the target is half of it).
#
# --security runs config P's throughput (and e2e) runs over TLS and
# SASL_SSL beside plaintext: klog (PLAINTEXT), klogtls (an SSL listener:
# server TLS, the TLS 1.3 the client offers first) and klogsasl (SASL_SSL,
# PLAIN), and where Kafka runs the same three listeners of Kafka 4.4
# (kafka, kafkatls, kafkasasl; kafka.sh prepare --listener). kbench -mode
# devca writes the dev CA into the run's temp dir (node 0's PKCS12
# keystore for both brokers, the truststore for the client); one
# properties file per protocol is klog's -X lines and Kafka's appended
# config; kbench connects with -command-config. No startup runs. Two
# tables: TLS and SASL_SSL, with the ratios TLS/plaintext for klog and
# for Kafka, and klog against Kafka on the same listener.
#
# --memory is the in-memory run instead: klog up --memory (klogmem)
# against klog on a data directory (klog) and kfake without one (kfakemem),
# the throughput runs and the e2e runs, no startup runs, no Kafka peer.
#
# Environment:
#   KLOG_CMD      command that starts the broker under test; %BIN%, %ADDR%
#                 and %DIR% are replaced by the tool directory, the listen
#                 address and a fresh data directory. Default:
#                 "%BIN%/klog up --data-dir %DIR% --listen %ADDR%"
#                 (setting it skips building klog).
#   KFAKE_CMD     the baseline, default "%BIN%/kfakeserver -listen %ADDR% -data-dir %DIR%"
#   KAFKA         1: run the Kafka 4.4 peer, 0: skip it; default: run it when
#                 java is on PATH and scripts/kafka/kafka.sh fetch succeeds
#                 (its jar cache, filled by Maven), else say why and skip
#   KAFKA_HEAP    the Kafka peer's heap, -Xmx and -Xms (default 1G, Kafka's
#                 own default). Each Kafka run's data directory is formatted
#                 (kafka.sh prepare) before the broker's exec; the startup
#                 line records that time apart as setup_ms.
#   RECORDS       records per throughput run (default 1000000)
#   E2E_DURATION  length of each e2e latency run at E2E_RATE records/s
#                 (default 10000) of 1 KiB, acks=all, no linger (default
#                 15s); E2E=0 skips them
#   PIN=0         do not pin (default: pin when taskset exists)
#   PREWARM_MB    before each run, write and delete a file of this many
#                 MiB, so that the run's page cache reuses host-backed
#                 pages (see settle); default 0, none
#   THROUGHPUT=0  skip the produce and consume runs (with E2E=0: only the
#                 startup runs)
#   STARTUP_IDLE  how long a started broker idles before its idle RSS and
#                 idle CPU are sampled (default 5s)
#
# Output: raw JSON lines in .bench/results-<date>.jsonl, then a table of
# min / median / max per broker and the paired ratios of klog against each
# peer (goals against kfake). Broker logs go to .bench/logs, data directories
# under one mktemp -d, removed at the end.
set -uo pipefail
replication=0
memory=0
matrix=0
durable=0
security=0
case ${1:-} in
--durable) durable=1 && shift ;;
--security) security=1 && shift ;;
--replication) replication=1 && shift ;;
--memory) memory=1 && shift ;;
--matrix) matrix=1 && shift ;;
esac
pairs=${1:-5}
records=${RECORDS:-1000000}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
# shellcheck source=../smoke/lib.sh
source "$root/scripts/smoke/lib.sh" # smoke_free_port

out=$root/.bench
bin=$out/bin
mkdir -p "$bin" "$out/logs"
data=$(mktemp -d) || { echo "mktemp -d failed" >&2; exit 1; }
[ -f "$out/.gitignore" ] || echo '*' >"$out/.gitignore"
results=$out/results-$(date -u +%Y%m%dT%H%M%SZ).jsonl
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain 2>/dev/null | head -n 1)" ] && commit="$commit-dirty"

echo "building tools into $bin" >&2
go build -o "$bin/kbench" ./scripts/bench/kbench || exit 1
go build -o "$bin/kfakeserver" ./scripts/bench/kfakeserver || exit 1
if [ -z "${KLOG_CMD:-}" ] || [ "$replication" = 1 ] || [ "$memory" = 1 ] || [ "$durable" = 1 ] || [ "$security" = 1 ]; then
  go build -o "$bin/klog" ./cmd/klog || exit 1
fi
klog_tmpl=${KLOG_CMD:-"%BIN%/klog up --data-dir %DIR% --listen %ADDR%"}
kfake_tmpl=${KFAKE_CMD:-"%BIN%/kfakeserver -listen %ADDR% -data-dir %DIR%"}
kafka_sh=$root/scripts/kafka/kafka.sh
labels=(klog kfake)
kafka_labels=(kafka)
if [ "$replication" = 1 ]; then
  labels=(klog3 klog1)
  kafka_labels=(kafka3)
fi
if [ "$security" = 1 ]; then
  labels=(klog klogtls klogsasl)
  kafka_labels=(kafka kafkatls kafkasasl)
fi
if [ "$memory" = 1 ]; then
  labels=(klogmem klog kfakemem)
  KAFKA=0
fi
if [ "$durable" = 1 ]; then
  labels=(klogdur klog)
  KAFKA=0
fi
case ${KAFKA:-auto} in
0) ;;
1 | auto)
  if ! command -v java >/dev/null; then
    [ "${KAFKA:-auto}" = 1 ] && { echo "KAFKA=1 but java is not on PATH" >&2; exit 1; }
    echo "no java on PATH: the Kafka peer is skipped" >&2
  elif ! "$kafka_sh" fetch; then
    [ "${KAFKA:-auto}" = 1 ] && { echo "KAFKA=1 but kafka.sh fetch failed" >&2; exit 1; }
    echo "kafka.sh fetch failed (no Maven or no Maven Central?): the Kafka peer is skipped" >&2
  else
    labels+=("${kafka_labels[@]}")
    : >"$out/logs/kafka-prepare.log"
  fi
  ;;
*) echo "KAFKA must be 0 or 1, not $KAFKA" >&2; exit 2 ;;
esac

srv_pfx=()
cli_pfx=()
pinned=false
if [ "${PIN:-1}" = 1 ]; then
  if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    srv_pfx=(taskset -c 1)
    cli_pfx=(taskset -c 0)
    pinned=true
  else
    echo "WARNING: taskset missing or fewer than 2 CPUs; running unpinned (noisier)" >&2
  fi
fi

server_pid=
kafka_run_dir=
# stop_server stops the broker: SIGTERM, then SIGKILL after 10 s (30 s for
# klog up -n's supervisor, which stops its nodes first); a 3-node Kafka
# through kafka.sh stop.
stop_server() {
  local pid=$server_pid i bound=100
  if [ -n "$kafka_run_dir" ]; then
    "$kafka_sh" stop "$kafka_run_dir" >>"$out/logs/kafka-prepare.log" 2>&1
    kafka_run_dir=
  fi
  [ -n "$pid" ] || return 0
  server_pid=
  [ "$rf" = 3 ] && bound=300
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 "$bound"); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
trap 'stop_server; rm -rf "$data"' EXIT
trap 'exit 130' INT TERM

# expand TEMPLATE ADDR DIR prints the broker command with placeholders filled.
expand() {
  local s=$1
  s=${s//%BIN%/$bin}
  s=${s//%ADDR%/$2}
  s=${s//%DIR%/$3}
  echo "$s"
}

# wait_accept ADDR PID waits up to 120 s (a JVM on one busy CPU is slow)
# for ADDR to accept while PID lives.
wait_accept() {
  local addr=$1 pid=$2 deadline=$((SECONDS + 120))
  while [ "$SECONDS" -lt "$deadline" ]; do
    (exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}") 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

failures=0
# settle runs before each broker starts. With PREWARM_MB it then writes
# and deletes a file of that many MiB on the data directories' disk: this
# VM backs guest memory lazily and takes freed pages back (virtio-balloon
# free page reporting), so a page-cache page never touched costs a host
# fault, about 14 times a warm write (performance.md §3.3); the file
# leaves host-backed pages on the free list for the run to reuse. Not for
# the protocol's comparisons: it shows how much of a run is that cost.
# The file goes last: the kernel reports freed pages to the host after
# about 2 s.
settle() {
  sync
  sleep 3
  if [ "${PREWARM_MB:-0}" -gt 0 ]; then
    dd if=/dev/zero of="$data/prewarm" bs=1M count="$PREWARM_MB" status=none
    rm -f "$data/prewarm"
  fi
}

# security_files writes, for --security, the dev CA (kbench -mode devca)
# and for each of SSL and SASL_SSL a broker config (klog's -X lines,
# Kafka's appended config) and the client config kbench reads, all in the
# run's temp dir.
security_files() {
  local ca=$data/ca pw jaas
  "$bin/kbench" -mode devca -dir "$ca" >"$out/logs/devca.jsonl" || { echo "kbench -mode devca failed" >&2; return 1; }
  pw=$(cat "$ca/password.txt") || return 1
  jaas='org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" password="bench-secret"'
  printf '%s\n' ssl.keystore.type=PKCS12 "ssl.keystore.location=$ca/node-0.p12" "ssl.keystore.password=$pw" >"$data/SSL.properties"
  printf '%s\n' sasl.enabled.mechanisms=PLAIN "listener.name.sasl_ssl.plain.sasl.jaas.config=$jaas user_bench=\"bench-secret\";" |
    cat "$data/SSL.properties" - >"$data/SASL_SSL.properties"
  printf '%s\n' security.protocol=SSL ssl.truststore.type=PKCS12 "ssl.truststore.location=$ca/truststore.p12" \
    "ssl.truststore.password=$pw" >"$data/client-SSL.properties"
  printf '%s\n' sasl.mechanism=PLAIN "sasl.jaas.config=$jaas;" |
    sed 's/^security.protocol=SSL$/security.protocol=SASL_SSL/' "$data/client-SSL.properties" - >"$data/client-SASL_SSL.properties"
}

# protocol LABEL prints the security protocol of LABEL's listener.
protocol() {
  case $1 in
  *tls) echo SSL ;;
  *sasl) echo SASL_SSL ;;
  *) echo PLAINTEXT ;;
  esac
}

# conn_args LABEL sets conn, kbench's flags to connect to LABEL's listener.
conn_args() {
  local p
  p=$(protocol "$1")
  conn=()
  [ "$p" = PLAINTEXT ] || conn=(-command-config "$data/client-$p.properties")
}

# broker_cmd LABEL: a free port and a fresh data directory for LABEL's
# broker; sets addr, dir, cmd (the command that starts it) and setup_ms. The
# Kafka peer's directory is formatted here, before the exec that is measured
# (setup_ms: how long that took, like klog's mkdir but two JVMs).
broker_cmd() {
  local label=$1 port t0 lines p listener=() line
  port=$(smoke_free_port) || { echo "no free port" >&2; return 1; }
  addr=127.0.0.1:$port
  dir=$data/$label
  rm -rf "$dir" && mkdir -p "$dir"
  setup_ms=0
  case $label in
  klog | klog1 | klog8) read -r -a cmd <<<"$(expand "$klog_tmpl" "$addr" "$dir")" ;;
  kfake) read -r -a cmd <<<"$(expand "$kfake_tmpl" "$addr" "$dir")" ;;
  klogtls | klogsasl)
    p=$(protocol "$label")
    # The PLAINTEXT listener is the inter-broker one, as Kafka's.
    cmd=("$bin/klog" up --data-dir "$dir" -X "listeners=PLAINTEXT://127.0.0.1:0,$p://$addr")
    while IFS= read -r line; do cmd+=(-X "$line"); done <"$data/$p.properties"
    ;;
  klogmem) cmd=("$bin/klog" up --memory --listen "$addr") ;;
  klogdur) cmd=("$bin/klog" up --durable --data-dir "$dir" --listen "$addr") ;;
  kfakemem) cmd=("$bin/kfakeserver" -listen "$addr") ;;
  kafka | kafkatls | kafkasasl)
    p=$(protocol "$label")
    [ "$p" = PLAINTEXT ] || listener=(--listener "$p" "$data/$p.properties")
    t0=${EPOCHREALTIME/./}
    lines=$(KLOG_KAFKA_HEAP=${KAFKA_HEAP:-1G} "$kafka_sh" prepare --dir "$dir" --port "$port" "${listener[@]}" 2>>"$out/logs/kafka-prepare.log") ||
      { echo "kafka.sh prepare failed (log: $out/logs/kafka-prepare.log)" >&2; return 1; }
    setup_ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
    mapfile -t cmd <<<"$lines"
    ;;
  esac
}

# start_cluster LABEL LOG: a fresh 3-node cluster, every node pinned to
# the broker CPU; sets addr (the bootstrap list), dir, and server_pid (klog
# up -n's supervisor) or kafka_run_dir. klog3 is ready when its ready file
# holds the whole list, kafka3 when kafka.sh start returns.
start_cluster() {
  local label=$1 log=$2 deadline
  dir=$data/$label
  rm -rf "$dir" && mkdir -p "$dir"
  settle
  case $label in
  klog3)
    "${srv_pfx[@]}" "$bin/klog" up -n 3 --data-dir "$dir/data" --listen 127.0.0.1:0 --ready-file "$dir/ready" \
      -X default.replication.factor=3 -X min.insync.replicas=2 >"$log" 2>&1 </dev/null &
    server_pid=$!
    deadline=$((SECONDS + 120))
    # read succeeds only on a whole line: the file is written at once.
    until read -r addr 2>/dev/null <"$dir/ready"; do
      if ! kill -0 "$server_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
        echo "$label: klog up -n 3 not ready within 120s (log: $log)" >&2
        tail -n 20 "$log" >&2
        stop_server
        return 1
      fi
      sleep 0.1
    done
    ;;
  kafka3)
    rm -rf "$dir"
    if ! addr=$(KLOG_KAFKA_HEAP=${KAFKA3_HEAP:-512m} "${srv_pfx[@]}" "$kafka_sh" start --nodes 3 --dir "$dir" 2>"$log" |
      sed -n 's/^BROKERS=//p') || [ -z "$addr" ]; then
      echo "$label: kafka.sh start --nodes 3 failed (log: $log)" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
    kafka_run_dir=$dir
    ;;
  esac
}

# start_broker LABEL PAIR RUN: a fresh broker on a free port with a fresh
# data directory, pinned; sets addr, dir and server_pid.
start_broker() {
  local label=$1 pair=$2 run=$3 cmd log setup_ms
  case $label in klog3 | kafka3)
    start_cluster "$label" "$out/logs/$label-pair$pair-$run.log" || { failures=$((failures + 1)); return 1; }
    return 0
    ;;
  esac
  broker_cmd "$label" || { failures=$((failures + 1)); return 1; }
  settle
  log=$out/logs/$label-pair$pair-$run.log
  "${srv_pfx[@]}" "${cmd[@]}" >"$log" 2>&1 </dev/null &
  server_pid=$!
  if ! wait_accept "$addr" "$server_pid"; then
    echo "pair $pair $label: broker did not accept on $addr (log: $log)" >&2
    tail -n 20 "$log" >&2
    stop_server
    failures=$((failures + 1))
    return 1
  fi
}

# replicas LABEL sets rf, the replication factor of LABEL's topics, and
# pid, the broker process measured (none for a cluster).
replicas() {
  rf=1 pid=$server_pid
  case $1 in klog3 | kafka3) rf=3 pid=0 ;; esac
}
rf=1

# The shape of the throughput runs: record size, partitions, kbench's
# extra produce flags, and Metadata requests after the consume (0: none).
# --matrix sets them per case.
tsize=1024 tparts=1 textra=() tmeta=0

# throughput LABEL PAIR POSITION: produce then consume on one fresh broker.
throughput() {
  local label=$1 pair=$2 pos=$3 addr dir common pid parts=$tparts conn
  [ "$label" = klog8 ] && parts=8
  replicas "$label"
  start_broker "$label" "$pair" throughput || return 1
  replicas "$label"
  conn_args "$label"
  common=(-label "$label" -pair "$pair" -position "$pos" -pinned="$pinned" -commit "$commit"
    -brokers "$addr" -server-pid "$pid" -replication-factor "$rf" -topic bench -timeout 10m
    -size "$tsize" -partitions "$parts" "${conn[@]}")
  # -create-wait: a JVM broker accepts connections before it serves them.
  # The consume reads all the topic holds (-records 0), the producer's
  # warm-up records too. A failed produce leaves nothing to consume: the
  # consume would only wait for its timeout.
  if "${cli_pfx[@]}" "$bin/kbench" -mode produce "${common[@]}" "${textra[@]}" -records "$records" -create-wait 60s >>"$results"; then
    "${cli_pfx[@]}" "$bin/kbench" -mode consume "${common[@]}" -records 0 >>"$results" ||
      failures=$((failures + 1))
    if [ "$tmeta" -gt 0 ]; then
      "${cli_pfx[@]}" "$bin/kbench" -mode metadata "${common[@]}" -records "$tmeta" >>"$results" ||
        failures=$((failures + 1))
    fi
  else
    failures=$((failures + 1))
  fi
  stop_server
  rm -rf "$dir"
  tail -n 2 "$results" | cut -c1-200 >&2
}

# e2e LABEL PAIR POSITION: produce-to-consume latency at a fixed rate on a
# fresh broker.
e2e() {
  local label=$1 pair=$2 pos=$3 addr dir pid conn
  replicas "$label"
  start_broker "$label" "$pair" e2e || return 1
  replicas "$label"
  conn_args "$label"
  "${cli_pfx[@]}" "$bin/kbench" -mode e2e -label "$label" -pair "$pair" -position "$pos" "${conn[@]}" \
    -pinned="$pinned" -commit "$commit" -brokers "$addr" -server-pid "$pid" -replication-factor "$rf" -topic e2e \
    -rate "${E2E_RATE:-10000}" -size 1024 -duration "${E2E_DURATION:-15s}" -create-wait 60s -timeout 5m >>"$results" ||
    failures=$((failures + 1))
  stop_server
  rm -rf "$dir"
  tail -n 1 "$results" | cut -c1-200 >&2
}

# startup LABEL PAIR POSITION: exec to first acked produce, idle RSS, shutdown.
startup() {
  local label=$1 pair=$2 pos=$3 addr dir cmd setup_ms
  broker_cmd "$label" || { failures=$((failures + 1)); return 1; }
  settle
  "${cli_pfx[@]}" "$bin/kbench" -mode startup -label "$label" -pair "$pair" -position "$pos" \
    -pinned="$pinned" -commit "$commit" -brokers "$addr" -idle "${STARTUP_IDLE:-5s}" -timeout 2m -shutdown-grace 30s \
    -setup-ms "$setup_ms" -broker-log "$out/logs/$label-pair$pair-startup.log" \
    -- "${srv_pfx[@]}" "${cmd[@]}" >>"$results" ||
    failures=$((failures + 1))
  rm -rf "$dir"
  tail -n 1 "$results" | cut -c1-200 >&2
}

if [ "$replication" = 1 ]; then
  echo "klog3: $bin/klog up -n 3 --data-dir DIR --listen 127.0.0.1:0 -X default.replication.factor=3 -X min.insync.replicas=2" >&2
  echo "klog1: $(expand "$klog_tmpl" ADDR DIR)" >&2
else
  echo "klog: $(expand "$klog_tmpl" ADDR DIR)" >&2
  [ "$security" = 1 ] || echo "kfake: $(expand "$kfake_tmpl" ADDR DIR)" >&2
fi
if [ "$security" = 1 ]; then
  security_files || exit 1
  echo "klogtls: $bin/klog up -X listeners=PLAINTEXT://127.0.0.1:0,SSL://ADDR and -X each line of $data/SSL.properties" >&2
  echo "klogsasl: the same with SASL_SSL://ADDR and $data/SASL_SSL.properties (PLAIN)" >&2
fi
case " ${labels[*]} " in
*" kafkatls "*) echo "kafka, kafkatls, kafkasasl: 4.4.0, heap ${KAFKA_HEAP:-1G}; kafka.sh prepare --listener SSL|SASL_SSL with the same files" >&2 ;;
*" kafka "*) echo "kafka: 4.4.0, heap ${KAFKA_HEAP:-1G} (kafka.sh prepare prints the command; see its log)" >&2 ;;
*" kafka3 "*) echo "kafka3: 4.4.0, kafka.sh start --nodes 3, heap ${KAFKA3_HEAP:-512m} per node" >&2 ;;
esac
echo "pairs=$pairs records=$records pinned=$pinned commit=$commit loadavg=$(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "results: $results" >&2
# in_order RUN: RUN each broker of this pair, in the pair's order.
in_order() {
  local run=$1 label pos=0
  for label in "${order[@]}"; do
    pos=$((pos + 1))
    "$run" "$label" "$pair" "$pos"
  done
}

# pairs_of RUN...: the pairs, ABBA, each running the RUNs in its order.
pairs_of() {
  local i run
  for pair in $(seq 1 "$pairs"); do
    order=("${labels[@]}")
    if [ $((pair % 2)) -eq 0 ]; then
      order=()
      for ((i = ${#labels[@]} - 1; i >= 0; i--)); do order+=("${labels[$i]}"); done
    fi
    echo "--- pair $pair: ${order[*]}" >&2
    for run in "$@"; do in_order "$run"; done
  done
}

if [ "$matrix" = 1 ]; then
  base_labels=("${labels[@]}")
  base_records=$records
  reports=()
  for case in ${MATRIX_CASES:-small acks1 p1000}; do
    labels=("${base_labels[@]}") tsize=100 tparts=8 textra=() tmeta=0 records=$base_records
    case $case in
    small) records=${SMALL_RECORDS:-3000000} about="100 B records, 8 partitions, acks=all, idempotent, linger 5 ms" ;;
    acks1) tsize=1024 tparts=1 textra=(-acks 1 -idempotent=false) about="1 KiB records, 1 partition, acks=1, not idempotent, linger 5 ms" ;;
    p1000)
      tparts=1000 textra=(-partition-run 100) tmeta=1000 records=100000
      labels=("${labels[0]}" klog8 "${labels[@]:1}")
      about="1,000 partitions, 100 x 100 B records to each in turn, acks=all, then 1,000 Metadata requests; klog8: the same records on 8 partitions"
      ;;
    esac
    results=$out/results-$case-$(date -u +%Y%m%dT%H%M%SZ).jsonl
    echo "=== matrix case $case: $about, $records records, results $results" >&2
    pairs_of throughput
    peers=$(IFS=,; echo "${labels[*]:1}")
    reports+=("$case|$about|$peers|$results")
  done
  for r in "${reports[@]}"; do
    IFS='|' read -r case about peers file <<<"$r"
    echo
    echo "matrix $case, klog $commit vs ${peers//,/ and }: $about; $pairs pairs, pinned=$pinned"
    "$bin/kbench" -mode report -goals=false -a klog -b "$peers" "$file"
    echo "raw results: $file"
  done
  if [ "$failures" -gt 0 ]; then
    echo "$failures runs failed; see the error fields in the results and the logs in $out/logs" >&2
    exit 1
  fi
  exit 0
fi

runs=()
[ "${THROUGHPUT:-1}" = 0 ] || runs+=(throughput)
[ "${E2E:-1}" = 0 ] || runs+=(e2e)
[ "$replication" = 1 ] || [ "$memory" = 1 ] || [ "$durable" = 1 ] || [ "$security" = 1 ] || runs+=(startup)
pairs_of "${runs[@]}"

echo
peers=$(IFS=,; echo "${labels[*]:1}")
if [ "$replication" = 1 ]; then
  about="klog3: klog up -n 3, RF 3, min ISR 2; klog1: one node, RF 1"
  [ "$peers" = klog1 ] || about+="; kafka3: 4.4.0, 3 nodes, RF 3, min ISR 2, heap ${KAFKA3_HEAP:-512m} each"
  echo "replication, klog $commit: klog3 vs ${peers//,/ and } ($about), acks=all, $pairs pairs, $records x 1 KiB records, e2e at ${E2E_RATE:-10000}/s, pinned=$pinned"
  "$bin/kbench" -mode report -goals=false -a klog3 -b "$peers" "$results"
elif [ "$security" = 1 ]; then
  for p in tls sasl; do
    ratios=klog$p/klog
    if [[ " ${labels[*]} " == *" kafka$p "* ]]; then ratios+=,kafka$p/kafka,klog$p/kafka$p; fi
    about="TLS 1.3, the suite the broker picks"
    [ "$p" = sasl ] && about+="; SASL PLAIN, once per connection"
    echo "security, klog $commit: $(protocol "klog$p") against PLAINTEXT, ratios ${ratios//,/, } ($about); $pairs pairs, $records x 1 KiB records, pinned=$pinned"
    "$bin/kbench" -mode report -ratios "$ratios" "$results"
    echo
  done
elif [ "$durable" = 1 ]; then
  echo "durable, klog $commit: klogdur (klog up --durable: acknowledged once fsynced, group commit) vs klog (the same disk, page cache only), $pairs pairs, $records x 1 KiB records, e2e at ${E2E_RATE:-10000}/s, pinned=$pinned; anchor: fio append + fdatasync every MiB, about 300 MB/s"
  "$bin/kbench" -mode report -goals=false -a klogdur -b "$peers" "$results"
elif [ "$memory" = 1 ]; then
  echo "in memory, klog $commit: klogmem (klog up --memory) vs klog (data directory) and kfakemem (kfake, no data directory), $pairs pairs, $records x 1 KiB records, pinned=$pinned"
  "$bin/kbench" -mode report -goals=false -a klogmem -b "$peers" "$results"
else
  about="kfake: page-cache data dir"
  [ "$peers" = kfake ] || about+="; kafka: 4.4.0, heap ${KAFKA_HEAP:-1G}"
  echo "klog $commit vs ${peers//,/ and } ($about), $pairs pairs, $records x 1 KiB records, pinned=$pinned"
  "$bin/kbench" -mode report -a klog -b "$peers" "$results"
fi
echo "raw results: $results"
if [ "$failures" -gt 0 ]; then
  echo "$failures runs failed; see the error fields in $results and the logs in $out/logs" >&2
  exit 1
fi
