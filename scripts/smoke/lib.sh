# Helpers shared by the smoke tests: start one klog node (or a local cluster,
# klog up -n) in the background on a free loopback port, wait for its ready
# line, stop it by PID.
# Source this file; it defines functions only.

# smoke_free_port prints a loopback port nobody listens on. Ports come from
# 20000-32767, below Linux's default ephemeral range, so client sockets do not
# take them between the check and the broker's bind (a lost race is retried by
# smoke_start_broker).
smoke_free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 12768))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# smoke_start_broker KLOG_BIN WORKDIR [NODES]
# Starts "KLOG_BIN up --memory --listen 127.0.0.1:PORT" and waits (at most
# KLOG_READY_TIMEOUT seconds, default 60) for its line containing BROKERS=.
# Sets SMOKE_BROKER_PID and SMOKE_BROKERS. On failure prints the broker's
# output and returns 1. With NODES > 1 it starts a local cluster instead,
# with smoke_start_cluster. With SMOKE_SECURE=1 the node (or cluster) is
# "klog up --secure" (its data in WORKDIR, every listener on a free port):
# it waits for the secure listeners' lines too (smoke_read_secure).
smoke_start_broker() {
  local bin=$1 dir=$2 nodes=${3:-1} timeout=${KLOG_READY_TIMEOUT:-60} attempt port deadline
  local cmd
  SMOKE_BROKER_PID=
  SMOKE_BROKERS=
  SMOKE_CLUSTER_DIR=
  if [ "$nodes" -gt 1 ]; then
    if [ "${SMOKE_SECURE:-0}" = 1 ]; then
      smoke_start_cluster "$bin" "$dir" "$nodes" --secure
    else
      smoke_start_cluster "$bin" "$dir" "$nodes"
    fi
    return
  fi
  for attempt in 1 2 3; do
    port=$(smoke_free_port) || { echo "smoke: no free port found" >&2; return 1; }
    : >"$dir/broker.out"
    : >"$dir/broker.err"
    cmd=("$bin" up --memory --listen "127.0.0.1:$port" --log-level "${KLOG_LOG_LEVEL:-info}")
    # SMOKE_DATA_DIR keeps the node's data there instead of in memory.
    [ -z "${SMOKE_DATA_DIR:-}" ] || cmd=("$bin" up --data-dir "$SMOKE_DATA_DIR" --listen "127.0.0.1:$port" --log-level "${KLOG_LOG_LEVEL:-info}")
    # --secure keeps its CA and users in a data directory; port 0 gives
    # each of its three listeners a free port.
    [ "${SMOKE_SECURE:-0}" = 1 ] && cmd=("$bin" up --secure --data-dir "$dir/data" --listen 127.0.0.1:0 --log-level "${KLOG_LOG_LEVEL:-info}")
    # SMOKE_SASL_PLAINTEXT=1 adds a SASL_PLAINTEXT listener (SCRAM) on
    # another free port: SMOKE_SASL_PLAINTEXT_BROKERS.
    if [ "${SMOKE_SASL_PLAINTEXT:-0}" = 1 ]; then
      SMOKE_SASL_PLAINTEXT_BROKERS=127.0.0.1:$(smoke_free_port) || return 1
      cmd+=(-X "listeners=PLAINTEXT://127.0.0.1:$port,SASL_PLAINTEXT://$SMOKE_SASL_PLAINTEXT_BROKERS"
        -X sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256)
    fi
    "${cmd[@]}" >"$dir/broker.out" 2>"$dir/broker.err" </dev/null &
    SMOKE_BROKER_PID=$!
    deadline=$((SECONDS + timeout))
    while [ "$SECONDS" -lt "$deadline" ]; do
      if grep -q 'BROKERS=' "$dir/broker.out" && smoke_read_secure "$dir"; then
        SMOKE_BROKERS=$(grep -o 'BROKERS=[^[:space:]]*' "$dir/broker.out" | head -n 1 | cut -d= -f2)
        if [ -n "$SMOKE_BROKERS" ]; then
          return 0
        fi
      fi
      if ! kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; then
        break
      fi
      sleep 0.1
    done
    if kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; then
      echo "smoke: broker printed no BROKERS= line within ${timeout}s" >&2
      smoke_dump_broker_log "$dir"
      smoke_stop_broker >/dev/null 2>&1
      return 1
    fi
    wait "$SMOKE_BROKER_PID" 2>/dev/null
    echo "smoke: broker exited before it was ready (attempt $attempt, port $port)" >&2
    smoke_dump_broker_log "$dir"
    SMOKE_BROKER_PID=
    # An exit that is not a lost race for the port will repeat: give up then.
    if ! grep -qi 'address already in use' "$dir/broker.err" "$dir/broker.out"; then
      return 1
    fi
  done
  return 1
}

# smoke_start_cluster KLOG_BIN WORKDIR N [ARGS...]
# Starts "KLOG_BIN up -n N --data-dir WORKDIR/cluster --listen 127.0.0.1:0
# ARGS..." (every node on free ports) and waits, as smoke_start_broker
# does, for its BROKERS= line, printed once all N nodes are ready. Sets
# SMOKE_BROKER_PID (the supervisor: smoke_stop_broker stops the whole
# cluster), SMOKE_BROKERS (the bootstrap list) and SMOKE_CLUSTER_DIR (the
# data directory, for klog node --data-dir). On failure prints the
# cluster's output and returns 1.
smoke_start_cluster() {
  local bin=$1 dir=$2 n=$3 timeout=${KLOG_READY_TIMEOUT:-60} deadline
  shift 3
  SMOKE_BROKERS=
  SMOKE_CLUSTER_DIR=$dir/cluster
  : >"$dir/broker.out"
  : >"$dir/broker.err"
  "$bin" up -n "$n" --data-dir "$SMOKE_CLUSTER_DIR" --listen 127.0.0.1:0 --log-level "${KLOG_LOG_LEVEL:-info}" "$@" \
    >"$dir/broker.out" 2>"$dir/broker.err" </dev/null &
  SMOKE_BROKER_PID=$!
  deadline=$((SECONDS + timeout))
  while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$SMOKE_BROKER_PID" 2>/dev/null; do
    SMOKE_BROKERS=$(grep -o 'BROKERS=[^[:space:]]*' "$dir/broker.out" | head -n 1 | cut -d= -f2)
    [ -n "$SMOKE_BROKERS" ] && smoke_read_secure "$dir" && return 0
    sleep 0.1
  done
  echo "smoke: the $n-node cluster printed no BROKERS= line within ${timeout}s (or exited)" >&2
  smoke_dump_broker_log "$dir"
  smoke_stop_broker >/dev/null 2>&1
  return 1
}

# smoke_read_secure WORKDIR: without SMOKE_SECURE=1, nothing (returns 0).
# With it, returns 1 until klog up --secure printed its secure listeners,
# then sets SMOKE_SASL_SSL_BROKERS, SMOKE_SSL_BROKERS and SMOKE_SECURE_DIR
# (DATA-DIR/secure: the CA, the users' client certificates and the client
# configs app.properties, app-mtls.properties...).
smoke_read_secure() {
  local out=$1/broker.out ca
  SMOKE_SASL_SSL_BROKERS= SMOKE_SSL_BROKERS= SMOKE_SECURE_DIR=
  [ "${SMOKE_SECURE:-0}" = 1 ] || return 0
  ca=$(sed -n 's/^CA=//p' "$out" | head -n 1)
  [ -n "$ca" ] || return 1
  SMOKE_SASL_SSL_BROKERS=$(sed -n 's/^SASL_SSL_BROKERS=//p' "$out" | head -n 1)
  SMOKE_SSL_BROKERS=$(sed -n 's/^SSL_BROKERS=//p' "$out" | head -n 1)
  SMOKE_SECURE_DIR=$(dirname "$ca")
  [ -n "$SMOKE_SASL_SSL_BROKERS" ] && [ -n "$SMOKE_SSL_BROKERS" ]
}

smoke_dump_broker_log() {
  local dir=$1
  echo "----- broker stdout (last 100 lines) -----" >&2
  tail -n 100 "$dir/broker.out" >&2
  echo "----- broker stderr (last 200 lines) -----" >&2
  tail -n 200 "$dir/broker.err" >&2
  echo "-----" >&2
}

# smoke_cluster_running KLOG_BIN lists the nodes of the cluster
# smoke_start_cluster started (klog node list) and returns 1 unless every
# one is running: a node that died does not stop the supervisor.
smoke_cluster_running() {
  local bin=$1 list
  if ! list=$(timeout -k 5 30 "$bin" node list --data-dir "$SMOKE_CLUSTER_DIR" 2>&1); then
    echo "smoke: klog node list failed: $list" >&2
    return 1
  fi
  echo "$list"
  awk 'NR > 1 && $4 != "running" { bad = 1 } END { exit bad }' <<<"$list"
}

# smoke_stop_broker sends SIGTERM to the broker, waits up to 15 s (30 s for
# a cluster, whose nodes each hand their leadership over first), then
# SIGKILLs it. Returns 0 only if the broker exited with status 0 in time.
smoke_stop_broker() {
  local pid=${SMOKE_BROKER_PID:-} rc wait=15
  [ -n "$pid" ] || return 0
  [ -n "${SMOKE_CLUSTER_DIR:-}" ] && wait=30
  SMOKE_BROKER_PID=
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((wait * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "smoke: broker did not exit within ${wait}s of SIGTERM; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null
    return 1
  fi
  wait "$pid"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "smoke: broker exited with status $rc after SIGTERM" >&2
    return 1
  fi
  return 0
}
