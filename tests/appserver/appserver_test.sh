#!/usr/bin/env bash
# A real application server as a test: Debian's Tomcat 10 with its examples webapp
# (examples/tomcat/tomcat.sh: loopback port, -XX:+DTraceMethodProbes, run by the tomcat user),
# loaded by ab (apache2-utils) with the HelloWorldExample servlet, traced by jmethodtime -p PID.
#
#  1. untraced: the process's own CPU time per request (/proc/PID/stat) at one request at a time;
#  2. one client (--class 'org.apache.catalina.*' --class HelloWorldExample): exact counts of the
#     request path (CoyoteAdapter.service, the engine, host, context and wrapper valves, the error
#     report valve, the servlet's doGet); on-CPU + run-queue + blocked = elapsed for every row; the
#     adapter's per-request on-CPU bounds hold the process's untraced CPU per request (its low
#     end at most that, its high end at least half of it: the adapter is most of a request);
#  3. twice as many clients as CPUs (--package org/apache/catalina): the same exact counts, and
#     run-queue wait inside the adapter (at least 5% of its elapsed time, and more per request
#     than with one client), which the header reports as saturated CPUs;
#  4. a second Tomcat started without -XX:+DTraceMethodProbes, its probes switched on at run time:
#     a first short trace under load takes the one-time deoptimization; then the same filter as in
#     2 gives the same exact counts with fewer than half the probe events per request of the
#     flag-at-start trace (printed beside it), and after each trace the flag is off again and
#     --list says "switchable"; traced with traffic from before it starts, the cost taken out is
#     what the JVM paid per event (its CPU per I/O call before and during the trace), and the
#     adapter's on-CPU lower bound per request is at most the process's untraced CPU per
#     request, its likely figure at most twice that; the CPU per request before and after is
#     printed, not asserted.
# The server is stopped and its directory removed whatever happens (EXIT trap).
#
# usage: appserver_test.sh JMETHODTIME SOURCE_DIR
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (something needed is missing, unless CI=true).
set -uo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

# shellcheck source=tomcat_test_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/tomcat_test_setup.sh" || exit 1
tomcat_test_setup appserver-test "$@"
trap tomcat_test_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tc_start || fail "Tomcat did not start"
note "Tomcat $TC_URL, pid $TC_PID"

cpu_ns() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' "/proc/$1/stat"
}
# trace OUT N C [options]: jmethodtime --json -o OUT attached while N requests run, C at a time.
# BUSY=1: one client's traffic runs from before jmethodtime starts until it waits to switch the
# probes on, as on a server in use (what the JVM does untraced is then measured), and none
# during the trace but the N requests.
trace() {
  local out=$1 n=$2 c=$3
  shift 3
  [ "${BUSY:-}" = 1 ] && { ab -t 600 -n 100000000 -c 1 "$TC_URL" >/dev/null 2>&1 & bg=$!; }
  rm -f "$out.err"  # not an earlier run's "Tracing"
  "$jmt" -p "$TC_PID" --json -o "$out" "$@" 2>"$out.err" &
  jmt_pid=$!
  if [ -n "${bg:-}" ]; then
    for _ in $(seq 300); do grep -q '^Waiting for\|^Tracing' "$out.err" 2>/dev/null && break; sleep 0.05; done
    kill "$bg"; wait "$bg" 2>/dev/null; bg=""
  fi
  # A JVM switched at run time first waits for its compiles to settle (at most 60 s).
  for _ in $(seq 900); do grep -q '^Tracing' "$out.err" 2>/dev/null && break; sleep 0.1; done
  grep -q '^Tracing' "$out.err" || { cat "$out.err" >&2; fail "jmethodtime did not attach"; }
  load "$n" "$c"
  kill -INT "$jmt_pid"
  wait "$jmt_pid" || { cat "$out.err" >&2; fail "jmethodtime exited with $?"; }
  jmt_pid=""
  cat "$out.err"
}
# calls FILE CLASS METHOD: calls of every row of CLASS.METHOD (all signatures).
calls() {
  jq --arg c "$2" --arg m "$3" '[.methods[] | select(.class == $c and .method == $m) | .calls] | add // 0' "$1"
}
# The request path: one call of each per request.
expect_request_path() {
  local file=$1 n=$2 servlet=$3 row got
  local rows=(org/apache/catalina/connector/CoyoteAdapter:service
              org/apache/catalina/core/StandardEngineValve:invoke
              org/apache/catalina/core/StandardHostValve:invoke
              org/apache/catalina/valves/ErrorReportValve:invoke
              org/apache/catalina/core/StandardContextValve:invoke
              org/apache/catalina/core/StandardWrapperValve:invoke)
    [ "$servlet" = yes ] && rows+=(HelloWorldExample:doGet)
  for row in "${rows[@]}"; do
    got=$(calls "$file" "${row%%:*}" "${row#*:}")
    [ "$got" = "$n" ] || fail "$(basename "$file"): ${row/:/.}: $got calls for $n requests"
  done
  note "$(basename "$file"): ${#rows[@]} methods of the request path, $n calls each"
}
# Every row: on-CPU + run-queue + blocked = elapsed, inclusive and exclusive.
expect_time_split() {
  local bad
  bad=$(jq -r '.methods[] | select(.cpu_incl_ns + .runq_incl_ns + .blocked_incl_ns != .wall_incl_ns or
                                   .cpu_excl_ns + .runq_excl_ns + .blocked_excl_ns != .wall_excl_ns)
               | "\(.class).\(.method)"' "$1" | head -3)
  [ -z "$bad" ] || fail "$(basename "$1"): on-CPU + run queue + blocked is not elapsed time for $bad"
}
adapter() { # FILE EXPR: EXPR of the adapter's row
  jq -r "[.methods[] | select(.class == \"org/apache/catalina/connector/CoyoteAdapter\" and .method == \"service\")][0] | $2" "$1"
}

# --- 1. the untraced reference -------------------------------------------------------------------
load 3000 2  # warm up: JIT, pools
n=${JMT_APPSERVER_REQUESTS:-400}
before=$(cpu_ns "$TC_PID")
load "$n" 1
untraced_cpu=$(( ($(cpu_ns "$TC_PID") - before) / n ))
note "untraced: Tomcat used $((untraced_cpu / 1000)) us of CPU per request, one request at a time"

# --- 2. one client -------------------------------------------------------------------------------
trace "$work/one.json" "$n" 1 --class 'org.apache.catalina.*' --class HelloWorldExample
expect_request_path "$work/one.json" "$n" yes
expect_time_split "$work/one.json"
read -r lo hi likely events < <(adapter "$work/one.json" '"\(.bounds.cpu_incl_ns[0]) \(.bounds.cpu_incl_ns[1]) \(.cpu_incl_ns) \(.events_incl)"')
edge=$(jq '.probe_cost.gaps.edge_ns' "$work/one.json")
note "adapter, on a CPU per request: $((lo / n / 1000)) to $((hi / n / 1000)) us (likely $((likely / n / 1000)) us) with $((events / n)) probe events inside each, at $edge ns per event (the gaps' edge); the process untraced: $((untraced_cpu / 1000)) us"
((lo / n <= untraced_cpu)) || fail "the adapter's CPU per request is at least $((lo / n)) ns: more than the whole process's untraced $untraced_cpu ns"
((hi / n >= untraced_cpu / 2)) || fail "the adapter's CPU per request is at most $((hi / n)) ns: under half the process's untraced $untraced_cpu ns"
one_runq=$(adapter "$work/one.json" '.runq_incl_ns')

# --- 3. more clients than CPUs -------------------------------------------------------------------
clients=$((2 * $(nproc)))
trace "$work/many.json" "$n" "$clients" --package org/apache/catalina
expect_request_path "$work/many.json" "$n" no
expect_time_split "$work/many.json"
read -r wall runq < <(adapter "$work/many.json" '"\(.wall_incl_ns) \(.runq_incl_ns)"')
note "adapter with $clients clients: $((wall / n / 1000)) us elapsed per request, $((runq / n / 1000)) us of it waiting for a CPU (one client: $((one_runq / n / 1000)) us)"
((runq * 20 >= wall)) || fail "with $clients clients on $(nproc) CPUs the adapter waited for a CPU only $runq of its $wall ns"
((runq > one_runq)) || fail "the adapter waited no longer for a CPU with $clients clients ($runq ns) than with one ($one_runq ns)"
[ "$(jq '.overhead.saturated' "$work/many.json")" = true ] || fail "the header did not say the CPUs were saturated"
grep -q 'the CPUs were saturated' "$work/many.json.err" || fail "no saturation line on stderr"
at_start_events=$(jq '.overhead.events' "$work/one.json")
tc_stop

# --- 4. started without the flag: the probes switched on at run time ---------------------------
state() { "$jmt" --list --json | jq -r --argjson p "$TC_PID" '.[] | select(.pid == $p) | .probes'; }
TC_PROBES="" tc_start || fail "Tomcat without the flag did not start"
note "Tomcat without the flag: $TC_URL, pid $TC_PID"
load 3000 2
[ "$(state)" = switchable ] || fail "--list says '$(state)' of a Tomcat started without the flag"
before=$(cpu_ns "$TC_PID")
load "$n" 1
off_cpu=$(( ($(cpu_ns "$TC_PID") - before) / n ))
# The JVM's first switch: the one-time deoptimization of all compiled code, under load.
ab -t 600 -n 100000000 -c 1 "$TC_URL" >/dev/null 2>&1 &
bg=$!
"$jmt" -p "$TC_PID" --class 'org.apache.catalina.*' -d 2 >"$work/first.txt" 2>"$work/first.err" ||
  { kill "$bg"; cat "$work/first.err" >&2; fail "the first switched trace failed"; }
kill "$bg"; wait "$bg" 2>/dev/null; bg=""
grep '^Switched' "$work/first.err" || fail "the first trace did not switch the probes on"
[ "$(state)" = switchable ] || fail "--list says '$(state)' after the first switched trace"
load 3000 2
BUSY=1 trace "$work/switched.json" "$n" 1 --class 'org.apache.catalina.*' --class HelloWorldExample
expect_request_path "$work/switched.json" "$n" yes
expect_time_split "$work/switched.json"
[ "$(jq -r '.probes.access' "$work/switched.json")" = switched ] || fail "the report does not say the probes were switched"
read -r lo likely < <(adapter "$work/switched.json" '"\(.bounds.cpu_incl_ns[0]) \(.cpu_incl_ns)"')
edge=$(jq '.probe_cost.gaps.edge_ns' "$work/switched.json")
top=$(jq '.probe_cost.range.jvm_cpu_ns_per_event' "$work/switched.json")
note "switched: the adapter on a CPU per request at least $((lo / n / 1000)) us, likely $((likely / n / 1000)) us ($(awk -v l="$likely" -v n="$n" -v u="$off_cpu" 'BEGIN { printf "%.1f", l / n / u }')x the process's untraced $((off_cpu / 1000)) us); per event: the gaps' edge $edge ns, the JVM's CPU $top ns"
((lo / n <= off_cpu)) || fail "switched: the adapter's CPU per request is at least $((lo / n)) ns: more than the whole process's untraced $off_cpu ns"
# Traffic before the trace: the cost taken out is what the JVM paid per event, and the
# adapter's likely figure is within 2x of the whole process's untraced CPU per request.
source=$(jq -r '.probe_cost.source' "$work/switched.json")
[ "$source" = paid ] || fail "switched under traffic: the cost taken out rests on '$source', not what the JVM paid ($(jq -r '.probe_cost.range.paid_not_measured' "$work/switched.json"))"
((likely / n <= 2 * off_cpu)) || fail "switched: the adapter's likely CPU per request, $((likely / n)) ns, is over twice the whole process's untraced $off_cpu ns"
switched_events=$(jq '.overhead.events' "$work/switched.json")
note "probe events per request: $((switched_events / n)) switched at run time, $((at_start_events / n)) with the flag at start"
((switched_events * 2 < at_start_events)) ||
  fail "switched at run time the trace made $switched_events probe events, not under half the $at_start_events with the flag at start"
[ "$(state)" = switchable ] || fail "--list says '$(state)' after the switched trace"
load 3000 2
before=$(cpu_ns "$TC_PID")
load "$n" 1
note "Tomcat without the flag: $((off_cpu / 1000)) us of CPU per request before the traces, $(( ($(cpu_ns "$TC_PID") - before) / n / 1000 )) us after them"
note "pass"
