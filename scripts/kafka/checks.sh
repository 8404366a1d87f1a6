# shellcheck shell=bash
# The argument parsing and the check runner that scripts/kafka/tools.sh and
# klogcmds.sh share. Source it, call check_args, then set check_prefix (the word before "/" in every line
# printed). Each check is a function that returns non-zero after setting
# why; the command under test has left rc (its exit code) and e (its
# stderr). A check whose name has a reason in the associative array
# known_diff still runs: its failure prints KNOWN-DIFF with that reason,
# not FAIL, and its success FIXED, so the entry can go.

# check_args NAME ARGS... parses the arguments both scripts take,
# BROKERS [--target klog|kafka] [--out DIR] [--secure DIR], into brokers,
# target (default kafka), out and secure_dir (tools.sh's security checks);
# anything else exits 2 with NAME's usage line.
# shellcheck disable=SC2034 # out and secure_dir are the caller's
check_args() {
  local name=$1
  shift
  brokers=${1:-}
  [ -n "$brokers" ] || check_usage "$name"
  shift
  target=kafka
  out=''
  secure_dir=''
  while [ $# -gt 0 ]; do
    case $1 in
    --target) target=${2:-}; shift 2 || check_usage "$name" ;;
    --out) out=${2:-}; shift 2 || check_usage "$name" ;;
    --secure) secure_dir=${2:-}; shift 2 || check_usage "$name" ;;
    *) check_usage "$name" ;;
    esac
  done
  case $target in klog | kafka) ;; *) check_usage "$name" ;; esac
}
check_usage() { echo "usage: $1 BROKERS [--target klog|kafka] [--out DIR] [--secure DIR]" >&2; exit 2; }

passed=0
failed=0
known=0
check_prefix=${check_prefix:-check}
declare -A known_diff=()

# check NAME FUNC runs FUNC and prints one PASS, FAIL, KNOWN-DIFF or FIXED
# line for it.
check() {
  local name=$1 reason=${known_diff[$1]:-}
  why=''
  if "$2"; then
    if [ -n "$reason" ]; then
      echo "FIXED $check_prefix/$name: passes now; remove it from the known differences ($reason)"
    else
      echo "PASS $check_prefix/$name"
    fi
    passed=$((passed + 1))
  elif [ -n "$reason" ]; then
    echo "KNOWN-DIFF $check_prefix/$name: $why ($reason)"
    known=$((known + 1))
  else
    echo "FAIL $check_prefix/$name: $why"
    failed=$((failed + 1))
  fi
}

# ok_rc: the last command exited 0, else why says so with its stderr's end
# (Java stack frames left out).
# shellcheck disable=SC2154 # rc and e are the caller's: its runner sets them
ok_rc() {
  [ "$rc" -eq 0 ] && return 0
  why="exit $rc: $(grep -v '^\s*at ' <<<"$e" | tail -n 3 | tr '\n' ' ')"
  return 1
}
