#!/usr/bin/env bash
# What one probe event costs a JVM in its own code, measured two ways against the JVM's own
# timing of the A/B/C flow (demo.abc.Batches: FixedWork's a(), b(), c(), 16 probe events per a(),
# on Temurin 25 with -XX:+DTraceMethodProbes):
#
#   windows    jmt-trap-windows: both probes, the return probe alone, both, the entry probe alone,
#              in turn (WINDOW_MS each); the JVM's CPU time per traced call in each kind of window
#              gives one entry's and one return's cost, trap and refill wherever it landed
#              (user/tools/trap_windows_main.cpp)
#   edge       the likely cost jmethodtime takes out of a JVM without I/O: the gaps' edge plus its
#              refill share (user/cost/cost_range.h)
#   truth      the JVM's timing of a() in the both-probe windows with the programs untimed (as in
#              a trace: kernel.bpf_stats adds to every event) less its untraced timing before the
#              trace, over 16 events; and by the same windows as the first line (the programs
#              timed), in the JVM's timing instead of its CPU time
#
# For each run it prints the three, and how far a()'s corrected time would be from its untraced
# time with each estimate (16 events x (truth - estimate) / untraced a()), with the gaps' edge of
# the run. No figure is asserted.
#
# usage: tests/bench/trap_windows.sh [C_US...]   (root; BUILD_DIR or build/; default: 5 2, c()'s
#        untraced time in us: 5 is the A/B/C flow at U=1000, 2 at U=400; RUNS (default 3) JVMs
#        each; WINDOW_SECONDS (default 5) of windows per JVM; WINDOW_MS (default 200))
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
classes=$build/examples/classes
java=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
runs=${RUNS:-3} seconds=${WINDOW_SECONDS:-5} window_ms=${WINDOW_MS:-200}
[ -x "$java" ] || { echo "trap_windows.sh: needs Temurin 25 at $java" >&2; exit 1; }
[ -x "$build/jmt-trap-windows" ] || { echo "trap_windows.sh: build first (cmake --build build)" >&2; exit 1; }
work=$(mktemp -d /tmp/jmt-trap-windows.XXXXXX)
trap 'rm -rf "$work"' EXIT

one_run() {  # c_us batch
  local c_us=$1 batch=$2 line tool
  coproc JVM { exec "$java" -XX:+DTraceMethodProbes -cp "$classes" demo.abc.Batches "$c_us" $((seconds + 1)) "$batch"; }
  read -r line <&"${JVM[0]}"
  [ "$line" = READY ] || { echo "the JVM said: $line" >&2; return 1; }
  "$build/jmt-trap-windows" "$JVM_PID" "$seconds" "$window_ms" demo/abc > "$work/windows" 2>&1 &
  tool=$!
  until grep -q '^attached' "$work/windows" 2>/dev/null; do
    kill -0 "$tool" 2>/dev/null || { cat "$work/windows" >&2; return 1; }
    sleep 0.1
  done
  echo go >&"${JVM[1]}"
  wait "$tool" || { cat "$work/windows" >&2; return 1; }
  cat <&"${JVM[0]}" > "$work/batches"
  wait "$JVM_PID" 2>/dev/null
  python3 - "$work/windows" "$work/batches" "$batch" <<'PY'
import re, statistics, sys
windows_file, batches_file, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(windows_file).read()
windows = [(f[1], int(f[2]), int(f[3]), f[10] == '1')
           for f in (l.split() for l in text.splitlines() if l.startswith('window '))]
batches = [(int(f[1]), int(f[2]), int(f[3])) for f in (l.split() for l in open(batches_file) if l.startswith('batch '))]
def kind_of(t0, t1):
    return next(((k, timed) for k, s, e, timed in windows if s <= t0 and t1 <= e), None)
def a_ns(kind, timed=True):  # the JVM's median time per a() in one kind of window
    v = [(t1 - t0) / batch for p, t0, t1 in batches if p == 1 and kind_of(t0, t1) == (kind, timed)]
    return statistics.median(v) if v else float('nan')
untraced = statistics.median([(t1 - t0) / batch for p, t0, t1 in batches if p == 0])
both, ret, ent = a_ns('both', False), a_ns('return'), a_ns('entry')
truth = (both - untraced) / 16
by_timing = (2 * a_ns('both') - ret - ent) / 16
est = float(re.search(r'\(([0-9.]+) ns per event\)', text).group(1))
edge = int(re.search(r"gaps' edge ([0-9]+) ns", text).group(1))
likely = int(re.search(r'edge plus refill\) ([0-9]+) ns', text).group(1))
err = lambda x: 100 * 16 * (truth - x) / untraced  # what a() corrected with x would be off by
print(f"  gaps' edge {edge} ns; a() untraced {untraced / 1000:.1f} us, with both probes {both / 1000:.1f} us")
print(f"  truth {truth:.0f} ns per event ({by_timing:.0f} ns by the windows in the JVM's timing)")
print(f"  windows {est:.0f} ns ({est / truth:.2f}x, a() corrected {err(est):+.1f}%); "
      f"edge plus refill {likely} ns ({likely / truth:.2f}x, a() corrected {err(likely):+.1f}%)")
PY
}

[ $# -gt 0 ] || set -- 5 2
for c_us in "$@"; do
  batch=$(( c_us >= 5 ? 40 : 100 ))  # about 3 ms per batch
  echo "c() ${c_us} us untraced (a() about $((c_us * 27 / 2)) us), ${seconds} s of ${window_ms} ms windows per JVM"
  for ((i = 1; i <= runs; i++)); do
    one_run "$c_us" "$batch" || exit 1
  done
done
