#!/usr/bin/env bash
# A producer over its producer_byte_rate quota, against klog and against
# Apache Kafka 4.4.0 side by side: both brokers at their default quota
# windows (quota.window.num 11 of quota.window.size.seconds 1), the same
# quota set with klog quota on the default client id, the same franz-go
# producer (klog bench produce, as fast as it can) for the same time.
# Prints, for each broker, klog bench's throughput and the throttle times
# its client was told, and the rate as a share of the quota.
#
#   scripts/kafka/quota.sh [--rate BYTES_PER_S] [--seconds N] [--only klog|kafka]
#
# Kafka's rate lets a client use at once what the quota allows over 10
# windows and then holds it back, so a run much shorter than a few minutes
# measures that burst as much as the quota: --seconds defaults to 120.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rate=1048576 seconds=120 only=
while [ $# -gt 0 ]; do
  case $1 in
  --rate) rate=$2; shift 2 ;;
  --seconds) seconds=$2; shift 2 ;;
  --only) only=$2; shift 2 ;;
  *) echo "usage: $0 [--rate BYTES_PER_S] [--seconds N] [--only klog|kafka]" >&2; exit 2 ;;
  esac
done
# shellcheck source=../smoke/lib.sh
. "$root/scripts/smoke/lib.sh"

work=$(mktemp -d)
kafka_dir=
cleanup() {
  smoke_stop_broker >/dev/null 2>&1 || true
  [ -z "$kafka_dir" ] || "$root/scripts/kafka/kafka.sh" stop "$kafka_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export XDG_STATE_HOME=$work/state XDG_DATA_HOME=$work/data
(cd "$root" && go build -o "$work/klog" ./cmd/klog)

# measure NAME BROKERS: sets the quota, runs the producer, prints a row.
measure() {
  local name=$1 brokers=$2
  "$work/klog" -b "$brokers" quota set --default-client-id "producer_byte_rate=$rate" >/dev/null
  "$work/klog" -b "$brokers" bench produce --topic quota-bench --size 1000 --duration "${seconds}s" \
    --format json >"$work/$name.json"
  python3 - "$name" "$rate" "$work/$name.json" <<'PY'
import json, sys
name, rate, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
r = json.load(open(path))
bps = r["bytes"] / r["elapsed_s"]
t = r.get("throttles") or {"count": 0, "total_ms": 0, "max_ms": 0}
mean = t["total_ms"] / t["count"] if t["count"] else 0
print(f"{name:6} {r['bytes']:>11} B in {r['elapsed_s']:7.1f} s  {bps:>10.0f} B/s  {bps/rate:5.3f} of the quota"
      f"  throttled {t['count']:>5} times, mean {mean:6.1f} ms, max {t['max_ms']:6.1f} ms")
PY
}

echo "producer_byte_rate=$rate, ${seconds} s, franz-go (klog bench produce), 1000-byte records"
if [ "$only" != kafka ]; then
  smoke_start_broker "$work/klog" "$work"
  measure klog "$SMOKE_BROKERS"
  smoke_stop_broker >/dev/null 2>&1
fi
if [ "$only" != klog ]; then
  out=$("$root/scripts/kafka/kafka.sh" start)
  kafka_dir=$(echo "$out" | sed -n 's/^KAFKA_RUN_DIR=//p')
  measure kafka "$(echo "$out" | sed -n 's/^BROKERS=//p')"
fi
