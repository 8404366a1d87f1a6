#!/usr/bin/env bash
# Smoke test with kcat (librdkafka): metadata lists the broker and the topic,
# produce keyed records, consume them back to the end, compare.
#   BROKERS=127.0.0.1:PORT scripts/smoke/kcat.sh
set -euo pipefail
: "${BROKERS:?set BROKERS to the broker address}"
command -v kcat >/dev/null || { echo "kcat not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
topic="smoke-kcat-$$-$RANDOM"

# step NAME CMD...: run a kcat step, saying which one failed and why.
step() {
  local name=$1 rc=0
  shift
  "$@" 2>"$work/stderr.txt" || rc=$?
  if [ "$rc" -ne 0 ]; then
    [ "$rc" -eq 124 ] && name="$name (timed out)"
    echo "kcat: $name failed, exit $rc; its stderr (last 20 lines):" >&2
    tail -n 20 "$work/stderr.txt" >&2
    exit 1
  fi
}

{
  for i in $(seq 1 200); do
    echo "key-$i;value $i with spaces and punctuation (!?,.) and json {\"n\":$i}"
  done
  echo "k-utf8;héllo wörld ✓"
  echo "same-key;first"
  echo "same-key;second"
} >"$work/in.txt"

# Produce (acks=all; the topic is auto-created on first use).
step "produce (-P)" timeout 60 kcat -b "$BROKERS" -P -t "$topic" -p 0 -K ';' -X request.required.acks=-1 <"$work/in.txt"

# Metadata: the broker and the new topic are listed.
step "metadata (-L)" timeout 30 kcat -b "$BROKERS" -L >"$work/meta.txt"
if ! grep -Eq "broker [0-9]+ at ${BROKERS%%,*}" "$work/meta.txt"; then
  echo "kcat -L does not list broker ${BROKERS%%,*}:" >&2
  cat "$work/meta.txt" >&2
  exit 1
fi
if ! grep -q "topic \"$topic\" with [1-9][0-9]* partitions" "$work/meta.txt"; then
  echo "kcat -L does not list topic $topic:" >&2
  cat "$work/meta.txt" >&2
  exit 1
fi

# Consume from the beginning; -e exits at the end of the partition.
step "consume to the end (-C -e)" timeout 30 kcat -b "$BROKERS" -C -t "$topic" -p 0 -o beginning -e -f '%k;%s\n' >"$work/out.txt"
if ! diff -u "$work/in.txt" "$work/out.txt" >"$work/diff.txt"; then
  echo "consumed records differ from produced ones:" >&2
  head -n 40 "$work/diff.txt" >&2
  exit 1
fi
echo "kcat: $(wc -l <"$work/out.txt") records round-tripped through $topic"
