#!/usr/bin/env bash
# Smoke test with kafka-python (Debian's python3-kafka under /usr/bin/python3).
#   BROKERS=127.0.0.1:PORT scripts/smoke/kafka_python.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
exec timeout 180 /usr/bin/python3 "$(dirname "$0")/kafka_python_smoke.py" "$BROKERS"
