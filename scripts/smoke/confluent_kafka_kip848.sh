#!/usr/bin/env bash
# The consumer group protocol of KIP-848 (group.protocol=consumer) with
# confluent-kafka-python. Exits 77 (skipped) when librdkafka is older than 2.10.
#   BROKERS=127.0.0.1:PORT scripts/smoke/confluent_kafka_kip848.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
exec timeout 60 /usr/bin/python3 "$(dirname "$0")/confluent_kafka_groups.py" "$BROKERS" kip848
