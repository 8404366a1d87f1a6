#!/usr/bin/env bash
# Consumer groups with kafkajs: two members share a 4-partition topic, each
# record is consumed once with its headers, offsets are committed, and a
# restarted member resumes at them. kafkajs comes from "npm ci" in
# scripts/ (scripts/test.sh runs it); without it the test is skipped outside CI.
#   BROKERS=127.0.0.1:PORT scripts/smoke/kafkajs_groups.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v node >/dev/null || [ ! -d "$root/scripts/node_modules/kafkajs" ]; then
  if [ "${CI:-}" = true ]; then
    echo "kafkajs-groups: node or kafkajs missing; run \"npm ci\" in $root/scripts" >&2
    exit 1
  fi
  echo "SKIP kafkajs: node or kafkajs not installed (run \"npm ci\" in $root/scripts)"
  exit 77
fi
exec timeout 120 node "$root/scripts/smoke/kafkajs_groups.js" "$BROKERS"
