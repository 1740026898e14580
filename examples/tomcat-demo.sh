#!/usr/bin/env bash
# A real application server: Debian's Tomcat 10 with its examples webapp (examples/tomcat/tomcat.sh,
# -XX:+DTraceMethodProbes), loaded by ab (apache2-utils) with REQUESTS requests of the
# HelloWorldExample servlet, CONCURRENCY at a time. The JVM warms up untraced, then the same load
# runs untraced (the process's CPU time per request, from /proc/PID/stat, and ab's time per
# request), then traced by jmethodtime -p PID with the given options (default: --package
# org/apache/catalina). Prints the report, then the untraced figures to read it against.
# usage: examples/tomcat-demo.sh [REQUESTS] [CONCURRENCY] [jmethodtime options...]   (root, after the build)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
requests=${1:-2000}
concurrency=${2:-1}
shift $(($# < 2 ? $# : 2))
options=("$@")
((${#options[@]})) || options=(--package org/apache/catalina)
command -v ab >/dev/null || { echo "tomcat-demo.sh: ab not found: apt-get install apache2-utils" >&2; exit 1; }

# shellcheck source=tomcat/tomcat.sh
source "$root/examples/tomcat/tomcat.sh"
jmt_pid=""
cleanup() {
  [ -n "$jmt_pid" ] && kill -INT "$jmt_pid" 2>/dev/null && wait "$jmt_pid" 2>/dev/null
  tc_stop
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tc_start || exit 1

# cpu_ns PID: the process's CPU time so far (user and system, every thread).
cpu_ns() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' "/proc/$1/stat"
}
# load N C OUT: ab's output for N requests, C at a time; fails unless every request got a 200.
load() {
  ab -n "$1" -c "$2" "$TC_URL" >"$3" 2>&1 || { cat "$3" >&2; return 1; }
  grep -q '^Failed requests: *0' "$3" && ! grep -q '^Non-2xx' "$3" || { cat "$3" >&2; return 1; }
}

echo "Tomcat $TC_URL, pid $TC_PID; warming up (4000 requests, untraced)" >&2
load 4000 2 "$TC_DIR/warm.txt" || exit 1
before=$(cpu_ns "$TC_PID")
load "$requests" "$concurrency" "$TC_DIR/untraced.txt" || exit 1
untraced_cpu=$(( ($(cpu_ns "$TC_PID") - before) / requests ))
untraced_ms=$(awk '/^Time per request:.*\(mean\)$/ { print $4 }' "$TC_DIR/untraced.txt")

"$build/jmethodtime" -p "$TC_PID" "${options[@]}" 2>"$TC_DIR/jmt.err" &
jmt_pid=$!
for _ in $(seq 100); do grep -q '^Tracing' "$TC_DIR/jmt.err" 2>/dev/null && break; sleep 0.1; done
grep -q '^Tracing' "$TC_DIR/jmt.err" || { cat "$TC_DIR/jmt.err" >&2; exit 1; }
load "$requests" "$concurrency" "$TC_DIR/traced.txt" || exit 1
traced_ms=$(awk '/^Time per request:.*\(mean\)$/ { print $4 }' "$TC_DIR/traced.txt")
kill -INT "$jmt_pid"
wait "$jmt_pid"
status=$?
jmt_pid=""
cat "$TC_DIR/jmt.err" >&2
echo "Untraced, the same load ($requests requests, $concurrency at a time): Tomcat used $((untraced_cpu / 1000)) us of CPU per request; ab saw $untraced_ms ms per request ($traced_ms ms traced)" >&2
exit "$status"
