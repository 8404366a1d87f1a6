#!/usr/bin/env bash
# Compares two compat matrices cell by cell: klog's and Apache Kafka's, each
# written by run.sh with KLOG_COMPAT_RESULTS=FILE.
#
#   scripts/compat/compare.sh KLOG_RESULTS KAFKA_RESULTS
#
# Prints one line per cell whose status differs (client, scenario, klog's
# status, Kafka's), then "compare: N cells alike, N differ, N documented".
# A difference listed in documented_diff below (docs/compatibility.md
# gives each its reason) prints as DOCUMENTED and fails nothing; any
# other difference, or a cell one file has and the other lacks, is a FAIL
# and the script exits 1. A documented difference that no longer differs
# prints FIXED: remove it from the list. Exits 2 on a usage error.
set -uo pipefail

# client/scenario -> why klog's result differs from Kafka 4.4's on purpose.
declare -A documented_diff=()

if [ $# -ne 2 ]; then
  echo "usage: compare.sh KLOG_RESULTS KAFKA_RESULTS" >&2
  exit 2
fi
for f in "$1" "$2"; do
  if [ ! -s "$f" ]; then
    echo "compare.sh: $f is missing or empty (run.sh with KLOG_COMPAT_RESULTS=$f writes it)" >&2
    exit 2
  fi
done

declare -A klog kafka
cells=()
# Each line: CLIENT SCENARIO STATUS.
while read -r c s st; do
  [ -n "${klog[$c/$s]:-}" ] || cells+=("$c/$s")
  klog[$c/$s]=$st
done <"$1"
while read -r c s st; do
  [ -n "${klog[$c/$s]:-}" ] || [ -n "${kafka[$c/$s]:-}" ] || cells+=("$c/$s")
  kafka[$c/$s]=$st
done <"$2"

alike=0
differ=0
documented=0
header() {
  [ $((differ + documented)) -eq 0 ] && printf '%-24s %-26s %-6s %-6s\n' client scenario klog kafka
  return 0
}
for cell in "${cells[@]}"; do
  a=${klog[$cell]:-none}
  b=${kafka[$cell]:-none}
  reason=${documented_diff[$cell]:-}
  if [ "$a" = "$b" ]; then
    alike=$((alike + 1))
    [ -n "$reason" ] && echo "FIXED $cell: $a on both now; remove it from documented_diff ($reason)"
    continue
  fi
  header
  if [ -n "$reason" ]; then
    printf '%-24s %-26s %-6s %-6s DOCUMENTED: %s\n' "${cell%%/*}" "${cell#*/}" "$a" "$b" "$reason"
    documented=$((documented + 1))
  else
    printf '%-24s %-26s %-6s %-6s FAIL: not a documented difference\n' "${cell%%/*}" "${cell#*/}" "$a" "$b"
    differ=$((differ + 1))
  fi
done
echo "compare: $alike cells alike, $differ differ, $documented documented"
[ "$differ" -eq 0 ]
