#!/usr/bin/env bash
# Consumer groups with confluent-kafka-python (librdkafka): eager (range) and
# cooperative-sticky rebalances with commits on revoke and a resume from the
# committed offsets, then a static member restarting without a rebalance.
#   BROKERS=127.0.0.1:PORT scripts/smoke/confluent_kafka_groups.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
exec timeout 120 /usr/bin/python3 "$(dirname "$0")/confluent_kafka_groups.py" "$BROKERS" eager cooperative static
