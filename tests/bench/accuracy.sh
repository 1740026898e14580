#!/usr/bin/env bash
# Accuracy benchmark: the DTrace example's A/B/C flow doing fixed work (FixedWork: a() makes 16
# probe events per call, its body is 135 units), traced with --package demo/abc. FixedWork times
# its own calls untraced, then runs ITERATIONS traced calls of a(); the benchmark compares a()'s
# corrected inclusive time per call with that untraced time, at two sizes of work chosen from the
# event cost this host shows: the traps about 2x a()'s body, and about 5x. Prints, per size, the
# medians of ROUNDS runs: the event cost (the low end of the range, from the JVM's own gaps),
# traps/body, a() untraced and corrected, the error, and whether a()'s bounds held the untraced
# time. Targets: within 15% at ~2x, 25% at ~5x, and 10% on a host with ~1 us traps.
# JMT_TEST_TRAP_NS=N makes every event N ns slower (a stand-in for a slower host).
# usage: tests/bench/accuracy.sh [ROUNDS] [ITERATIONS]     (root, after the build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
rounds=${1:-3}
iterations=${2:-3000}
java=${JAVA:-java}
work=$(mktemp -d)
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$work"' EXIT

# run C_US OUT_PREFIX: one traced run; leaves OUT_PREFIX.done (FixedWork's DONE line) and .json.
run() {
  local c_us=$1 out=$2 jvm jmt
  rm -f "$work/go"; mkfifo "$work/go"
  "$java" -XX:+DTraceMethodProbes -cp "$build/examples/classes" demo.abc.FixedWork "$iterations" "$c_us" \
    <"$work/go" >"$out.jvm" &
  jvm=$!
  exec 3>"$work/go"
  for _ in $(seq 300); do grep -q READY "$out.jvm" && break; sleep 0.1; done
  rm -f "$out.err"  # not an earlier run's "Tracing"
  "$build/jmethodtime" -p "$jvm" --package demo/abc --json -o "$out.json" 2>"$out.err" &
  jmt=$!
  for _ in $(seq 100); do grep -q '^Tracing' "$out.err" 2>/dev/null && break; sleep 0.1; done
  echo go >&3
  exec 3>&-
  wait "$jvm" || true
  wait "$jmt"
  grep DONE "$out.jvm" >"$out.done"
}
done_value() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$2"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The host's event cost from one short run (c() of 5 us), for choosing the sizes.
run 5 "$work/probe"
edge=$(jq '.probe_cost.range.traced_event_ns[0]' "$work/probe.json")
untraced_a5=$(done_value a_ns "$work/probe.done")
echo "Host: one probe event costs this JVM ${edge} ns and more (the low edge of its gaps between events)"
printf '%-7s %8s %11s %13s %13s %8s %12s\n' traps/a c_us event_ns untraced_a_ns corrected_ns error bounds_held
for target in 2 5; do
  # a() is 13.5 x c(): c_us so that 16 events x edge = target x a()'s untraced time.
  c_us=$(awk -v e="$edge" -v t="$target" -v a5="$untraced_a5" 'BEGIN {
    us = 16 * e / t / (a5 / 5); if (us < 0.05) us = 0.05; printf "%.2f", us }')
  : >"$work/rows"
  for r in $(seq "$rounds"); do
    run "$c_us" "$work/r$r"
    jq -r --argjson n "$iterations" --arg truth "$(done_value a_ns "$work/r$r.done")" '
      (.methods[] | select(.class == "demo/abc/FixedWork" and .method == "a")) as $a |
      [ .probe_cost.range.traced_event_ns[0],
        ($truth | tonumber),
        ($a.wall_incl_ns / $a.calls),
        (($a.bounds.wall_incl_ns[0] / $a.calls) <= ($truth | tonumber) * 1.03 and
         ($a.bounds.wall_incl_ns[1] / $a.calls) >= ($truth | tonumber) * 0.97),
        (16 * .probe_cost.traced_event_ns / ($truth | tonumber)) ] | @tsv' "$work/r$r.json" >>"$work/rows"
  done
  ev=$(cut -f1 "$work/rows" | median); truth=$(cut -f2 "$work/rows" | median)
  corr=$(cut -f3 "$work/rows" | median); ratio=$(cut -f5 "$work/rows" | median)
  held=$(grep -c true "$work/rows" || true)
  awk -v r="$ratio" -v c="$c_us" -v e="$ev" -v t="$truth" -v x="$corr" -v h="$held" -v n="$rounds" 'BEGIN {
    printf "%-7.1f %8.2f %11d %13d %13d %+7.1f%% %9d/%d\n", r, c, e, t, x, 100 * (x - t) / t, h, n }'
done
