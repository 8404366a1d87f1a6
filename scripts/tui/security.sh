#!/usr/bin/env bash
# klog tui against klog up --secure, as its admin: the users, the ACLs
# and the client quotas screens, and in the events a produce the
# authorizer denied and a failed login, each saying who, from where and
# what decided. Needs tmux (exit 77 without, as e2e.sh).
#   scripts/tui/security.sh [KLOG_BIN]      (default: go build ./cmd/klog)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../smoke/lib.sh
source "$root/scripts/smoke/lib.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"

tui_setup security "${1:-}"
security_cleanup() {
  "$klog" down --data-dir "$work/data" >/dev/null 2>&1 || true
  tui_cleanup
}
trap security_cleanup EXIT

"$klog" up --secure --any-port --detach --data-dir "$work/data" >"$work/up.out" 2>&1
secure=$work/data/secure
admin=("$klog" --command-config "$secure/admin.properties")
app=("$klog" --command-config "$secure/app.properties")

"${admin[@]}" topic create tui-payments -p 1 >/dev/null
"${admin[@]}" acl create --deny User:app --operation WRITE --topic tui-payments >/dev/null
"${admin[@]}" quota set --user app producer_byte_rate=1048576 >/dev/null
# app may not write tui-payments: TOPIC_AUTHORIZATION_FAILED, three times
# (one event).
for _ in 1 2 3; do
  if echo x | "${app[@]}" produce tui-payments >/dev/null 2>&1; then
    echo "FAIL app wrote tui-payments despite the DENY ACL" >&2
    exit 1
  fi
done
# A wrong password: SASL_AUTHENTICATION_FAILED.
sed 's/password="[^"]*"/password="wrong"/' "$secure/app.properties" >"$work/wrong.properties"
if "$klog" --command-config "$work/wrong.properties" topic list >/dev/null 2>&1; then
  echo "FAIL a wrong password logged in" >&2
  exit 1
fi

start_tui "${admin[@]}" tui --refresh 500ms
expect "the cluster screen over SASL_SSL" "cluster id"
keys : users Enter
expect "the users, mechanisms and iterations" "^>? +admin +SCRAM-SHA-512 +[0-9]+"
expect "app among them" "^>? +app +SCRAM-SHA-512 +[0-9]+"
keys : acls Enter
expect "the ACLs, app's DENY among them" "User:app +DENY +WRITE +TOPIC +LITERAL +tui-payments"
keys : quotas Enter
expect "the client quotas" "user=app +producer_byte_rate +1048576"
keys : events Enter
expect "the denied produce" "authorization_denied +topic tui-payments +principal=User:app operation=WRITE"
expect "the failed login" "authentication_failed +login User:app +principal=User:app mechanism=SCRAM-SHA-512 reason=\"wrong proof\""
quit_tui
