#!/usr/bin/env bash
# The probes switched on at run time: a JVM started WITHOUT -XX:+DTraceMethodProbes runs the
# DTrace example's call flow (demo.warm.Rounds: a() calls b() twice and c() once, b() calls c() twice;
# work unit 100: about 5.6 us per a()), JIT-compiled before anything attaches. jmethodtime -p PID --package demo/warm/tree switches the
# probes on for that package only, counts a round of calls exactly and switches them off again;
# --list shows the JVM's state before, during and after. Needs root and a build.
# usage: examples/switch-demo.sh [CALLS=100000] [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
calls=${1:-100000}
shift $(( $# < 1 ? $# : 1 ))
java=${JAVA:-java}

work=$(mktemp -d)
jvm_pid="" jmt_pid=""
cleanup() {
  [ -n "$jmt_pid" ] && kill "$jmt_pid" 2>/dev/null || true
  [ -n "$jvm_pid" ] && kill "$jvm_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkfifo "$work/in"
"$java" -cp "$build/examples/classes" demo.warm.Rounds 50000 100 <"$work/in" >"$work/jvm.out" &
jvm_pid=$!
exec 3>"$work/in"
for _ in $(seq 300); do grep -q READY "$work/jvm.out" && break; sleep 0.1; done
list() { "$build/jmethodtime" --list | awk -v p="$jvm_pid" 'NR == 1 || $1 == p'; }
echo "--- before: started without the flag, warm" >&2
list >&2

"$build/jmethodtime" -p "$jvm_pid" --package demo/warm/tree "$@" 2>"$work/jmt.err" &
jmt_pid=$!
for _ in $(seq 900); do grep -q '^Tracing' "$work/jmt.err" 2>/dev/null && break; sleep 0.1; done
cat "$work/jmt.err" >&2
echo "--- during the trace" >&2
list >&2
echo "$calls" >&3
for _ in $(seq 600); do grep -q "DONE calls=$calls" "$work/jvm.out" && break; sleep 0.1; done
kill -INT "$jmt_pid"
wait "$jmt_pid"
jmt_pid=""
grep -v '^Tracing\|^Waiting\|^Switched' "$work/jmt.err" >&2 || true
echo "--- after: the probes off (the report's header says which code was left to compile again)" >&2
list >&2
echo "The JVM ran $calls calls of a() during the trace: a $calls, b $((2 * calls)), c $((5 * calls))" >&2
