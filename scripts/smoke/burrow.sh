#!/usr/bin/env bash
# Burrow reads klog's __consumer_offsets: a group commits offset 60 on a
# one-partition topic holding 100 records, and Burrow's HTTP API must report
# the group with a total lag of 40. This checks klog's offset-commit record
# format against a third-party reader, and the broker APIs Burrow's Sarama
# client uses (ListOffsets v0 among them).
#
# Burrow 1.2 keeps its own state in ZooKeeper and does not start without it,
# so the test runs a standalone ZooKeeper (Debian package "zookeeper", Java)
# on a free port next to Burrow. Without Burrow, ZooKeeper or java the test is
# skipped outside CI. KLOG_BIN names the klog binary (default: klog on PATH,
# else bin/klog or the one run.sh was given).
#   BROKERS=127.0.0.1:PORT scripts/smoke/burrow.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
root=$(cd "$here/../.." && pwd)

burrow_bin=${BURROW_BIN:-/usr/bin/Burrow}
zk_jar=/usr/share/java/zookeeper.jar
missing=
[ -x "$burrow_bin" ] || missing="Burrow ($burrow_bin)"
[ -f "$zk_jar" ] || missing="${missing:+$missing, }ZooKeeper ($zk_jar)"
command -v java >/dev/null || missing="${missing:+$missing, }java"
if [ -n "$missing" ]; then
  if [ "${CI:-}" = true ]; then
    echo "burrow: missing $missing; scripts/test.sh installs the burrow and zookeeper packages" >&2
    exit 1
  fi
  echo "SKIP burrow: missing $missing (apt-get install burrow zookeeper)"
  exit 77
fi
klog=${KLOG_BIN:-}
if [ -z "$klog" ]; then
  for c in "$(command -v klog || true)" "$root/bin/klog" "$root/klog"; do
    if [ -n "$c" ] && [ -x "$c" ]; then klog=$c; break; fi
  done
fi
[ -n "$klog" ] || { echo "burrow: no klog binary; set KLOG_BIN" >&2; exit 1; }

work=$(mktemp -d)
zk_pid=
burrow_pid=
cleanup() {
  for pid in $burrow_pid $zk_pid; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in $burrow_pid $zk_pid; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# wait_port PORT SECONDS PID: until something listens on the loopback port;
# fails early if process PID exits.
wait_port() {
  local deadline=$((SECONDS + $2))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# zk_serving PORT: ZooKeeper answers "srvr" (it accepts connections before it
# serves sessions).
zk_serving() {
  local reply
  reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && timeout 2 cat <&3) 2>/dev/null || true)
  case $reply in *Mode:*) return 0 ;; esac
  return 1
}

dump() {
  echo "----- burrow log (last 40 lines) -----" >&2
  tail -n 40 "$work/burrow.log" >&2 || true
  echo "----- zookeeper log (last 20 lines) -----" >&2
  tail -n 20 "$work/zk.log" >&2 || true
}

topic=burrow-lag-$$
group=burrow-group-$$
k() { "$klog" -b "$BROKERS" "$@"; }

# The group's offsets go into __consumer_offsets before Burrow starts: Burrow
# needs that topic to exist when its consumer module starts.
k topic create "$topic" -p 1 >/dev/null
seq 1 100 | k produce "$topic" -q
k group seek "$group" --to 60 --topics "$topic" --yes >/dev/null

zk_port=$(smoke_free_port)
mkdir -p "$work/zk"
java -Dzookeeper.admin.enableServer=false -Dzookeeper.jmx.log4j.disable=true \
  -cp "/etc/zookeeper/conf:$zk_jar" org.apache.zookeeper.server.ZooKeeperServerMain \
  "$zk_port" "$work/zk" >"$work/zk.log" 2>&1 </dev/null &
zk_pid=$!
zk_deadline=$((SECONDS + 60))
until zk_serving "$zk_port"; do
  if [ "$SECONDS" -ge "$zk_deadline" ] || ! kill -0 "$zk_pid" 2>/dev/null; then
    echo "burrow: ZooKeeper did not serve on $zk_port within 60s" >&2
    dump
    exit 1
  fi
  sleep 0.2
done

http_port=$(smoke_free_port)
servers=$(echo "$BROKERS" | sed 's/[^,][^,]*/"&"/g')
cat >"$work/burrow.toml" <<EOF
[general]
pidfile="$work/burrow.pid"
[logging]
level="info"
[zookeeper]
servers=["127.0.0.1:$zk_port"]
timeout=6
root-path="/burrow"
[client-profile.klog]
kafka-version="2.0.0"
client-id="burrow"
[cluster.klog]
class-name="kafka"
servers=[$servers]
client-profile="klog"
topic-refresh=2
offset-refresh=1
[consumer.klog]
class-name="kafka"
cluster="klog"
servers=[$servers]
client-profile="klog"
offsets-topic="__consumer_offsets"
start-latest=false
[storage.default]
class-name="inmemory"
intervals=10
expire-group=604800
[evaluator.default]
class-name="caching"
expire-cache=1
[httpserver.default]
address="127.0.0.1:$http_port"
EOF
"$burrow_bin" -config-dir "$work" >"$work/burrow.log" 2>&1 </dev/null &
burrow_pid=$!
if ! wait_port "$http_port" 60 "$burrow_pid"; then
  echo "burrow: Burrow did not listen on $http_port within 60s" >&2
  dump
  exit 1
fi

# Poll the lag until Burrow reports the group with total lag 40. Burrow
# drops offsets for partitions its cluster module has not yet seen, so the
# same offset is committed again now and then until it shows.
url="http://127.0.0.1:$http_port/v3/kafka/klog/consumer/$group/lag"
deadline=$((SECONDS + 90))
next_commit=$((SECONDS + 5))
last=
while [ "$SECONDS" -lt "$deadline" ]; do
  if ! kill -0 "$burrow_pid" 2>/dev/null; then
    echo "burrow: Burrow exited" >&2
    dump
    exit 1
  fi
  last=$(curl -sf "$url" || true)
  if [ -n "$last" ] && /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.argv[1])["status"]
ok = s["status"] != "NOTFOUND" and s["totallag"] == 40 and len(s["partitions"]) == 1 \
    and s["partitions"][0]["end"]["offset"] == 60
sys.exit(0 if ok else 1)' "$last"; then
    echo "burrow: group $group reported with total lag 40"
    exit 0
  fi
  if [ "$SECONDS" -ge "$next_commit" ]; then
    k group seek "$group" --to 60 --topics "$topic" --yes >/dev/null 2>&1 || true
    next_commit=$((SECONDS + 5))
  fi
  sleep 0.5
done
echo "burrow: no total lag 40 for group $group within 90s; last answer: $last" >&2
if grep -q 'failed to fetch offsets from broker' "$work/burrow.log"; then
  echo "burrow: Burrow's cluster module cannot list broker offsets (it sends ListOffsets v0)" >&2
fi
dump
exit 1
