#!/usr/bin/env bash
# Times on a JVM that exits with its trace: the A/B/C flow (FixedWork: 16 probe events per a(),
# c() sized to C_US untraced) traced with --package demo/abc until the JVM exits, in three ways:
#
#   attached  the JVM (OpenJDK with -XX:+DTraceMethodProbes) times its calls untraced, then
#             jmethodtime attaches by pid and the JVM runs ITERATIONS calls and exits: no windows
#             after the trace, so the cost taken out is the gaps' edge plus its refill share
#   launch    jmethodtime starts the JVM (-- java ...): every call of the JVM is traced, so its
#             untraced timing comes from two untraced JVMs of the same unit of work (-Ddemo.unit),
#             one before and one after; a() is the calls under run() (the flame graph's path)
#   before    attached with --cost-before to a JVM calling a() before its timed run (FixedWork's
#             LEAD): the windows run before the trace, on the work the trace then sees
#
# Per run it prints a()'s corrected time per call against the JVM's untraced timing (ratio), a()'s
# bounds per call (the whole row's in launch mode) and whether they hold that timing, their width
# over half the correction (16 events x the cost taken out), what the JVM paid per event by its own
# timing (its traced a() less the untraced, over 16), the cost taken out, the gaps' edge and the
# cost's source. No figure is asserted: docs/accuracy-measurements.md records the runs.
#
# usage: tests/bench/exiting_jvm.sh MODE C_US [RUNS] [ITERATIONS]   (root, after the build;
#        MODE attached, launch or before; C_US 5 is U=1000, 2 is U=400; RUNS default 10;
#        ITERATIONS default 5000)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
classes=$build/examples/classes
java=${JAVA:-java}
mode=${1:?usage: exiting_jvm.sh attached|launch|before C_US [RUNS] [ITERATIONS]}
c_us=${2:?C_US}
runs=${3:-10}
iterations=${4:-5000}
work=$(mktemp -d /tmp/jmt-exiting.XXXXXX)
trap 'pkill -P $$ 2>/dev/null; rm -rf "$work"' EXIT

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" ${2#DONE }"; }  # FixedWork's DONE line

# attach_run LEAD_ARGS... : FixedWork until READY, jmethodtime by pid, then its go line.
attach_run() {
  rm -f "$work/go" "$work/jmt.err"
  mkfifo "$work/go"
  "$java" -XX:+DTraceMethodProbes -cp "$classes" demo.abc.FixedWork "$iterations" "$c_us" "$@" \
    <"$work/go" >"$work/jvm.out" &
  local jvm=$!
  exec 3>"$work/go"
  for _ in $(seq 300); do grep -q READY "$work/jvm.out" && break; sleep 0.1; done
  local extra=()
  [ "$mode" = before ] && extra=(--cost-before)
  "$build/jmethodtime" -p "$jvm" --package demo/abc "${extra[@]}" --json -o "$work/run.json" 2>"$work/jmt.err" &
  local jmt=$!
  for _ in $(seq 300); do grep -q '^Tracing' "$work/jmt.err" 2>/dev/null && break; sleep 0.1; done
  echo go >&3
  exec 3>&-
  wait "$jvm"
  wait "$jmt"
}

untraced_done() {  # UNIT (empty: FixedWork scales it)
  echo go | "$java" ${1:+-Ddemo.unit=$1} -cp "$classes" demo.abc.FixedWork "$iterations" "$c_us" | grep DONE
}

# a() under run(int) in the flame graph's data: ns per call.
run_a_ns() {
  python3 - "$1" <<'EOF'
import json, re, sys
page = open(sys.argv[1]).read()
data = json.loads(re.search(r'id="jmt-flamegraph-data"[^>]*>(.*?)</script>', page, re.S).group(1))
def find(node, parent):
    if node.get('name', '').endswith('.a()') and parent.endswith('.run(int)'):
        return node['wall_incl'] / node['calls']
    for child in node.get('children', []):
        found = find(child, node.get('name', ''))
        if found is not None:
            return found
    return None
print(find(data.get('root', data), ''))
EOF
}

for _ in $(seq "$runs"); do
  case $mode in
    attached) attach_run; done_line=$(grep DONE "$work/jvm.out"); truth=$(field a_ns "$done_line") ;;
    before) attach_run 0 lead; done_line=$(grep DONE "$work/jvm.out"); truth=$(field a_ns "$done_line") ;;
    launch)
      first=$(untraced_done); unit=$(field unit "$first")
      echo go | "$build/jmethodtime" --package demo/abc --json -o "$work/run.json" --flamegraph "$work/run.html" \
        -- "$java" -Ddemo.unit="$unit" -cp "$classes" demo.abc.FixedWork "$iterations" "$c_us" >"$work/jvm.out" 2>/dev/null
      done_line=$(grep DONE "$work/jvm.out")
      second=$(untraced_done "$unit")
      truth=$(( ($(field a_ns "$first") + $(field a_ns "$second")) / 2 )) ;;
    *) echo "exiting_jvm.sh: MODE is attached, launch or before" >&2; exit 2 ;;
  esac
  [ -s "$work/run.json" ] && [ -n "$done_line" ] || { echo "run failed"; continue; }
  under_run=""
  [ "$mode" = launch ] && under_run=$(run_a_ns "$work/run.html")
  jq -r --argjson truth "$truth" --argjson traced "$(field traced_a_ns "$done_line")" \
    --arg under_run "$under_run" --arg mode "$mode" --arg c_us "$c_us" '. as $r | .methods[] | select(.method == "a") |
    (if $under_run == "" then .wall_incl_ns / .calls else ($under_run | tonumber) end) as $a |
    (.bounds.wall_incl_ns[0] / .calls) as $lo | (.bounds.wall_incl_ns[1] / .calls) as $hi |
    ($r.probe_cost.traced_event_ns) as $taken |
    "\($mode) c_us=\($c_us) untraced \($truth / 1e3 | .*10 | round / 10) us corrected \($a / 1e3 | .*10 | round / 10) us " +
    "ratio \($a / $truth | .*1000 | round / 1000) bounds [\($lo / 1e3 | .*10 | round / 10), \($hi / 1e3 | .*10 | round / 10)] " +
    "hold \($lo <= $truth and $hi >= $truth) width/half-correction \(($hi - $lo) / (16 * $taken / 2) | .*100 | round / 100) " +
    "paid \(($traced - $truth) / 16 | round) ns taken \($taken) ns edge \($r.probe_cost.gaps.edge_ns) ns source \($r.probe_cost.source)"' \
    "$work/run.json"
  rm -f "$work/run.json"
done
