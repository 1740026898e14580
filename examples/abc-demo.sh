#!/usr/bin/env bash
# The seed's A/B/C call flow in a JVM started with -XX:+DTraceMethodProbes,
# traced by jmethodtime -p PID --package demo/abc. Needs root and a build.
# usage: examples/abc-demo.sh [ITERATIONS] [UNIT_US] [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
iterations=${1:-300}
unit_us=${2:-10}
shift $(( $# < 2 ? $# : 2 ))
java=${JAVA:-java}

work=$(mktemp -d)
jvm_pid=""
cleanup() {
  [ -n "$jvm_pid" ] && kill "$jvm_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkfifo "$work/go"
# The JVM prints READY, then waits for a line on stdin before running the flow.
"$java" -XX:+DTraceMethodProbes -cp "$build/examples/classes" demo.abc.Flow "$iterations" "$unit_us" \
  <"$work/go" >"$work/jvm.out" &
jvm_pid=$!
exec 3>"$work/go"
for _ in $(seq 100); do grep -q READY "$work/jvm.out" && break; sleep 0.1; done

"$build/jmethodtime" -p "$jvm_pid" --package demo/abc "$@" 2>"$work/jmt.err" &
jmt_pid=$!
for _ in $(seq 100); do grep -q '^Tracing' "$work/jmt.err" 2>/dev/null && break; sleep 0.1; done
cat "$work/jmt.err" >&2
echo go >&3
exec 3>&-
wait "$jvm_pid" || true
jvm_pid=""
wait "$jmt_pid"
grep -v '^Tracing' "$work/jmt.err" >&2 || true
echo "JVM: $(grep DONE "$work/jvm.out" || echo 'no DONE line')" >&2
