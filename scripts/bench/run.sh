#!/usr/bin/env bash
# Side-by-side benchmark of klog against franz-go's kfake (with its
# page-cache data dir), following the protocol of the project's performance
# study: reference config P (1 partition, 1M x 1 KiB records, acks=all,
# idempotent, linger 5 ms, batch max 1 MiB, no compression), broker pinned to
# CPU 1 and client to CPU 0, a fresh broker process and data directory for
# every run, "sync; sleep 3" before each, pairs in ABBA order. Not a test: it
# prints figures.
#
#   scripts/bench/run.sh [pairs]        (default 5 pairs)
#
# Environment:
#   KLOG_CMD      command that starts the broker under test; %BIN%, %ADDR%
#                 and %DIR% are replaced by the tool directory, the listen
#                 address and a fresh data directory. Default:
#                 "%BIN%/klog up --data-dir %DIR% --listen %ADDR%"
#                 (setting it skips building klog).
#   KFAKE_CMD     the baseline, default "%BIN%/kfakeserver -listen %ADDR% -data-dir %DIR%"
#   RECORDS       records per throughput run (default 1000000)
#   E2E_DURATION  length of each e2e latency run at 10,000 records/s of
#                 1 KiB, acks=all, no linger (default 15s); E2E=0 skips them
#   PIN=0         do not pin (default: pin when taskset exists)
#
# Output: raw JSON lines in .bench/results-<date>.jsonl, then a table of
# min / median / max per broker and the median paired ratio.
set -uo pipefail
pairs=${1:-5}
records=${RECORDS:-1000000}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
# shellcheck source=../smoke/lib.sh
source "$root/scripts/smoke/lib.sh" # smoke_free_port

out=$root/.bench
bin=$out/bin
mkdir -p "$bin" "$out/logs"
[ -f "$out/.gitignore" ] || echo '*' >"$out/.gitignore"
results=$out/results-$(date -u +%Y%m%dT%H%M%SZ).jsonl
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain 2>/dev/null | head -n 1)" ] && commit="$commit-dirty"

echo "building tools into $bin" >&2
go build -o "$bin/kbench" ./scripts/bench/kbench || exit 1
go build -o "$bin/kfakeserver" ./scripts/bench/kfakeserver || exit 1
if [ -z "${KLOG_CMD:-}" ]; then
  go build -o "$bin/klog" ./cmd/klog || exit 1
fi
klog_tmpl=${KLOG_CMD:-"%BIN%/klog up --data-dir %DIR% --listen %ADDR%"}
kfake_tmpl=${KFAKE_CMD:-"%BIN%/kfakeserver -listen %ADDR% -data-dir %DIR%"}

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
stop_server() {
  local pid=$server_pid i
  [ -n "$pid" ] || return 0
  server_pid=
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
trap 'stop_server; rm -rf "$out/data"' EXIT
trap 'exit 130' INT TERM

# expand TEMPLATE ADDR DIR prints the broker command with placeholders filled.
expand() {
  local s=$1
  s=${s//%BIN%/$bin}
  s=${s//%ADDR%/$2}
  s=${s//%DIR%/$3}
  echo "$s"
}

wait_accept() {
  local addr=$1 pid=$2 i
  for i in $(seq 1 600); do
    (exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}") 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

failures=0
settle() { sync; sleep 3; }

# start_broker LABEL TEMPLATE PAIR RUN: a fresh broker on a free port with a
# fresh data directory, pinned; sets addr, dir and server_pid.
start_broker() {
  local label=$1 tmpl=$2 pair=$3 run=$4 port cmd log
  settle
  port=$(smoke_free_port) || { echo "no free port" >&2; return 1; }
  addr=127.0.0.1:$port
  dir=$out/data/$label
  rm -rf "$dir" && mkdir -p "$dir"
  log=$out/logs/$label-pair$pair-$run.log
  read -r -a cmd <<<"$(expand "$tmpl" "$addr" "$dir")"
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

# throughput LABEL TEMPLATE PAIR POSITION: produce then consume on one fresh broker.
throughput() {
  local label=$1 tmpl=$2 pair=$3 pos=$4 addr dir common
  start_broker "$label" "$tmpl" "$pair" throughput || return 1
  common=(-label "$label" -pair "$pair" -position "$pos" -pinned="$pinned" -commit "$commit"
    -brokers "$addr" -server-pid "$server_pid" -topic bench -timeout 10m)
  "${cli_pfx[@]}" "$bin/kbench" -mode produce "${common[@]}" -records "$records" >>"$results" ||
    failures=$((failures + 1))
  # +1: the producer's warm-up record.
  "${cli_pfx[@]}" "$bin/kbench" -mode consume "${common[@]}" -records $((records + 1)) >>"$results" ||
    failures=$((failures + 1))
  stop_server
  rm -rf "$dir"
  tail -n 2 "$results" | cut -c1-200 >&2
}

# e2e LABEL TEMPLATE PAIR POSITION: produce-to-consume latency at a fixed
# rate on a fresh broker.
e2e() {
  local label=$1 tmpl=$2 pair=$3 pos=$4 addr dir
  start_broker "$label" "$tmpl" "$pair" e2e || return 1
  "${cli_pfx[@]}" "$bin/kbench" -mode e2e -label "$label" -pair "$pair" -position "$pos" \
    -pinned="$pinned" -commit "$commit" -brokers "$addr" -server-pid "$server_pid" -topic e2e \
    -rate 10000 -size 1024 -duration "${E2E_DURATION:-15s}" -timeout 5m >>"$results" ||
    failures=$((failures + 1))
  stop_server
  rm -rf "$dir"
  tail -n 1 "$results" | cut -c1-200 >&2
}

# startup LABEL TEMPLATE PAIR POSITION: exec to first acked produce, idle RSS, shutdown.
startup() {
  local label=$1 tmpl=$2 pair=$3 pos=$4 port addr dir cmd
  settle
  port=$(smoke_free_port) || { echo "no free port" >&2; return 1; }
  addr=127.0.0.1:$port
  dir=$out/data/$label
  rm -rf "$dir" && mkdir -p "$dir"
  read -r -a cmd <<<"$(expand "$tmpl" "$addr" "$dir")"
  "${cli_pfx[@]}" "$bin/kbench" -mode startup -label "$label" -pair "$pair" -position "$pos" \
    -pinned="$pinned" -commit "$commit" -brokers "$addr" -idle 1s -timeout 2m \
    -broker-log "$out/logs/$label-pair$pair-startup.log" -- "${srv_pfx[@]}" "${cmd[@]}" >>"$results" ||
    failures=$((failures + 1))
  rm -rf "$dir"
  tail -n 1 "$results" | cut -c1-200 >&2
}

echo "klog: $(expand "$klog_tmpl" ADDR DIR)" >&2
echo "kfake: $(expand "$kfake_tmpl" ADDR DIR)" >&2
echo "pairs=$pairs records=$records pinned=$pinned commit=$commit loadavg=$(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "results: $results" >&2
# in_order RUN: RUN each broker of this pair, in the pair's order.
in_order() {
  local run=$1 label tmpl pos=0
  for label in "${order[@]}"; do
    pos=$((pos + 1))
    if [ "$label" = klog ]; then tmpl=$klog_tmpl; else tmpl=$kfake_tmpl; fi
    "$run" "$label" "$tmpl" "$pair" "$pos"
  done
}

for pair in $(seq 1 "$pairs"); do
  if [ $((pair % 2)) -eq 1 ]; then
    order=(klog kfake)
  else
    order=(kfake klog)
  fi
  echo "--- pair $pair: ${order[*]}" >&2
  in_order throughput
  [ "${E2E:-1}" = 0 ] || in_order e2e
  in_order startup
done

echo
echo "klog $commit vs kfake (page-cache data dir), $pairs pairs, $records x 1 KiB records, pinned=$pinned"
"$bin/kbench" -mode report -a klog -b kfake "$results"
echo "raw results: $results"
if [ "$failures" -gt 0 ]; then
  echo "$failures runs failed; see the error fields in $results and the logs in $out/logs" >&2
  exit 1
fi
