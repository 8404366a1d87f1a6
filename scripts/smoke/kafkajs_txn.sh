#!/usr/bin/env bash
# Transactions with kafkajs: commit and abort seen through read_committed and
# read_uncommitted consumers, and consume-transform-produce with sendOffsets.
# kafkajs comes from "npm ci" in scripts/ (scripts/test.sh runs it);
# without it the test is skipped outside CI.
#   BROKERS=127.0.0.1:PORT scripts/smoke/kafkajs_txn.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v node >/dev/null || [ ! -d "$root/scripts/node_modules/kafkajs" ]; then
  if [ "${CI:-}" = true ]; then
    echo "kafkajs-txn: node or kafkajs missing; run \"npm ci\" in $root/scripts" >&2
    exit 1
  fi
  echo "SKIP kafkajs: node or kafkajs not installed (run \"npm ci\" in $root/scripts)"
  exit 77
fi
exec timeout 150 node "$root/scripts/smoke/kafkajs_txn.js" "$BROKERS"
