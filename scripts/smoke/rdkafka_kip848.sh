#!/usr/bin/env bash
# The KIP-848 consumer group protocol with librdkafka 2.11 (bundled by
# confluent-kafka-go; Debian's librdkafka is too old for it): two members
# with group.protocol=consumer share a topic, one leaves, commits hold.
#   BROKERS=127.0.0.1:PORT scripts/smoke/rdkafka_kip848.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${KLOG_SMOKE_BIN:-$root/.smoke-bin}
mkdir -p "$bin"
(cd "$root" && go build -o "$bin/rdkafka848" ./scripts/smoke/rdkafka848)
exec timeout 120 "$bin/rdkafka848" "$BROKERS"
