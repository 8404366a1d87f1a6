#!/usr/bin/env bash
# Smoke test with confluent-kafka-python. Debian's client lives under
# /usr/bin/python3, not necessarily the python3 first on PATH.
#   BROKERS=127.0.0.1:PORT scripts/smoke/confluent_kafka.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
exec timeout 180 /usr/bin/python3 "$(dirname "$0")/confluent_kafka_smoke.py" "$BROKERS"
