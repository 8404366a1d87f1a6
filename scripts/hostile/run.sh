#!/usr/bin/env bash
# klog's hostile-client tier: one bounded probe per finding of issue 9, each
# against its own "klog up" process (see scripts/hostile/main.go). Prints one
# PROBE line per probe and exits non-zero if any failed; a failed probe keeps
# its node's data directory and logs and names it on its line.
#
#   scripts/hostile/run.sh [KLOG_BIN] [-probe name,name] [-list]
#   scripts/hostile/run.sh [KLOG_BIN] -bootstrap HOST:PORT [-pid PID]
#
# The second form runs the decode-bound probe's attack against a broker it
# did not start (the Kafka 4.4 reference) and prints the same figures.
#
# Without KLOG_BIN, klog is built first. Takes about 2 minutes on 2 cores.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
klog_bin=
if [ $# -gt 0 ] && [ -x "$1" ] && [ ! -d "$1" ]; then
  klog_bin=$1
  shift
else
  klog_bin=$bindir/klog
  go build -o "$klog_bin" ./cmd/klog || exit 1
fi
go build -o "$bindir/hostile" ./scripts/hostile || exit 1
"$bindir/hostile" -klog "$klog_bin" "$@"
