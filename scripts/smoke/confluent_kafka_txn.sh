#!/usr/bin/env bash
# Transactions with confluent-kafka-python (librdkafka): commit and abort seen
# through read_committed and read_uncommitted consumers, zombie fencing, and
# consume-transform-produce with send_offsets_to_transaction.
#   BROKERS=127.0.0.1:PORT scripts/smoke/confluent_kafka_txn.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
exec timeout 180 /usr/bin/python3 "$(dirname "$0")/confluent_kafka_txn.py" "$BROKERS" commit-abort fencing ctp
