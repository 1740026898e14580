#!/usr/bin/env bash
# The DTrace example's A/B/C call flow (a() calls b() twice and c() once, b() calls c() twice)
# doing fixed work in a JVM started with -XX:+DTraceMethodProbes, traced by
# jmethodtime -p PID --package demo/abc. The JVM first times its own calls
# untraced; the script prints those times next to the report. Needs root and a build.
# usage: examples/abc-demo.sh [ITERATIONS] [C_US] [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
iterations=${1:-5000}
c_us=${2:-5}
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
# The JVM scales its work so one c() takes C_US, times a(), b() and c() untraced,
# prints READY, then waits for a line on stdin before running ITERATIONS calls of a().
"$java" -XX:+DTraceMethodProbes -cp "$build/examples/classes" demo.abc.FixedWork "$iterations" "$c_us" \
  <"$work/go" >"$work/jvm.out" &
jvm_pid=$!
exec 3>"$work/go"
for _ in $(seq 300); do grep -q READY "$work/jvm.out" && break; sleep 0.1; done

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
done_line=$(grep DONE "$work/jvm.out" || true)
if [ -z "$done_line" ]; then echo "JVM: no DONE line" >&2; exit 1; fi
value() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$done_line"; }
awk -v n="$iterations" -v a="$(value a_ns)" -v b="$(value b_ns)" -v c="$(value c_ns)" -v t="$(value traced_a_ns)" 'BEGIN {
  printf "JVM, untraced, per call: a %.1f us, b %.1f us, c %.1f us; x calls: a %.1f ms (%d), b %.1f ms (%d), c %.1f ms (%d)\n",
    a / 1e3, b / 1e3, c / 1e3, n * a / 1e6, n, 2 * n * b / 1e6, 2 * n, 5 * n * c / 1e6, 5 * n
  printf "JVM, traced: a() took %.1f us per call (the probes'"'"' traps included)\n", t / 1e3
}' >&2
