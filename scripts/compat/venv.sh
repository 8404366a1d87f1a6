#!/usr/bin/env bash
# The Python virtualenv of the compat matrix's PyPI clients (confluent-kafka
# with its bundled librdkafka, aiokafka), pinned by requirements.txt here.
#
#   scripts/compat/venv.sh [--no-install]   # prints the virtualenv's python
#
# Reuses the virtualenv when it was built from the same requirements.txt
# with the same base interpreter (.complete holds the hash of both) and
# still imports both clients; otherwise rebuilds it: python3 -m venv, then
# pip install from PyPI, wheels only (confluent-kafka's sdist would need
# librdkafka's headers). The base interpreter is the first of python3 on
# PATH and /usr/bin/python3 that is 3.10 or newer (aiokafka 0.14 needs it)
# and has the venv and ensurepip modules (on Debian, /usr/bin/python3 needs
# the python3-venv package; scripts/test.sh installs it). Progress and errors go to stderr; exits 1 when no
# virtualenv could be made (no such interpreter, or PyPI unreachable).
# --no-install only reuses: without a complete virtualenv it exits 1 and
# installs nothing (run.sh passes it when KLOG_SKIP_PIP=1).
#
# Environment:
#   KLOG_COMPAT_VENV         the virtualenv (default .cache/compat-venv in the
#                            repository root)
#   KLOG_COMPAT_PIP_TIMEOUT  seconds pip install may take (default 300)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${KLOG_COMPAT_VENV:-$root/.cache/compat-venv}
req=$here/requirements.txt
pip_timeout=${KLOG_COMPAT_PIP_TIMEOUT:-300}
install=1
case ${1:-} in
--no-install) install=0 ;;
"") ;;
*)
  echo "usage: venv.sh [--no-install]" >&2
  exit 2
  ;;
esac

say() { echo "venv: $*" >&2; }

base=""
for py in python3 /usr/bin/python3; do
  command -v "$py" >/dev/null || continue
  if "$py" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    base=$("$py" -c 'import sys; print(sys.executable)')
    break
  fi
done
if [ -z "$base" ]; then
  say "no python3 3.10+ with the venv and ensurepip modules (python3 on PATH, /usr/bin/python3; Debian: apt-get install python3-venv)"
  exit 1
fi

want=$( (cat "$req"; echo "$base"; "$base" -VV) | sha256sum | cut -d' ' -f1)
if [ -f "$venv/.complete" ] && [ "$(cat "$venv/.complete")" = "$want" ] &&
  "$venv/bin/python" -c 'import confluent_kafka, aiokafka' 2>/dev/null; then
  say "reusing $venv"
  echo "$venv/bin/python"
  exit 0
fi

if [ "$install" -eq 0 ]; then
  say "no complete virtualenv at $venv, and --no-install (KLOG_SKIP_PIP=1) builds none"
  exit 1
fi
t=$SECONDS
say "building $venv from $base ($("$base" -V 2>&1)) and $req"
rm -rf "$venv"
mkdir -p "$(dirname "$venv")" || { say "cannot create $(dirname "$venv")"; exit 1; }
if ! timeout -k 10 120 "$base" -m venv "$venv" >&2; then
  say "$base -m venv $venv failed"
  rm -rf "$venv"
  exit 1
fi
rc=0
timeout -k 10 "$pip_timeout" "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --no-input --retries 2 --timeout 30 --only-binary=:all: -r "$req" >&2 || rc=$?
if [ "$rc" -ne 0 ]; then
  [ "$rc" -eq 124 ] && say "pip install timed out after ${pip_timeout}s"
  say "pip install -r $req failed (exit $rc): is PyPI reachable?"
  rm -rf "$venv"
  exit 1
fi
if ! "$venv/bin/python" -c 'import confluent_kafka, aiokafka' >&2; then
  say "the new virtualenv does not import confluent_kafka and aiokafka"
  rm -rf "$venv"
  exit 1
fi
echo "$want" >"$venv/.complete"
say "built $venv in $((SECONDS - t))s: $("$venv/bin/python" -m pip freeze --disable-pip-version-check | paste -sd' ')"
echo "$venv/bin/python"
