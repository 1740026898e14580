#!/usr/bin/env bash
# What the probes cost a JVM in each state, and what the runtime switch saves: CPU per request
# (the JVM's own CPU time, /proc/PID/stat, per request or per call) and probe events per request,
# for Debian's Tomcat 10 (examples webapp, HelloWorldExample, ab with one client) and for the
# A/B/C flow (examples/java/demo/warm: a() calls b() twice and c() once, b() calls c() twice; its
# work scaled by UNIT), on the system's JDK 17 and on Temurin 25 where the machine has it:
#
#   flag off           started without -XX:+DTraceMethodProbes, nothing attached
#   flag on            started with it, nothing attached
#   standby            flag on at start, then `jmethodtime standby`
#   traced (at start)  flag on at start, traced: every compiled method traps
#   traced (switched)  traced after runtime switching (JDK 17 without the flag; JDK 25 on standby)
#   after              the same JVM once the trace ended and its code compiled again
#   JFR timing         Temurin 25 without the flag: jcmd JFR.start method-timing=... (JDK 25's
#                      own per-method timing), with JFR's average for the method
#
# Traces: Tomcat with --class 'org.apache.catalina.*' (wide) and with --class
# org.apache.catalina.connector.CoyoteAdapter --method service (narrow); the A/B/C flow with
# --package demo/warm/tree. Each trace switches on while the same load runs in the background
# (compiles settle under traffic, as on a server), then measures the requests alone. The
# adapter's (or a()'s) corrected time per call is printed with its bounds. No figure is asserted:
# this machine's figures go to docs/performance-measurements.md with the probe event cost of the run.
#
# usage: tests/bench/switch.sh [REQUESTS] [UNIT] [CALLS]   (root; a build in build/; defaults: 2000
#        Tomcat requests, the A/B/C flow's work unit 100, 50000 calls of a() per A/B/C figure)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
jmt=$build/jmethodtime
classes=$build/examples/classes
n=${1:-2000}
unit=${2:-100}
abc_n=${3:-50000}
warm=${WARM:-20000}
jdk17=$(readlink -f "$(command -v java)")
jdk25=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
work=$(mktemp -d /tmp/jmt-switch-bench.XXXXXX)
chmod 755 "$work"
# shellcheck source=../../examples/tomcat/tomcat.sh
source "$root/examples/tomcat/tomcat.sh"
abc_pid="" bg=""
cleanup() {
  [ -n "$bg" ] && kill "$bg" 2>/dev/null
  [ -n "$abc_pid" ] && kill "$abc_pid" 2>/dev/null
  tc_stop
  exec 7>&- 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT

cpu_ns() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' "/proc/$1/stat"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
row() { printf '%-5s %-10s %-20s %14s %12s  %s\n' "$@"; }

# --- the two workloads: PID, load N, and what a trace's report says of the measured method --------
tomcat_load() { ab -n "$1" -c 1 "$TC_URL" >"$work/ab.txt" 2>&1 || echo "ab failed" >&2; }
tomcat_bg() { ab -t 3600 -n 100000000 -c 1 "$TC_URL" >/dev/null 2>&1 & bg=$!; }
abc_load() {
  echo "$1" >&7
  while ! grep -q "DONE calls=$1\$" <(tail -n 1 "$work/abc.out" 2>/dev/null); do sleep 0.02; done
  : >"$work/abc.out"
}
abc_bg() { (while true; do abc_load 2000 || break; done) & bg=$!; }
# (the background rounds are killed between two: a round in flight ends before the next request)

# count WORKLOAD: requests (calls of a()) per figure.
count() { if [ "$1" = abc ]; then echo "$abc_n"; else echo "$n"; fi; }

# cpu_per WORKLOAD PID: the median over 5 runs of N requests (calls) of the JVM's CPU per one, us.
cpu_per() {
  local w=$1 pid=$2 b k
  k=$(count "$w")
  for _ in 1 2 3 4 5; do
    b=$(cpu_ns "$pid")
    "${w}_load" "$k"
    awk -v ns=$(($(cpu_ns "$pid") - b)) -v k="$k" 'BEGIN { printf "%.1f\n", ns / k / 1000 }'
  done | median
}

# trace WORKLOAD PID NAME METHOD ARGS...: a trace switched on (or attached) under background load,
# then N requests measured alone; prints "CPU/request events/request corrected/call [lo, hi] cost".
trace() {
  local w=$1 pid=$2 name=$3 class=$4 method=$5 out="$work/$3.json"
  shift 5
  "${w}_bg"
  rm -f "$out.err"  # not an earlier run's "Tracing"
  "$jmt" -p "$pid" --json -o "$out" "$@" 2>"$out.err" &
  local jp=$!
  for _ in $(seq 1500); do grep -q '^Tracing' "$out.err" && break; sleep 0.1; done
  kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null; bg=""
  "${w}_load" 200  # after the background load's last request
  local b k
  k=$(count "$w")
  b=$(cpu_ns "$pid")
  "${w}_load" "$k"
  local cpu
  cpu=$(awk -v ns=$(($(cpu_ns "$pid") - b)) -v k="$k" 'BEGIN { printf "%.1f", ns / k / 1000 }')
  kill -INT "$jp"
  wait "$jp" || { cat "$out.err" >&2; return; }
  grep -E '^(Switched|jmethodtime)' "$out.err" | sed 's/^/      /' >&2
  local events calls
  events=$(jq '.overhead.events' "$out")
  calls=$(jq --arg c "$class" --arg m "$method" '[.methods[] | select(.class == $c and .method == $m) | .calls] | add // 0' "$out")
  # Events per call of the measured method, over the whole trace (the background load's tail included).
  echo "$cpu $((events / (calls > 0 ? calls : 1))) $(jq -r --arg c "$class" --arg m "$method" --argjson k "${TIME_KEY:-[\"cpu_incl_ns\"]}" '
      [.methods[] | select(.class == $c and .method == $m)][0] as $r
      | if $r == null then "- - -" else
        "\($r[$k[0]] / $r.calls / 1000 | floor) [\($r.bounds[$k[0]][0] / $r.calls / 1000 | floor), \($r.bounds[$k[0]][1] / $r.calls / 1000 | floor)]" end' "$out") \
    $(jq 'if (.probe_cost.gaps.edge_ns // 0) > 0 then .probe_cost.gaps.edge_ns else .probe_cost.traced_event_ns end' "$out")ns ($calls calls)"
}

# jfr_row JDK WORKLOAD PID METHOD FILE: CPU per request under JDK 25's JFR method timing of
# METHOD (Class::method), and JFR's own average for it. FILE: where the JVM's user may write.
jfr_row() {
  local jdk=$1 w=$2 pid=$3 method=$4 file=$5 c avg bin=${jdk25%/java}
  "$bin/jcmd" "$pid" JFR.start name=jmt method-timing="$method" >/dev/null
  c=$(cpu_per "$w" "$pid")
  "$bin/jcmd" "$pid" JFR.stop name=jmt filename="$file" >/dev/null
  avg=$("$bin/jfr" print --events jdk.MethodTiming "$file" | awk '/average/ { print $3, $4 }' | tail -1)
  row "$jdk" "$w" "JFR method timing" "$c" 0 "average $avg (JFR's own)"
}

# traced_rows JDK WORKLOAD PID NAME STATE CLASS METHOD ARGS...: a trace's row, then the same JVM's
# CPU per request once WARM more requests recompiled its code ("after").
traced_rows() {
  local jdk=$1 w=$2 pid=$3 name=$4 state=$5 c e rest
  shift 5
  read -r c e rest < <(trace "$w" "$pid" "$name" "$@")
  row "$jdk" "$w" "$state" "$c" "$e" "$rest"
  "${w}_load" "$warm"
  row "$jdk" "$w" after "$(cpu_per "$w" "$pid")" - -
}

# --- Tomcat ---------------------------------------------------------------------------------------
adapter=org/apache/catalina/connector/CoyoteAdapter
tomcat() {  # JDK PROBE_FLAG
  local jdk=$1
  TC_PROBES=$2 JAVA=${jdk_java[$jdk]} tc_start || return 1
  tomcat_load "$warm"
}
wide=(--class 'org.apache.catalina.*')
narrow=(--class org.apache.catalina.connector.CoyoteAdapter --method service)

declare -A jdk_java=([17]=$jdk17 [25]=$jdk25)
jdks=(17)
[ -x "$jdk25" ] && jdks+=(25) || echo "(no Temurin 25 at $jdk25: JDK 17 only)" >&2

echo "Tomcat 10, HelloWorldExample, ab -c 1, $n requests per figure (medians of 5 for CPU); corrected"
echo "times per call of CoyoteAdapter.service, on-CPU (elapsed for the narrow trace), with their bounds"
row JDK Workload State "CPU/request us" "events/req" "corrected us/call [bounds]  (event cost at the gaps' edge)"
for jdk in "${jdks[@]}"; do
  # Flag off: untraced; JDK 17 switched (wide, then narrow), after; JDK 25: JFR method timing.
  tomcat "$jdk" "" || continue
  row "$jdk" tomcat "flag off" "$(cpu_per tomcat "$TC_PID")" - -
  if [ "$jdk" = 17 ]; then
    traced_rows "$jdk" tomcat "$TC_PID" t17wide "switched, wide" $adapter service "${wide[@]}"
    TIME_KEY='["wall_incl_ns"]' traced_rows "$jdk" tomcat "$TC_PID" t17narrow "switched, narrow" $adapter service \
      "${narrow[@]}"
  else
    jfr_row "$jdk" tomcat "$TC_PID" org.apache.catalina.connector.CoyoteAdapter::service "$TC_DIR/temp/mt.jfr"
  fi
  tc_stop
  # Flag on: untraced, traced at start, standby, switched after standby, after.
  tomcat "$jdk" -XX:+DTraceMethodProbes || continue
  row "$jdk" tomcat "flag on" "$(cpu_per tomcat "$TC_PID")" - -
  read -r c e rest < <(trace tomcat "$TC_PID" t${jdk}at $adapter service "${wide[@]}")
  row "$jdk" tomcat "traced at start" "$c" "$e" "$rest"
  "$jmt" standby -p "$TC_PID" | sed 's/^/      /' >&2
  tomcat_load "$warm"
  row "$jdk" tomcat "standby" "$(cpu_per tomcat "$TC_PID")" - -
  traced_rows "$jdk" tomcat "$TC_PID" t${jdk}sbwide "standby, wide" $adapter service "${wide[@]}"
  TIME_KEY='["wall_incl_ns"]' traced_rows "$jdk" tomcat "$TC_PID" t${jdk}sbnarrow "standby, narrow" $adapter service \
    "${narrow[@]}"
  tc_stop
done

# --- the A/B/C flow ----------------------------------------------------------------------------------
abc() {  # JDK PROBE_FLAG...
  local jdk=$1
  shift
  rm -f "$work/abc.in"
  mkfifo "$work/abc.in"
  "${jdk_java[$jdk]}" "$@" -cp "$classes" demo.warm.Rounds "$warm" "$unit" <"$work/abc.in" >>"$work/abc.out" 2>&1 &
  abc_pid=$!
  exec 7>"$work/abc.in"
  while ! grep -q READY "$work/abc.out"; do sleep 0.05; done
  : >"$work/abc.out"
}
abc_stop() { echo quit >&7; exec 7>&-; wait "$abc_pid" 2>/dev/null; abc_pid=""; }
tree=demo/warm/tree/Tree
echo
echo "The A/B/C flow (a() 1, b() 2, c() 5 calls each, work unit $unit), $abc_n calls of a() per figure; CPU per a()"
row JDK Workload State "CPU/a() us" "events/a()" "corrected a() us/call [bounds]"
for jdk in "${jdks[@]}"; do
  abc "$jdk"
  row "$jdk" abc "flag off" "$(cpu_per abc "$abc_pid")" - -
  if [ "$jdk" = 17 ]; then
    traced_rows "$jdk" abc "$abc_pid" s17sw switched $tree a --package demo/warm/tree
  else
    jfr_row "$jdk" abc "$abc_pid" demo.warm.tree.Tree::a "$work/abc.jfr"
  fi
  abc_stop
  abc "$jdk" -XX:+DTraceMethodProbes
  row "$jdk" abc "flag on" "$(cpu_per abc "$abc_pid")" - -
  read -r c e rest < <(trace abc "$abc_pid" s${jdk}at $tree a --package demo/warm/tree)
  row "$jdk" abc "traced at start" "$c" "$e" "$rest"
  "$jmt" standby -p "$abc_pid" | sed 's/^/      /' >&2
  abc_load "$warm"
  row "$jdk" abc "standby" "$(cpu_per abc "$abc_pid")" - -
  traced_rows "$jdk" abc "$abc_pid" s${jdk}sb "standby, traced" $tree a --package demo/warm/tree
  abc_stop
done
