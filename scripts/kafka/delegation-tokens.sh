#!/usr/bin/env bash
# Kafka 4.4's kafka-delegation-tokens (org.apache.kafka.tools.DelegationTokenCommand)
# against a klog up --secure node, with the admin's client config that
# klog up --secure wrote: admin creates a token renewable by app and one
# for app (KIP-373), describes them, app's token logs in (kafka-topics
# with ScramLoginModule tokenauth=true), app renews admin's token, and
# admin expires it. Prints one line per check, "PASS tokens/NAME" or
# "FAIL tokens/NAME: why", and exits 1 if any failed.
#
#   [KLOG_BIN=PATH] scripts/kafka/delegation-tokens.sh
#
# KLOG_BIN names a klog binary to run; without it klog is built.
#
# The tools run with the jars of scripts/kafka/kafka.sh (fetched on first
# use, KLOG_KAFKA_CACHE as there).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
failed=0
export XDG_STATE_HOME=$work/state XDG_DATA_HOME=$work/data
cleanup() {
  [ -x "$work/klog" ] && "$work/klog" down --data-dir "$work/klog-data" >/dev/null 2>&1
  if [ "$failed" = 0 ]; then rm -rf "$work"; else echo "tokens: outputs kept in $work" >&2; fi
}
trap cleanup EXIT
if [ -n "${KLOG_BIN:-}" ]; then
  ln -s "$KLOG_BIN" "$work/klog" || exit 1
else
  (cd "$root" && go build -o "$work/klog" ./cmd/klog) || exit 1
fi
"$work/klog" up --secure --detach --any-port --data-dir "$work/klog-data" >"$work/up.out" 2>&1 || {
  cat "$work/up.out" >&2
  exit 1
}
bootstrap=$(sed -n 's/^SASL_SSL_BROKERS=//p' "$work/up.out")
admin=$work/klog-data/secure/admin.properties

# tokens NAME ARGS... runs kafka-delegation-tokens as admin into $out.
tokens() {
  local name=$1
  shift
  out=$(timeout -k 5 120 "$root/scripts/kafka/kafka.sh" tool org.apache.kafka.tools.DelegationTokenCommand \
    --bootstrap-server "$bootstrap" "$@" 2>"$work/$name.err")
  rc=$?
  echo "$out" >"$work/$name.out"
}
# check NAME COND WHY prints the check's line.
check() {
  if eval "$2"; then
    echo "PASS tokens/$1"
  else
    echo "FAIL tokens/$1: $3"
    failed=1
  fi
}
# field TOKENID COLUMN is a column of a token's row in $out.
field() { echo "$out" | awk -v id="$1" -v col="$2" '$1 == id { print $col }'; }

tokens create --command-config "$admin" --create --max-life-time-period -1 --renewer-principal User:app
admin_id=$(echo "$out" | sed -n 's/^Created delegation token with tokenId : //p')
admin_hmac=$(field "$admin_id" 2)
check create '[ $rc = 0 ] && [ -n "$admin_id" ] && [ "$(field "$admin_id" 3)" = User:admin ] && [ "$(field "$admin_id" 5)" = "[User:app]" ]' \
  "exit $rc, token $admin_id"

tokens create-for-app --command-config "$admin" --create --max-life-time-period -1 --owner-principal User:app
app_id=$(echo "$out" | sed -n 's/^Created delegation token with tokenId : //p')
app_hmac=$(field "$app_id" 2)
check create-for-app '[ $rc = 0 ] && [ "$(field "$app_id" 3)" = User:app ] && [ "$(field "$app_id" 4)" = User:admin ]' \
  "exit $rc, owner $(field "$app_id" 3), requester $(field "$app_id" 4)"

tokens describe --command-config "$admin" --describe --owner-principal User:app
check describe '[ $rc = 0 ] && echo "$out" | grep -q "Total number of tokens : 2" && [ -n "$(field "$admin_id" 2)" ] && [ -n "$(field "$app_id" 2)" ]' \
  "exit $rc: app's and the one app renews, both"

# app's token logs in: kafka-topics as User:app, through the token.
sed '/^sasl.jaas.config=/d' "$admin" >"$work/token.properties"
printf 'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s" tokenauth="true";\n' \
  "$app_id" "$app_hmac" >>"$work/token.properties"
out=$(timeout -k 5 120 "$root/scripts/kafka/kafka.sh" tool topics --bootstrap-server "$bootstrap" \
  --command-config "$work/token.properties" --create --topic tokens-orders 2>"$work/login.err")
rc=$?
echo "$out" >"$work/login.out"
check login '[ $rc = 0 ] && echo "$out" | grep -q "Created topic tokens-orders"' "exit $rc"
tokens describe-over-token --command-config "$work/token.properties" --describe
check describe-over-token '[ $rc != 0 ] && grep -qiE "DelegationTokenRequestNotAllowed|not allowed" "$work/describe-over-token.err"' \
  "exit $rc: token requests over a token-authenticated connection are refused"

sed 's/username="admin"/username="app"/' "$admin" >"$work/app.properties"
app_password=$(sed -n 's/.*"app": "\([^"]*\)".*/\1/p' "$work/klog-data/secure/users.json")
sed -i "s/password=\"[^\"]*\"/password=\"$app_password\"/" "$work/app.properties"
tokens renew --command-config "$work/app.properties" --renew --hmac "$admin_hmac" --renew-time-period 60000
check renew '[ $rc = 0 ] && echo "$out" | grep -q "Completed renew operation"' "exit $rc: app renews the token it is a renewer of"

tokens expire --command-config "$admin" --expire --hmac "$admin_hmac" --expiry-time-period -1
check expire '[ $rc = 0 ] && echo "$out" | grep -q "Completed expire operation"' "exit $rc"
tokens describe-after --command-config "$admin" --describe --owner-principal User:admin
check describe-after '[ $rc = 0 ] && echo "$out" | grep -q "Total number of tokens : 0"' "exit $rc: the expired token is gone"
exit $failed
