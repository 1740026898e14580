#!/usr/bin/env bash
# Overhead benchmark: the DTrace example's A/B/C flow timed inside the JVM under
#   noflag      no probe flag
#   flag        -XX:+DTraceMethodProbes, nothing attached (the untraced reference)
#   floor       jmt-floor: empty BPF programs on the two probes (the trap alone)
#   full        jmethodtime, no filter
#   keep        jmethodtime --package demo/bench (keeps A/B/C)
#   reject      jmethodtime --package no/such/pkg (rejects every event)
#   paths       keep, with call paths aggregated too (--pprof: flame graphs)
#   thread      keep, with --per-thread rows
#   only_a      jmethodtime --package demo/bench --method a (a() traced, b() and c() rejected inside it)
#   globs       jmethodtime --class '*AbcBench' --method a: no package; globs keep a() and reject the rest
#   foreign     only_a with --foreign (b() and c() timed as a()'s untraced callees)
#   slow        keep with --slower-than 100s (the threshold's check, no call over it; STATS_MODES only)
#   nolat       keep with --no-latency (no histograms; STATS_MODES only)
# in alternating rounds; prints medians, ns per probe event above "flag", the
# ratio of each mode's per-event cost to the floor's, the programs' own run time
# (kernel.bpf_stats_enabled, ns per run) and the per-event cost jmethodtime
# calibrated during the trace. Needs root and a build.
# usage: tests/bench/overhead.sh [ROUNDS] [ITERATIONS] [WORK] [STATS_ROUNDS]
# ROUNDS 0 skips the JVM-timed rounds: the programs' run time alone, from
# STATS_ROUNDS (default 1) statistics rounds, medians. STATS_MODES (default all
# the tracer's modes) picks the statistics rounds' modes, floor first.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
rounds=${1:-7}
iterations=${2:-100000}
work=${3:-20}
stats_rounds=${4:-1}
java=${JAVA:-java}
modes=(noflag flag floor full keep reject paths thread only_a globs foreign)
read -r -a stats_modes <<<"${STATS_MODES:-floor full keep reject paths thread only_a globs foreign}"
[ "${stats_modes[0]}" = floor ] || stats_modes=(floor "${stats_modes[@]}")
work_dir=$(mktemp -d)
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$stats_before"; rm -rf "$work_dir"; pkill -P $$ 2>/dev/null || true' EXIT

# prog_costs -> "ENTRY_NS RETURN_NS": mean run time of the newest loaded probe
# programs (one tracer runs at a time here).
prog_costs() {
  bpftool prog show 2>/dev/null | awk '
    /^[0-9]+: / {
      name = ""; rt = 0; rc = 0
      for (i = 1; i <= NF; i++) {
        if ($i == "name") name = $(i + 1)
        if ($i == "run_time_ns") rt = $(i + 1)
        if ($i == "run_cnt") rc = $(i + 1)
      }
      if (rc > 0 && name ~ /^(handle|floor)_entry$/) entry = rt / rc
      if (rc > 0 && name ~ /^(handle|floor)_return(_t)?$/) ret = rt / rc
    }
    END { printf "%.0f %.0f\n", entry, ret }'
}

# run_mode MODE -> "NS_PER_A ENTRY_NS RETURN_NS CALIBRATED_NS" (- where not applicable)
run_mode() {
  local mode=$1 flag=-XX:+DTraceMethodProbes tracer=()
  case $mode in
    noflag) flag=-XX:-DTraceMethodProbes ;;
    flag) ;;
    floor) tracer=("$build/jmt-floor") ;;
    full) tracer=("$build/jmethodtime" --json) ;;
    keep) tracer=("$build/jmethodtime" --json --package demo/bench) ;;
    reject) tracer=("$build/jmethodtime" --json --package no/such/pkg) ;;
    paths) tracer=("$build/jmethodtime" --json --package demo/bench --pprof "$work_dir/paths.pb.gz") ;;
    thread) tracer=("$build/jmethodtime" --json --package demo/bench --per-thread) ;;
    only_a) tracer=("$build/jmethodtime" --json --package demo/bench --method a) ;;
    globs) tracer=("$build/jmethodtime" --json --class '*AbcBench' --method a) ;;
    foreign) tracer=("$build/jmethodtime" --json --package demo/bench --method a --foreign) ;;
    slow) tracer=("$build/jmethodtime" --json --package demo/bench --slower-than 100s) ;;
    nolat) tracer=("$build/jmethodtime" --json --package demo/bench --no-latency) ;;
  esac
  rm -f "$work_dir/go" "$work_dir/report.json" && mkfifo "$work_dir/go"
  "$java" "$flag" -cp "$build/examples/classes" demo.bench.AbcBench "$iterations" "$work" hold \
    <"$work_dir/go" >"$work_dir/jvm.out" 2>&1 &
  local jvm=$!
  exec 3>"$work_dir/go"
  for _ in $(seq 600); do grep -q READY "$work_dir/jvm.out" && break; sleep 0.1; done
  local tracer_pid=""
  if ((${#tracer[@]})); then
    rm -f "$work_dir/tracer.err"  # not an earlier run's "Tracing"
    "${tracer[0]}" -p "$jvm" "${tracer[@]:1}" >"$work_dir/report.json" 2>"$work_dir/tracer.err" &
    tracer_pid=$!
    for _ in $(seq 300); do grep -q '^Tracing' "$work_dir/tracer.err" && break; sleep 0.1; done
    if ! grep -q '^Tracing' "$work_dir/tracer.err"; then
      echo "mode $mode: the tracer did not attach: $(cat "$work_dir/tracer.err")" >&2
      kill "$jvm"; exit 1
    fi
  fi
  echo go >&3
  for _ in $(seq 6000); do grep -q DONE "$work_dir/jvm.out" && break; sleep 0.1; done
  local costs="- -"
  if [ -n "$tracer_pid" ]; then costs=$(prog_costs); fi
  echo end >&3
  exec 3>&-
  wait "$jvm"
  if [ -n "$tracer_pid" ]; then kill -TERM "$tracer_pid" 2>/dev/null || true; wait "$tracer_pid" || true; fi
  local calibrated
  calibrated=$(jq -r '.probe_cost.traced_event_ns // empty' "$work_dir/report.json" 2>/dev/null || true)
  echo "$(sed -n 's/.*ns_per_a=\([0-9.]*\).*/\1/p' "$work_dir/jvm.out") $costs ${calibrated:--}"
}

# Timed rounds run without run-time statistics (they cost ~20 ns per program run);
# one more round with them measures the programs alone.
declare -A results entry_ns return_ns calibrated_ns
sysctl -q kernel.bpf_stats_enabled=0
for ((r = 1; r <= rounds; r++)); do
  for mode in "${modes[@]}"; do
    read -r ns _ _ cal < <(run_mode "$mode")
    results[$mode]+="$ns "
    calibrated_ns[$mode]+="$cal "
  done
  echo "round $r/$rounds done" >&2
done
sysctl -q kernel.bpf_stats_enabled=1
for ((r = 1; r <= stats_rounds; r++)); do
  for mode in "${stats_modes[@]}"; do
    read -r _ entry ret _ < <(run_mode "$mode")
    entry_ns[$mode]+="$entry "
    return_ns[$mode]+="$ret "
  done
  echo "statistics round $r/$stats_rounds done" >&2
done

median() { tr ' ' '\n' | awk '$1 != "" && $1 != "-"' | sort -g |
  awk '{v[NR]=$1} END {if (NR == 0) print "-"; else print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
declare -A med
for mode in "${modes[@]}"; do med[$mode]=$(echo "${results[$mode]:-}" | median); done
for mode in "${!entry_ns[@]}"; do
  entry_ns[$mode]=$(echo "${entry_ns[$mode]}" | median)
  return_ns[$mode]=$(echo "${return_ns[$mode]}" | median)
done

if ((rounds == 0)); then
  printf 'A/B/C flow, %d calls of a() per run, programs'"'"' run time alone (bpf_stats), medians of %d rounds\n' \
    "$iterations" "$stats_rounds"
  printf 'The empty program on both probes (floor): %s ns entry and %s ns return\n' "${entry_ns[floor]}" "${return_ns[floor]}"
  printf '%-8s %10s %10s %8s %8s\n' mode "entry ns" "return ns" "entry +" "return +"
  for mode in "${stats_modes[@]}"; do
    awk -v n="$mode" -v en="${entry_ns[$mode]}" -v rn="${return_ns[$mode]}" -v fe="${entry_ns[floor]}" \
        -v fr="${return_ns[floor]}" 'BEGIN { printf "%-8s %10s %10s %8.0f %8.0f\n", n, en, rn, en - fe, rn - fr }'
  done
  exit 0
fi

events=16
floor_ev=$(awk -v m="${med[floor]}" -v b="${med[flag]}" -v e=$events 'BEGIN {print (m-b)/e}')
printf 'A/B/C flow, %d calls of a() per run (%d probe events each), work=%d, %d rounds, medians\n' \
  "$iterations" "$events" "$work" "$rounds"
floor_prog=$(awk -v e="${entry_ns[floor]}" -v r="${return_ns[floor]}" 'BEGIN {print (e + r) / 2}')
printf 'The empty program on both probes (floor): %.0f ns per event end to end (the JVM'"'"'s timing), %s ns entry and %s ns return (bpf_stats)\n' \
  "$floor_ev" "${entry_ns[floor]}" "${return_ns[floor]}"
printf '%-8s %11s %17s %8s %10s %10s %8s %8s %13s %11s\n' mode "ns per a()" "ns/event vs flag" "x floor" \
  "entry ns" "return ns" "entry +" "return +" "x floor(prog)" "calibrated"
for mode in "${modes[@]}"; do
  awk -v n="$mode" -v m="${med[$mode]}" -v b="${med[flag]}" -v e=$events -v f="$floor_ev" -v fp="$floor_prog" \
      -v en="${entry_ns[$mode]:--}" -v rn="${return_ns[$mode]:--}" -v fe="${entry_ns[floor]}" -v fr="${return_ns[floor]}" \
      -v cn="$(echo "${calibrated_ns[$mode]:-}" | median)" 'BEGIN {
    ev = (m - b) / e
    if (n == "noflag" || n == "flag") {
      printf "%-8s %11.1f %17s %8s %10s %10s %8s %8s %13s %11s\n", n, m, (n == "flag" ? "0 (reference)" : "-"), "-", "-", "-", "-", "-", "-", "-"
    } else {
      derived = (f + (en + rn) / 2 - fp) / f
      printf "%-8s %11.1f %17.1f %8.2f %10s %10s %8.0f %8.0f %13.2f %11s\n", n, m, ev, ev / f, en, rn, en - fe, rn - fr, derived, cn
    }
  }'
done
echo "x floor: per-event cost above the flag-only JVM divided by the floor's, from the JVM's own timing."
echo "entry/return ns: each program's mean run time (kernel.bpf_stats_enabled, separate round, ~20 ns of it"
echo "  the statistics); entry +/return +: above the empty programs' (the body's own cost per event);"
echo "  x floor(prog): (floor per event + program time above the empty programs') / floor,"
echo "  the same ratio from the kernel's own timing of the programs, which a noisy machine disturbs less."
echo "calibrated: the per-traced-event cost jmethodtime took out of its times (JSON probe_cost.traced_event_ns)."
