# shellcheck shell=bash
# The Maven build of the compat suite's Java modules (scripts/compat/java,
# scripts/compat/streams), shared by run.sh and streams.sh. Source this file;
# it defines functions only.

# compat_mvn_build POM DIR LOG TIMEOUT compiles the module of POM into DIR
# (DIR/classes, and DIR/cp.txt: its dependency classpath), logging to LOG:
# offline first (a warm ~/.m2 needs no network), online when that fails (a
# cold ~/.m2). Each attempt is bounded by TIMEOUT seconds. Returns Maven's
# exit code (124 on a timeout, also written to LOG).
compat_mvn_build() {
  local pom=$1 dir=$2 log=$3 limit=$4 rc=0
  local args=(-B -q -f "$pom" "-Dcompat.build.dir=$dir"
    compile dependency:build-classpath "-Dmdep.outputFile=$dir/cp.txt")
  timeout -k 10 "$limit" mvn -o "${args[@]}" >"$log" 2>&1 && return 0
  echo "=== the offline build failed (a cold ~/.m2?): building online" >>"$log"
  timeout -k 10 "$limit" mvn "${args[@]}" >>"$log" 2>&1 || rc=$?
  [ "$rc" -eq 124 ] && echo "ERROR mvn timed out after ${limit}s" >>"$log"
  return "$rc"
}
