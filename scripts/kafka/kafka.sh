#!/usr/bin/env bash
# The Apache Kafka 4.4.0 reference broker on demand: the control that klog is
# compared with.
#
#   scripts/kafka/kafka.sh fetch
#   scripts/kafka/kafka.sh start [--nodes 1|3] [--dir DIR] [--sasl FILE | --listener PROTOCOL FILE]
#   scripts/kafka/kafka.sh stop [DIR]
#   scripts/kafka/kafka.sh node [--dir DIR] kill|start ID
#   scripts/kafka/kafka.sh tool NAME|CLASS [ARGS...]
#   scripts/kafka/kafka.sh prepare --dir DIR --port PORT [--listener PROTOCOL FILE]
#
# fetch  copies Kafka 4.4.0 and its runtime dependencies into the cache
#        (mvn dependency:copy-dependencies on scripts/kafka/pom.xml; Maven's
#        ~/.m2 is the cache between runs). A complete cache is reused.
# start  fetches, formats a KRaft data directory per node and starts combined
#        broker+controller nodes (kafka.Kafka) on free loopback ports: one
#        node with a single-node dynamic quorum (format --standalone), or
#        three with a static quorum (controller.quorum.voters). It returns
#        once every node answers ApiVersions and the cluster's metadata lists
#        all of them, leaving the nodes running, and prints on stdout
#          KAFKA_RUN_DIR=DIR   (node-ID/ with its config, data and server.log)
#          BROKERS=host:port[,host:port...]
#        DIR is a new mktemp -d unless --dir names one (it must be empty).
#        --sasl FILE adds a SASL_PLAINTEXT listener named SASL on a free
#        port of each node, appends FILE's settings (its JAAS config, an
#        authorizer...) to every node's config and prints
#          SASL_BROKERS=host:port[,host:port...]
#        The PLAINTEXT listeners stay: inter-broker, and for tools.
#        --listener PROTOCOL FILE does the same for SSL, SASL_PLAINTEXT or
#        SASL_SSL: a listener named after PROTOCOL (SASL for
#        SASL_PLAINTEXT, as --sasl FILE, which is --listener SASL_PLAINTEXT
#        FILE), FILE's settings (the keystore, the JAAS config...) and
#          NAME_BROKERS=host:port[,host:port...]   (SSL_BROKERS, SASL_SSL_BROKERS)
# stop   sends SIGTERM to every node of DIR (default $KAFKA_RUN_DIR), waits
#        for them, SIGKILLs a node still running after the bound, and then
#        removes DIR (set KLOG_KAFKA_KEEP=1 to keep it). Exits 1 if a node had
#        to be killed.
# node   acts on one node of a running start (DIR, default $KAFKA_RUN_DIR),
#        as klog node does on klog up -n: kill sends SIGKILL and waits for
#        the JVM to exit; start launches a node that is down again on its
#        config and data, and returns once its broker port accepts
#        connections (KLOG_KAFKA_READY_TIMEOUT). For scripts/kafka/protodiff
#        -nodes 3, which takes a follower down on both sides.
# tool   runs one of Kafka's command-line tools by its main class, with the
#        fetched jars: a short name (topics, console-producer,
#        console-consumer, consumer-groups, transactions, configs, acls,
#        delegation-tokens, get-offsets, broker-api-versions, producer-perf, storage,
#        metadata-quorum, dump-log) or a fully qualified class name.
# prepare  fetches, writes DIR/node-0/server.properties for one combined node
#        (the config start writes) whose broker listens on 127.0.0.1:PORT,
#        its controller on a free port, formats its data directory and prints
#        the node's java command on stdout, one argument per line, without
#        running it: for a caller that execs the JVM itself and measures it
#        from exec (scripts/bench/run.sh). The JVM options are Kafka's own
#        defaults, those of kafka-server-start.sh and kafka-run-class.sh:
#        -Xmx1G -Xms1G (KLOG_KAFKA_HEAP sets both), G1 with a 20 ms pause
#        goal, GC log in DIR/node-0; the broker logs at INFO on stderr.
#        --listener PROTOCOL FILE: the listener on PORT is PROTOCOL's, as
#        start's --listener has it, with FILE's settings; the PLAINTEXT
#        listener (inter-broker) takes a free port.
#
# Each step prints its duration on stderr ("kafka: format 1.4s").
#
# Environment:
#   KLOG_KAFKA_CACHE          cache directory (default .cache/kafka-4.4.0 in
#                             the repository root)
#   KLOG_KAFKA_HEAP           broker heap (default 512m per node; for
#                             prepare, 1G as in Kafka's own scripts)
#   KLOG_KAFKA_TOOL_HEAP      tool heap (default 256m)
#   KLOG_KAFKA_READY_TIMEOUT  seconds start waits for readiness (default 120)
#   KLOG_KAFKA_STOP_TIMEOUT   seconds stop waits after SIGTERM (default 30)
#   KLOG_KAFKA_KEEP=1         stop leaves DIR in place
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kafka_version=4.4.0
cache=${KLOG_KAFKA_CACHE:-$root/.cache/kafka-$kafka_version}
lib=$cache/lib
# The file in a run directory that marks it as made by kafka.sh start.
run_marker=kafka.sh-run

# shellcheck source=../smoke/lib.sh
source "$root/scripts/smoke/lib.sh"

say() { echo "kafka: $*" >&2; }
die() { say "$*"; exit 1; }

# now prints the wall clock in microseconds; took START NAME prints how long
# the step NAME took since START.
now() { local t=${EPOCHREALTIME/./}; echo "$t"; }
took() {
  local us=$(($(now) - $1))
  say "$(printf '%s %d.%01ds' "$2" $((us / 1000000)) $((us % 1000000 / 100000)))"
}

usage() {
  sed -n '/^#   scripts/p' "$0" | sed 's/^#   /usage: /' >&2
  exit 2
}

# --- fetch ----------------------------------------------------------------
# The cache is complete when lib/.complete holds the hash of the pom that
# filled it; a changed pom refetches.
pom_hash() { sha256sum "$here/pom.xml" | cut -d' ' -f1; }

cache_complete() { [ -f "$lib/.complete" ] && [ "$(cat "$lib/.complete")" = "$(pom_hash)" ]; }

fetch() {
  local t tmp
  t=$(now)
  if cache_complete; then
    took "$t" "fetch (cached in $lib)"
    return 0
  fi
  command -v mvn >/dev/null || die "fetch: mvn is not on PATH"
  mkdir -p "$cache" || die "fetch: cannot create $cache"
  tmp=$(mktemp -d "$cache/lib.XXXXXX") || die "fetch: cannot create a directory in $cache"
  # Maven 3.8 writes colour resets even in batch mode; they go.
  if ! mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tmp" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2; then
    rm -rf "$tmp"
    die "fetch: mvn dependency:copy-dependencies failed (is Maven Central reachable?)"
  fi
  [ -f "$tmp/kafka_2.13-$kafka_version.jar" ] || { rm -rf "$tmp"; die "fetch: kafka_2.13-$kafka_version.jar missing after the copy"; }
  pom_hash >"$tmp/.complete"
  rm -rf "$lib"
  mv "$tmp" "$lib" || die "fetch: cannot move $tmp to $lib"
  took "$t" "fetch ($(find "$lib" -name '*.jar' | wc -l) jars into $lib)"
}

# java_main HEAP LEVEL CLASS ARGS... runs CLASS with the cached jars, logging
# at LEVEL on stderr; java_cmd HEAP LEVEL sets the array JAVA to that command
# without the class, for timeout(1).
java_cmd() {
  JAVA=(java "-Xmx$1" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$here/log4j2.properties" "-Dklog.kafka.level=$2"
    -cp "$lib/*")
}
java_main() {
  java_cmd "$1" "$2"
  shift 2
  "${JAVA[@]}" "$@"
}

tool_class() {
  case $1 in
  topics) echo org.apache.kafka.tools.TopicCommand ;;
  console-producer) echo org.apache.kafka.tools.ConsoleProducer ;;
  console-consumer) echo org.apache.kafka.tools.consumer.ConsoleConsumer ;;
  consumer-groups) echo org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
  transactions) echo org.apache.kafka.tools.TransactionsCommand ;;
  configs) echo org.apache.kafka.tools.ConfigCommand ;;
  acls) echo org.apache.kafka.tools.AclCommand ;;
  delegation-tokens) echo org.apache.kafka.tools.DelegationTokenCommand ;;
  get-offsets) echo org.apache.kafka.tools.GetOffsetShell ;;
  broker-api-versions) echo org.apache.kafka.tools.BrokerApiVersionsCommand ;;
  producer-perf) echo org.apache.kafka.tools.ProducerPerformance ;;
  metadata-quorum) echo org.apache.kafka.tools.MetadataQuorumCommand ;;
  dump-log) echo org.apache.kafka.tools.DumpLogSegments ;;
  storage) echo kafka.tools.StorageTool ;;
  *.*) echo "$1" ;;
  *) return 1 ;;
  esac
}

tool() {
  local class
  [ $# -ge 1 ] || usage
  class=$(tool_class "$1") || die "tool: unknown tool $1 (a short name or a fully qualified class)"
  shift
  cache_complete || fetch || exit 1
  # exec, so that timeout(1) around "kafka.sh tool" stops the JVM itself.
  java_cmd "${KLOG_KAFKA_TOOL_HEAP:-256m}" WARN
  exec "${JAVA[@]}" "$class" "$@"
}

# --- start ----------------------------------------------------------------
# listener_name PROTOCOL prints the name of the listener --listener
# PROTOCOL adds: SASL for SASL_PLAINTEXT (--sasl's), else the protocol's.
listener_name() {
  case $1 in
  SASL_PLAINTEXT) echo SASL ;;
  SSL | SASL_SSL) echo "$1" ;;
  *) die "--listener $1: want SSL, SASL_PLAINTEXT or SASL_SSL" ;;
  esac
}

# listener_file FILE prints FILE's absolute path, or dies.
listener_file() {
  [ -f "$1" ] || die "--listener: $1: no such file"
  echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}

# write_config DIR ID NODES BROKER_PORT CONTROLLER_PORT QUORUM [PORT PROTOCOL FILE]
# writes node ID's config; PORT, PROTOCOL and FILE are --listener's.
write_config() {
  local dir=$1 id=$2 nodes=$3 bport=$4 cport=$5 quorum=$6 sport=${7:-} sproto=${8:-} sfile=${9:-} rf=1 isr=1
  local listeners="PLAINTEXT://127.0.0.1:$bport" map="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT" name
  if [ "$nodes" -ge 3 ]; then rf=3 isr=2; fi
  if [ -n "$sport" ]; then
    name=$(listener_name "$sproto") || exit 1
    listeners+=",$name://127.0.0.1:$sport" map+=",$name:$sproto"
  fi
  cat >"$dir/node-$id/server.properties" <<EOF
# Written by scripts/kafka/kafka.sh start: node $id of $nodes (ids from 0,
# as klog numbers its nodes).
process.roles=broker,controller
node.id=$id
listeners=$listeners,CONTROLLER://127.0.0.1:$cport
advertised.listeners=$listeners
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$map
$quorum
log.dirs=$dir/node-$id/data
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
default.replication.factor=$rf
min.insync.replicas=$isr
EOF
  if [ -n "$sfile" ]; then
    { echo "# From $sfile (--listener $sproto)"; grep -v '^[[:space:]]*\(#\|$\)' "$sfile"; } >>"$dir/node-$id/server.properties"
  fi
}

# free_ports N prints N distinct free loopback ports.
free_ports() {
  local n=$1 p got=()
  while [ "${#got[@]}" -lt "$n" ]; do
    p=$(smoke_free_port) || return 1
    case " ${got[*]} " in *" $p "*) continue ;; esac
    got+=("$p")
  done
  echo "${got[@]}"
}

node_alive() {
  local pid
  pid=$(cat "$1/pid" 2>/dev/null) || return 1
  # The pid must still be our java, not a reused number.
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$1/server.properties"
}

# launch_node NODEDIR starts the JVM of one node on NODEDIR/server.properties,
# its output appended to NODEDIR/server.log, its pid in NODEDIR/pid.
launch_node() {
  java "-Xmx${KLOG_KAFKA_HEAP:-512m}" -Xms128m -XX:+UseG1GC -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$here/log4j2.properties" -Dklog.kafka.level=INFO \
    "-Dkafka.logs.dir=$1" -cp "$lib/*" \
    kafka.Kafka "$1/server.properties" \
    >>"$1/server.log" 2>&1 </dev/null &
  echo $! >"$1/pid"
}

start() {
  local nodes=1 dir='' t t_all ports i cid quorum fmt brokers='' bports=() cports=() deadline out ok
  local sproto='' sfile='' sports=() sbrokers='' per=2
  while [ $# -gt 0 ]; do
    case $1 in
    --nodes) nodes=${2:-}; shift 2 || usage ;;
    --dir) dir=${2:-}; shift 2 || usage ;;
    --sasl) sproto=SASL_PLAINTEXT sfile=${2:-}; shift 2 || usage ;;
    --listener) sproto=${2:-} sfile=${3:-}; shift 3 || usage ;;
    *) usage ;;
    esac
  done
  case $nodes in 1 | 3) ;; *) die "start: --nodes must be 1 or 3" ;; esac
  t_all=$(now)
  fetch || exit 1
  if [ -z "$dir" ]; then
    dir=$(mktemp -d) || die "start: mktemp -d failed"
  else
    mkdir -p "$dir" || die "start: cannot create $dir"
    [ -z "$(ls -A "$dir")" ] || die "start: $dir is not empty"
    dir=$(cd "$dir" && pwd)
  fi
  : >"$dir/$run_marker"

  if [ -n "$sproto" ]; then
    listener_name "$sproto" >/dev/null || exit 1
    sfile=$(listener_file "$sfile") || exit 1
    per=3
  fi
  read -r -a ports <<<"$(free_ports $((per * nodes)))" || die "start: no free ports"
  for i in $(seq 0 $((nodes - 1))); do
    bports+=("${ports[$((per * i))]}")
    cports+=("${ports[$((per * i + 1))]}")
    brokers+="${brokers:+,}127.0.0.1:${bports[$i]}"
    if [ -n "$sproto" ]; then
      sports+=("${ports[$((per * i + 2))]}")
      sbrokers+="${sbrokers:+,}127.0.0.1:${sports[$i]}"
    fi
  done
  if [ "$nodes" -eq 1 ]; then
    quorum="controller.quorum.bootstrap.servers=127.0.0.1:${cports[0]}"
    fmt=(--standalone)
  else
    quorum="controller.quorum.voters="
    for i in $(seq 0 $((nodes - 1))); do
      quorum+="${i}@127.0.0.1:${cports[$i]}"
      [ "$i" -lt $((nodes - 1)) ] && quorum+=","
    done
    fmt=()
  fi

  t=$(now)
  cid=$(java_main 128m WARN kafka.tools.StorageTool random-uuid) || die "start: StorageTool random-uuid failed"
  for i in $(seq 0 $((nodes - 1))); do
    mkdir -p "$dir/node-$i/data"
    write_config "$dir" "$i" "$nodes" "${bports[$i]}" "${cports[$i]}" "$quorum" "${sports[$i]:-}" "$sproto" "$sfile"
  done
  # One JVM per node would double the time; the formats are independent, so
  # they run side by side.
  local fpids=()
  for i in $(seq 0 $((nodes - 1))); do
    java_main 128m WARN kafka.tools.StorageTool format --cluster-id "$cid" \
      --config "$dir/node-$i/server.properties" "${fmt[@]}" >"$dir/node-$i/format.log" 2>&1 &
    fpids+=($!)
  done
  for i in $(seq 0 $((nodes - 1))); do
    if ! wait "${fpids[$i]}"; then
      cat "$dir/node-$i/format.log" >&2
      die "start: StorageTool format failed for node $i (log above)"
    fi
  done
  took "$t" "format ($nodes node(s), cluster id $cid)"

  t=$(now)
  # Interrupted before ready: the nodes go with it.
  # shellcheck disable=SC2064 # dir is fixed from here on
  trap "KLOG_KAFKA_KEEP=1 stop '$dir' >/dev/null 2>&1; exit 130" INT TERM
  for i in $(seq 0 $((nodes - 1))); do
    launch_node "$dir/node-$i"
  done

  # Ready means: every node's broker port accepts connections, and
  # BrokerApiVersionsCommand (ApiVersions to each broker the metadata lists)
  # reaches every node id.
  deadline=$((SECONDS + ${KLOG_KAFKA_READY_TIMEOUT:-120}))
  ok=0
  while [ "$SECONDS" -lt "$deadline" ]; do
    for i in $(seq 0 $((nodes - 1))); do
      if ! node_alive "$dir/node-$i"; then
        say "start: node $i exited before it was ready; the end of its log:"
        tail -n 40 "$dir/node-$i/server.log" >&2
        KLOG_KAFKA_KEEP=1 stop "$dir" >/dev/null 2>&1
        die "start: failed (run directory kept: $dir)"
      fi
    done
    ok=1
    for i in $(seq 0 $((nodes - 1))); do
      (exec 3<>"/dev/tcp/127.0.0.1/${bports[$i]}") 2>/dev/null || { ok=0; break; }
    done
    if [ "$ok" -eq 1 ]; then
      java_cmd 128m ERROR
      out=$(timeout 30 "${JAVA[@]}" org.apache.kafka.tools.BrokerApiVersionsCommand \
        --bootstrap-server "$brokers" 2>&1)
      for i in $(seq 0 $((nodes - 1))); do
        grep -qF "127.0.0.1:${bports[$i]} (id: $i " <<<"$out" || { ok=0; break; }
      done
      [ "$ok" -eq 1 ] && break
    fi
    sleep 0.5
  done
  if [ "$ok" -ne 1 ]; then
    say "start: not ready within ${KLOG_KAFKA_READY_TIMEOUT:-120}s; the end of node 0's log:"
    tail -n 40 "$dir/node-0/server.log" >&2
    KLOG_KAFKA_KEEP=1 stop "$dir" >/dev/null 2>&1
    die "start: failed (run directory kept: $dir)"
  fi
  trap - INT TERM
  echo "$brokers" >"$dir/brokers"
  took "$t" "start to ready"
  took "$t_all" "start total"
  echo "KAFKA_RUN_DIR=$dir"
  echo "BROKERS=$brokers"
  [ -z "$sbrokers" ] || echo "$(listener_name "$sproto")_BROKERS=$sbrokers"
}

# --- stop -----------------------------------------------------------------
stop() {
  local dir=${1:-${KAFKA_RUN_DIR:-}} t n pid killed=0 deadline
  [ -n "$dir" ] || die "stop: no run directory (pass DIR or set KAFKA_RUN_DIR)"
  [ -f "$dir/$run_marker" ] || die "stop: $dir is not a kafka.sh run directory"
  t=$(now)
  for n in "$dir"/node-*; do
    node_alive "$n" && kill -TERM "$(cat "$n/pid")" 2>/dev/null
  done
  deadline=$((SECONDS + ${KLOG_KAFKA_STOP_TIMEOUT:-30}))
  for n in "$dir"/node-*; do
    while node_alive "$n" && [ "$SECONDS" -lt "$deadline" ]; do
      sleep 0.2
    done
    if node_alive "$n"; then
      pid=$(cat "$n/pid")
      say "stop: ${n##*/} (pid $pid) still running ${KLOG_KAFKA_STOP_TIMEOUT:-30}s after SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null
      killed=1
    fi
  done
  took "$t" "stop"
  if [ "${KLOG_KAFKA_KEEP:-0}" = 1 ]; then
    say "stop: run directory kept: $dir"
  else
    rm -rf "$dir"
  fi
  [ "$killed" -eq 0 ]
}

# --- node -----------------------------------------------------------------
node() {
  local dir=${KAFKA_RUN_DIR:-} act id n port pid state deadline
  if [ "${1:-}" = --dir ]; then
    dir=${2:-}
    shift 2 || usage
  fi
  [ $# -eq 2 ] || usage
  act=$1 id=$2
  [ -n "$dir" ] || die "node: no run directory (pass --dir DIR or set KAFKA_RUN_DIR)"
  [ -f "$dir/$run_marker" ] || die "node: $dir is not a kafka.sh run directory"
  n=$dir/node-$id
  [ -f "$n/server.properties" ] || die "node: $dir has no node $id"
  case $act in
  kill)
    node_alive "$n" || die "node: node $id is not running"
    pid=$(cat "$n/pid")
    kill -KILL "$pid" 2>/dev/null
    # Gone once /proc has no such process or only its zombie: an exiting
    # process has an empty cmdline (node_alive is false) while it still
    # holds its sockets.
    deadline=$((SECONDS + 10))
    while state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) && [ -n "$state" ] && [ "$state" != Z ]; do
      [ "$SECONDS" -lt "$deadline" ] || die "node: node $id still running 10s after SIGKILL"
      sleep 0.1
    done
    say "node: node $id killed"
    ;;
  start)
    node_alive "$n" && die "node: node $id is running"
    port=$(sed -n 's/^listeners=PLAINTEXT:\/\/127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$n/server.properties")
    [ -n "$port" ] || die "node: no broker port in $n/server.properties"
    launch_node "$n"
    deadline=$((SECONDS + ${KLOG_KAFKA_READY_TIMEOUT:-120}))
    until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
      node_alive "$n" || { tail -n 40 "$n/server.log" >&2; die "node: node $id exited before it listened (log above)"; }
      [ "$SECONDS" -lt "$deadline" ] || die "node: node $id not listening on $port within ${KLOG_KAFKA_READY_TIMEOUT:-120}s"
      sleep 0.2
    done
    say "node: node $id listening on 127.0.0.1:$port"
    ;;
  *) usage ;;
  esac
}

# --- prepare --------------------------------------------------------------
prepare() {
  local dir='' port='' t cport cid heap bport sproto='' sfile='' sport='' p others=()
  while [ $# -gt 0 ]; do
    case $1 in
    --dir) dir=${2:-}; shift 2 || usage ;;
    --port) port=${2:-}; shift 2 || usage ;;
    --listener) sproto=${2:-} sfile=${3:-}; shift 3 || usage ;;
    *) usage ;;
    esac
  done
  if [ -z "$dir" ] || [ -z "$port" ]; then usage; fi
  mkdir -p "$dir" || die "prepare: cannot create $dir"
  [ -z "$(ls -A "$dir")" ] || die "prepare: $dir is not empty"
  dir=$(cd "$dir" && pwd)
  # Free ports other than PORT: the controller's, and with --listener
  # the PLAINTEXT listener's.
  for p in $(free_ports 3); do [ "$p" = "$port" ] || others+=("$p"); done
  [ "${#others[@]}" -ge 2 ] || die "prepare: no free port"
  cport=${others[0]} bport=$port
  if [ -n "$sproto" ]; then
    listener_name "$sproto" >/dev/null || exit 1
    sfile=$(listener_file "$sfile") || exit 1
    sport=$port bport=${others[1]}
  fi
  fetch || exit 1
  : >"$dir/$run_marker"
  mkdir -p "$dir/node-0/data"
  write_config "$dir" 0 1 "$bport" "$cport" "controller.quorum.bootstrap.servers=127.0.0.1:$cport" "$sport" "$sproto" "$sfile"
  t=$(now)
  cid=$(java_main 128m WARN kafka.tools.StorageTool random-uuid) || die "prepare: StorageTool random-uuid failed"
  if ! java_main 128m WARN kafka.tools.StorageTool format --cluster-id "$cid" \
    --config "$dir/node-0/server.properties" --standalone >"$dir/node-0/format.log" 2>&1; then
    cat "$dir/node-0/format.log" >&2
    die "prepare: StorageTool format failed (log above)"
  fi
  took "$t" "format (cluster id $cid)"
  heap=${KLOG_KAFKA_HEAP:-1G}
  printf '%s\n' java "-Xmx$heap" "-Xms$heap" -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    "-Xlog:gc*:file=$dir/node-0/kafkaServer-gc.log:time,tags:filecount=10,filesize=100M" \
    "-Dlog4j2.configurationFile=$here/log4j2.properties" -Dklog.kafka.level=INFO \
    "-Dkafka.logs.dir=$dir/node-0" -cp "$lib/*" kafka.Kafka "$dir/node-0/server.properties"
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift
case $cmd in
fetch) fetch ;;
start) start "$@" ;;
stop) stop "$@" ;;
node) node "$@" ;;
tool) tool "$@" ;;
prepare) prepare "$@" ;;
*) usage ;;
esac
