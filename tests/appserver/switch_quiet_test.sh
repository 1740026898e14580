#!/usr/bin/env bash
# The run-time switch on a quiet Tomcat 10 (Debian's JDK 17, started without
# -XX:+DTraceMethodProbes), traced with --class 'org.apache.catalina.*' --class HelloWorldExample
# while N requests run one at a time (ab -c 1), every trace quiet until "Tracing":
#
#  1. the reference: a Tomcat started with the flag, warmed, traced: its probe events per request;
#  2. a Tomcat without the flag, warmed, never traced: `jmethodtime standby -p` under traffic takes
#     the one-time deoptimization and waits for the hot code to compile again ("is ready"); then,
#     quiet, two traces in a row, each with traffic after its end while the end waits for the code
#     it deoptimized: exact counts of the request path, at most a quarter of the reference's probe
#     events per request, and no cold-code line;
#  3. a third trace ended with no traffic after it: its header says the code its end deoptimized
#     had not compiled again; the next trace (quiet) says in its header, in one line, that the
#     JVM's code was still interpreted, with the filtered-out probe events it cost;
#  4. a fresh Tomcat without the flag, warmed, no standby, quiet during the switch: the header's
#     one line, with the events, and exact counts.
# Every figure is printed; the servers are stopped and their directories removed whatever happens.
#
# usage: switch_quiet_test.sh JMETHODTIME SOURCE_DIR
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (something needed is missing, unless CI=true).
set -uo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

# shellcheck source=tomcat_test_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/tomcat_test_setup.sh" || exit 1
tomcat_test_setup switch-quiet-test "$@"
trap tomcat_test_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

n=${JMT_APPSERVER_REQUESTS:-1000}
filter=(--class 'org.apache.catalina.*' --class HelloWorldExample)

# wait_line FILE REGEX: until a line of FILE matches (at most 120 s, or jmethodtime's exit).
wait_line() {
  for _ in $(seq 1200); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    [ -n "$jmt_pid" ] && ! kill -0 "$jmt_pid" 2>/dev/null && break
    sleep 0.1
  done
  grep -q "$2" "$1" 2>/dev/null
}
# trace OUT END_TRAFFIC: a trace of the filter, quiet until "Tracing", then n requests; with
# END_TRAFFIC=yes, traffic from the moment its end waits for its deoptimized code until it exits.
trace() {
  local out=$1 end_traffic=$2
  "$jmt" -p "$TC_PID" --json -o "$out" "${filter[@]}" 2>"$out.err" &
  jmt_pid=$!
  wait_line "$out.err" '^Tracing' || { cat "$out.err" >&2; fail "jmethodtime did not attach"; }
  load "$n"
  kill -INT "$jmt_pid"
  if [ "$end_traffic" = yes ]; then
    wait_line "$out.err" "code deoptimized at the trace's end" && start_traffic
  fi
  wait "$jmt_pid" || { cat "$out.err" >&2; fail "jmethodtime exited with $?"; }
  jmt_pid=""
  stop_traffic
  sed 's/^/   /' "$out.err"
}
calls() {  # FILE CLASS METHOD
  jq --arg c "$2" --arg m "$3" '[.methods[] | select(.class == $c and .method == $m) | .calls] | add // 0' "$1"
}
# The request path: one call of each per request.
expect_request_path() {
  local row got
  for row in org/apache/catalina/connector/CoyoteAdapter:service org/apache/catalina/core/StandardEngineValve:invoke \
    org/apache/catalina/core/StandardHostValve:invoke org/apache/catalina/valves/ErrorReportValve:invoke \
    org/apache/catalina/core/StandardContextValve:invoke org/apache/catalina/core/StandardWrapperValve:invoke \
    HelloWorldExample:doGet; do
    got=$(calls "$1" "${row%%:*}" "${row#*:}")
    [ "$got" = "$n" ] || fail "$(basename "$1"): ${row/:/.}: $got calls for $n requests"
  done
}
per_request() { echo $(($(jq '.overhead.events' "$1") / n)); }
filtered_out() { jq '.overhead.events - .overhead.traced_events' "$1"; }

# --- 1. the reference: the flag at start ---------------------------------------------------------
tc_start || fail "Tomcat with the flag did not start"
load 3000
"$jmt" -p "$TC_PID" --json -o "$work/at_start.json" "${filter[@]}" 2>"$work/at_start.json.err" &
jmt_pid=$!
wait_line "$work/at_start.json.err" '^Tracing' || { cat "$work/at_start.json.err" >&2; fail "no trace"; }
load "$n"
kill -INT "$jmt_pid"; wait "$jmt_pid" || fail "the flag-at-start trace exited with $?"
jmt_pid=""
expect_request_path "$work/at_start.json"
at_start=$(per_request "$work/at_start.json")
note "flag at start: $at_start probe events per request"
tc_stop

# --- 2. standby under traffic, then two quiet traces ---------------------------------------------
TC_PROBES="" tc_start || fail "Tomcat without the flag did not start"
load 3000
start_traffic
"$jmt" standby -p "$TC_PID" >"$work/standby.txt" 2>"$work/standby.err" ||
  { cat "$work/standby.err" >&2; fail "standby failed"; }
stop_traffic
sed 's/^/   /' "$work/standby.txt"
grep -q "took its one-time deoptimization ahead of traces" "$work/standby.txt" || fail "standby took no deoptimization"
grep -q "^pid $TC_PID is ready: " "$work/standby.txt" || fail "standby did not say the JVM is ready"
sleep 2
for i in 1 2; do
  trace "$work/standby$i.json" yes
  expect_request_path "$work/standby$i.json"
  got=$(per_request "$work/standby$i.json")
  note "after standby, trace $i: $got probe events per request ($at_start with the flag at start), $n calls of each of the request path's 7 methods"
  ((got * 4 <= at_start)) || fail "trace $i after standby: $got probe events per request, over a quarter of $at_start"
  [ "$(jq '.probes.cold' "$work/standby$i.json")" = false ] || fail "trace $i after standby says the code was still interpreted"
  grep -q "still interpreted" "$work/standby$i.json.err" && fail "trace $i after standby: a cold-code line"
  [ "$(jq '.probes.end_cold' "$work/standby$i.json")" = false ] || fail "trace $i after standby: its end under traffic left cold code"
  sleep 2
done

# --- 3. an end with no traffic after it, and the next trace -------------------------------------
trace "$work/quiet_end.json" no
read -r end_methods end_back < <(jq -r '"\(.probes.end_methods) \(.probes.end_back)"' "$work/quiet_end.json")
note "a trace's end with no traffic: $end_back of the $end_methods methods it deoptimized compiled again"
[ "$(jq '.probes.end_cold' "$work/quiet_end.json")" = true ] ||
  fail "the quiet end left no cold code ($end_back of $end_methods back): the test's premise"
grep -q "had not compiled again when jmethodtime ended" "$work/quiet_end.json.err" ||
  fail "the header does not say the end left code to compile again"
trace "$work/after_quiet_end.json" yes
expect_request_path "$work/after_quiet_end.json"
got=$(per_request "$work/after_quiet_end.json")
if [ "$(jq '.probes.cold' "$work/after_quiet_end.json")" = true ]; then
  grep -q "^The JVM's code was still interpreted .* $(jq -r '.probes.hot_methods' "$work/after_quiet_end.json") hot methods" \
    "$work/after_quiet_end.json.err" || fail "the trace after a quiet end: no one-line header about its code"
  note "after a quiet end: $got probe events per request, said in the header ($(filtered_out "$work/after_quiet_end.json") filtered out)"
else
  ((got * 4 <= at_start)) || fail "after a quiet end: $got probe events per request, over a quarter of $at_start, and no header line"
  note "after a quiet end: $got probe events per request, narrow"
fi
tc_stop

# --- 4. a fresh Tomcat without the flag, quiet during its first switch ---------------------------
TC_PROBES="" tc_start || fail "the second Tomcat without the flag did not start"
load 3000
sleep 2
trace "$work/first_quiet.json" yes
expect_request_path "$work/first_quiet.json"
got=$(per_request "$work/first_quiet.json")
cold=$(jq '.probes.cold' "$work/first_quiet.json")
if [ "$cold" = true ]; then
  grep -q "^The JVM's code was still interpreted when the probes went on (.*): this trace trapped about as widely as the flag at start, .* filtered-out probe events" \
    "$work/first_quiet.json.err" || fail "the first quiet switch: no one-line header about its interpreted code"
  note "first switch of a quiet JVM: $got probe events per request ($at_start with the flag at start), the header says so with $(filtered_out "$work/first_quiet.json") filtered-out events"
else
  ((got * 4 <= at_start)) || fail "the first quiet switch: $got probe events per request, over a quarter of $at_start, and no header line"
  note "first switch of a quiet JVM: $got probe events per request, narrow"
fi
note "pass"
