#!/usr/bin/env bash
# Times under traps against the truth, for the workloads of docs/accuracy-measurements.md's table:
#
#   abc U      the A/B/C flow (demo.warm.Rounds, a() calls b() twice and c() once, b() calls c()
#              twice, 16 probe events per a()), work unit U, JDK 17 with the flag, traced with
#              --package demo/warm/tree; truth: the JVM's CPU per a() before the trace (the same
#              JVM, the same rounds, no trap).
#   wide       Tomcat 10 on JDK 17 without the flag, switched with --class 'org.apache.catalina.*'
#              under ab; truth: the whole process's CPU per request untraced, which the adapter's
#              CoyoteAdapter.service (on a CPU) cannot exceed, and the adapter's on-CPU time traced
#              alone first (switched for its class only: a few events per call, its traps a small part).
#   narrow     Tomcat 10 on Temurin 25 with the flag, on standby, traced with --class
#              ...CoyoteAdapter --method service; truth: JFR's method timing of service on a flag-off
#              Temurin 25 Tomcat under the same ab (elapsed).
#
# For each it prints the event cost the trace measured (the gaps' edge), the JVM's CPU per probe
# event over the trace, the cost taken out and its source, the truth, the corrected time per call,
# its bounds, corrected / truth, and what one event really cost the JVM there ((raw - truth) /
# events inside). No figure is asserted; every figure is printed with the event cost of its run.
#
# usage: tests/bench/traps.sh [WORKLOADS...]   (root; BUILD_DIR or build/; default: abc400 abc1000
#        wide narrow; REQUESTS (default 2000) requests and ROUNDS_CALLS (default 20000) calls of a()
#        measured; KEEP=DIR keeps the
#        traces' JSON reports there)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
jmt=$build/jmethodtime
classes=$build/examples/classes
n=${REQUESTS:-2000}
rounds_n=${ROUNDS_CALLS:-20000}  # 0.5 s of a() at U=400: /proc/PID/stat counts 10 ms ticks
jdk17=$(readlink -f "$(command -v java)")
jdk25=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
work=$(mktemp -d /tmp/jmt-traps-bench.XXXXXX)
chmod 755 "$work"
# shellcheck source=../../examples/tomcat/tomcat.sh
source "$root/examples/tomcat/tomcat.sh"
rounds_pid="" bg="" jp=""
cleanup() {
  [ -n "$bg" ] && kill "$bg" 2>/dev/null
  [ -n "$jp" ] && kill "$jp" 2>/dev/null && wait "$jp" 2>/dev/null
  [ -n "$rounds_pid" ] && kill "$rounds_pid" 2>/dev/null
  tc_stop
  exec 7>&- 2>/dev/null
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work"/*.json "$work"/*.err "$KEEP"/ 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT

cpu_ns() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' "/proc/$1/stat"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

tomcat_load() { ab -n "$1" -c 1 "$TC_URL" >"$work/ab.txt" 2>&1 || echo "ab failed" >&2; }
tomcat_bg() { ab -t 3600 -n 100000000 -c 1 "$TC_URL" >/dev/null 2>&1 & bg=$!; }
rounds_load() {
  echo "$1" >&7
  while ! grep -q "DONE calls=$1\$" <(tail -n 1 "$work/rounds.out" 2>/dev/null); do sleep 0.02; done
  : >"$work/rounds.out"
}
rounds_bg() { (while true; do rounds_load 2000 || break; done) & bg=$!; }

# cpu_per WORKLOAD PID K: the median of 5 runs of K requests of the JVM's CPU per request, ns.
cpu_per() {
  local b
  for _ in 1 2 3 4 5; do
    b=$(cpu_ns "$2")
    "${1}_load" "$3"
    echo $((($(cpu_ns "$2") - b) / $3))
  done | median
}

# traced WORKLOAD PID OUT K ARGS...: switched on under background load, then K requests alone,
# then background load again until jmethodtime has ended.
traced() {
  local w=$1 pid=$2 out=$3 k=$4
  shift 4
  "${w}_bg"
  rm -f "$out.err"  # not an earlier run's "Tracing"
  "$jmt" -p "$pid" --json -o "$out" "$@" 2>"$out.err" &
  jp=$!
  for _ in $(seq 1500); do grep -q '^Tracing' "$out.err" && break; sleep 0.1; done
  kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null; bg=""
  "${w}_load" 200
  "${w}_load" "$k"
  # Load on through the trace's end: a JVM without I/O is measured in windows after it.
  "${w}_bg"
  kill -INT "$jp"; wait "$jp"; jp=""
  kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null; bg=""
}

# report NAME OUT CLASS METHOD KEY TRUTH_NS: one line of the table.
report() {
  jq -r --arg name "$1" --arg c "$3" --arg m "$4" --arg k "$5" --argjson truth "$6" '
    [.methods[] | select(.class == $c and .method == $m)][0] as $r
    | .probe_cost as $p | .overhead as $o
    | ($r[$k] + $r.traced_events_incl * $p.traced_event_ns
       + ($r.events_incl - $r.traced_events_incl) * $p.rejected_event_ns) as $raw
    | [$name, $p.gaps.edge_ns, (if $o.jvm_cpu_ns then ($o.jvm_cpu_ns / $o.events | floor) else "-" end),
       $p.traced_event_ns, $p.source, ($r.events_incl / $r.calls | floor),
       ($truth / 1000), ($r[$k] / $r.calls / 1000), ($r.bounds[$k][0] / $r.calls / 1000),
       ($r.bounds[$k][1] / $r.calls / 1000), ($r[$k] / $r.calls / $truth),
       (($raw - $truth * $r.calls) / $r.events_incl | floor)]
    | "\(.[0])\t\(.[1])\t\(.[2])\t\(.[3]) \(.[4])\t\(.[5])\t\(.[6] * 10 | round / 10)\t\(.[7] * 10 | round / 10) [\(.[8] * 10 | round / 10), \(.[9] * 10 | round / 10)]\t\(.[10] * 100 | round / 100)x\t\(.[11])"' "$2"
}

rounds() {  # UNIT JAVA-FLAGS...
  local unit=$1
  shift
  rm -f "$work/rounds.in"; mkfifo "$work/rounds.in"
  "$jdk17" "$@" -cp "$classes" demo.warm.Rounds 20000 "$unit" <"$work/rounds.in" >>"$work/rounds.out" 2>&1 &
  rounds_pid=$!
  exec 7>"$work/rounds.in"
  while ! grep -q READY "$work/rounds.out"; do sleep 0.05; done
  : >"$work/rounds.out"
}
rounds_stop() { echo quit >&7; exec 7>&-; wait "$rounds_pid" 2>/dev/null; rounds_pid=""; }

run_rounds() {  # UNIT
  rounds "$1" -XX:+DTraceMethodProbes
  local truth
  truth=$(cpu_per rounds "$rounds_pid" "$rounds_n")
  traced rounds "$rounds_pid" "$work/abc$1.json" "$rounds_n" --package demo/warm/tree
  report "A/B/C U=$1" "$work/abc$1.json" demo/warm/tree/Tree a cpu_incl_ns "$truth"
  rounds_stop
}

adapter=org/apache/catalina/connector/CoyoteAdapter
run_wide() {
  TC_PROBES="" JAVA=$jdk17 tc_start || return
  tomcat_load 3000
  local truth
  truth=$(cpu_per tomcat "$TC_PID" "$n")
  traced tomcat "$TC_PID" "$work/alone.json" "$n" --class org.apache.catalina.connector.CoyoteAdapter --method service
  local alone
  alone=$(jq -r '[.methods[] | select(.method == "service")][0] | .cpu_incl_ns / .calls | floor' "$work/alone.json")
  report "adapter alone (JDK 17)" "$work/alone.json" $adapter service cpu_incl_ns "$truth"
  traced tomcat "$TC_PID" "$work/wide.json" "$n" --class 'org.apache.catalina.*'
  report "wide (JDK 17)" "$work/wide.json" $adapter service cpu_incl_ns "$truth"
  report "wide vs alone" "$work/wide.json" $adapter service cpu_incl_ns "$alone"
  tc_stop
}

run_narrow() {
  [ -x "$jdk25" ] || { echo "narrow: no Temurin 25 at $jdk25" >&2; return; }
  local bin=${jdk25%/java} avg
  TC_PROBES="" JAVA=$jdk25 tc_start || return
  tomcat_load 3000
  "$bin/jcmd" "$TC_PID" JFR.start name=jmt method-timing=org.apache.catalina.connector.CoyoteAdapter::service >/dev/null
  tomcat_load "$n"
  "$bin/jcmd" "$TC_PID" JFR.stop name=jmt filename="$TC_DIR/temp/mt.jfr" >/dev/null
  avg=$("$bin/jfr" print --events jdk.MethodTiming "$TC_DIR/temp/mt.jfr" |
    awk '/average/ { v = $3; u = $4 } END { if (u ~ /^us/) v *= 1000; else if (u ~ /^ms/) v *= 1e6; printf "%.0f", v }')
  tc_stop
  TC_PROBES=-XX:+DTraceMethodProbes JAVA=$jdk25 tc_start || return
  tomcat_load 3000
  "$jmt" standby -p "$TC_PID" >/dev/null
  tomcat_load 3000
  traced tomcat "$TC_PID" "$work/narrow.json" "$n" --class org.apache.catalina.connector.CoyoteAdapter --method service
  report "narrow (JDK 25, JFR)" "$work/narrow.json" $adapter service wall_incl_ns "$avg"
  tc_stop
}

printf '%s\n' "workload	edge_ns	jvm_cpu/event	cost taken out	events/call	truth_us	corrected_us [bounds]	corr/truth	paid_ns/event"
for x in ${*:-abc400 abc1000 wide narrow}; do
  case $x in
    abc*) run_rounds "${x#abc}" ;;
    wide) run_wide ;;
    narrow) run_narrow ;;
  esac
done
