#!/usr/bin/env bash
# Consumer-group join, commit and resume with kafka-python (Debian's
# python3-kafka, which speaks old versions of the group APIs).
#   BROKERS=127.0.0.1:PORT scripts/smoke/kafka_python_groups.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
exec timeout 120 /usr/bin/python3 "$(dirname "$0")/kafka_python_groups.py" "$BROKERS"
