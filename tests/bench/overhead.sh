#!/usr/bin/env bash
# Overhead benchmark (issue 4): the seed's A/B/C flow timed inside the JVM under
#   noflag      no probe flag
#   flag        -XX:+DTraceMethodProbes, nothing attached (the untraced reference)
#   floor       jmt-floor: empty BPF programs on the two probes (the trap alone)
#   full        jmethodtime, no filter
#   keep        jmethodtime --package demo/bench (keeps A/B/C)
#   reject      jmethodtime --package no/such/pkg (rejects every event)
# in alternating rounds; prints medians, ns per probe event above "flag", and the
# ratio of each mode's per-event cost to the floor's. Needs root and a build.
# usage: tests/bench/overhead.sh [ROUNDS] [ITERATIONS] [WORK]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
rounds=${1:-5}
iterations=${2:-100000}
work=${3:-20}
java=${JAVA:-java}
modes=(noflag flag floor full keep reject)
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"; pkill -P $$ 2>/dev/null || true' EXIT

# run_mode MODE -> prints ns per a() call measured by the JVM
run_mode() {
  local mode=$1 flag=-XX:+DTraceMethodProbes tracer=()
  case $mode in
    noflag) flag=-XX:-DTraceMethodProbes ;;
    flag) ;;
    floor) tracer=("$build/jmt-floor") ;;
    full) tracer=("$build/jmethodtime" --json) ;;
    keep) tracer=("$build/jmethodtime" --json --package demo/bench) ;;
    reject) tracer=("$build/jmethodtime" --json --package no/such/pkg) ;;
  esac
  rm -f "$work_dir/go" && mkfifo "$work_dir/go"
  "$java" "$flag" -cp "$build/examples/classes" demo.bench.AbcBench "$iterations" "$work" \
    <"$work_dir/go" >"$work_dir/jvm.out" 2>&1 &
  local jvm=$!
  exec 3>"$work_dir/go"
  for _ in $(seq 600); do grep -q READY "$work_dir/jvm.out" && break; sleep 0.1; done
  local tracer_pid=""
  if ((${#tracer[@]})); then
    "${tracer[0]}" -p "$jvm" "${tracer[@]:1}" >/dev/null 2>"$work_dir/tracer.err" &
    tracer_pid=$!
    for _ in $(seq 300); do grep -q '^Tracing' "$work_dir/tracer.err" && break; sleep 0.1; done
    if ! grep -q '^Tracing' "$work_dir/tracer.err"; then
      echo "mode $mode: the tracer did not attach: $(cat "$work_dir/tracer.err")" >&2
      kill "$jvm"; exit 1
    fi
  fi
  echo go >&3
  exec 3>&-
  wait "$jvm"
  [ -n "$tracer_pid" ] && { kill -TERM "$tracer_pid" 2>/dev/null || true; wait "$tracer_pid" || true; }
  sed -n 's/.*ns_per_a=\([0-9.]*\).*/\1/p' "$work_dir/jvm.out"
}

declare -A results
for ((r = 1; r <= rounds; r++)); do
  for mode in "${modes[@]}"; do
    results[$mode]+="$(run_mode "$mode") "
  done
  echo "round $r/$rounds done" >&2
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
declare -A med
for mode in "${modes[@]}"; do med[$mode]=$(echo "${results[$mode]}" | median); done

events=16
floor_ev=$(awk -v m="${med[floor]}" -v b="${med[flag]}" -v e=$events 'BEGIN {print (m-b)/e}')
printf 'A/B/C flow, %d calls of a() per run (%d probe events each), work=%d, %d rounds, medians\n' \
  "$iterations" "$events" "$work" "$rounds"
printf '%-8s %14s %18s %14s\n' mode "ns per a()" "ns/event vs flag" "x floor"
for mode in "${modes[@]}"; do
  awk -v n="$mode" -v m="${med[$mode]}" -v b="${med[flag]}" -v e=$events -v f="$floor_ev" 'BEGIN {
    ev = (m - b) / e
    if (n == "noflag" || n == "flag") printf "%-8s %14.1f %18s %14s\n", n, m, (n == "flag" ? "0 (reference)" : "-"), "-"
    else printf "%-8s %14.1f %18.1f %14.2f\n", n, m, ev, ev / f
  }'
done
