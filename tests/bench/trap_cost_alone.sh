#!/usr/bin/env bash
# What a trap costs the JVM from one run to the next, with no jmethodtime: FixedWork (the A/B/C
# flow, c() sized to C_US untraced) times a() untraced, then runs ITERATIONS calls with an empty
# BPF program as a uprobe (empty_uprobes.c) at the method-entry USDT site, the return site, both,
# or neither; the JVM's timed a() less its untraced a(), over the traps inside one a() (8, 8, 16,
# 16), is what one trap cost it in that run. The four kinds run interleaved, RUNS rounds.
#
# Per run it prints the kind, the JVM's untraced and timed a() and the cost per trap; per kind the
# range; per round both / (entry + return), which is 1 where traps add up. "neither" says how far
# the JVM's own timing moves with no trap at all. No figure is asserted:
# docs/accuracy-measurements.md records the runs.
#
# usage: tests/bench/trap_cost_alone.sh C_US [RUNS] [ITERATIONS]   (root, after the build;
#        JAVA: a java whose libjvm.so has the probes, default Temurin 25 or java on PATH)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
classes=$build/examples/classes
c_us=${1:?usage: trap_cost_alone.sh C_US [RUNS] [ITERATIONS]}
runs=${2:-5}
iterations=${3:-$([ "$c_us" -le 2 ] && echo 20000 || echo 10000)}
java=${JAVA:-$(ls /usr/lib/jvm/temurin-25-jdk-*/bin/java 2>/dev/null | head -1)}
java=${java:-java}
work=$(mktemp -d /tmp/jmt-trapcost.XXXXXX)
trap 'pkill -P $$ 2>/dev/null; rm -rf "$work"' EXIT

cc -O2 -o "$work/empty_uprobes" "$root/tests/bench/empty_uprobes.c" || exit 1
libjvm=$(dirname "$(readlink -f "$(command -v "$java")")")/../lib/server/libjvm.so
[ -f "$libjvm" ] || { echo "no libjvm.so beside $java: set JAVA" >&2; exit 1; }

# The file offset of the USDT probe NAME in libjvm.so: its address less its LOAD segment's.
site() {
  local addr kind offset vaddr _ size
  addr=$(readelf -n "$libjvm" | awk -v n="$1" '$2 == n { getline; sub(",", "", $2); print $2; exit }')
  [ -n "$addr" ] || { echo "no $1 probe in $libjvm" >&2; exit 1; }
  while read -r kind offset vaddr _ _ size _; do
    [ "$kind" = LOAD ] && ((addr >= vaddr && addr < vaddr + size)) &&
      { printf '0x%x\n' $((addr - vaddr + offset)); return; }
  done < <(readelf -lW "$libjvm")
  echo "no LOAD segment holds $1 in $libjvm" >&2
  exit 1
}
entry=$(site method__entry) return=$(site method__return)

field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" ${2#DONE }"; }

# one_run KIND: prints "untraced timed per_trap" for one JVM.
one_run() {
  local sites=() traps=16
  case $1 in entry) sites=("$entry") traps=8 ;; return) sites=("$return") traps=8 ;;
    both) sites=("$entry" "$return") ;; esac
  rm -f "$work/go" "$work/x.err"
  mkfifo "$work/go"
  "$java" -XX:+DTraceMethodProbes -cp "$classes" demo.abc.FixedWork "$iterations" "$c_us" <"$work/go" >"$work/jvm.out" &
  local jvm=$! probes=
  exec 3>"$work/go"
  for _ in $(seq 600); do grep -q READY "$work/jvm.out" && break; sleep 0.1; done
  if [ ${#sites[@]} -gt 0 ]; then
    "$work/empty_uprobes" "$jvm" "$libjvm" "${sites[@]}" 2>"$work/x.err" &
    probes=$!
    for _ in $(seq 100); do grep -q attached "$work/x.err" && break; sleep 0.05; done
  fi
  echo go >&3
  exec 3>&-
  wait "$jvm"
  [ -n "$probes" ] && { kill -INT "$probes"; wait "$probes"; }
  local done untraced timed
  done=$(grep DONE "$work/jvm.out")
  untraced=$(field a_ns "$done") timed=$(field traced_a_ns "$done")
  echo "$untraced $timed $(((timed - untraced) / traps))"
}

echo "c() $c_us us, $iterations calls of a() per run, $java; per trap: (timed a() - untraced a()) / traps"
for round in $(seq "$runs"); do
  for kind in neither entry return both; do
    read -r untraced timed per_trap < <(one_run "$kind")
    printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$kind" "$untraced" "$timed" "$per_trap" | tee -a "$work/runs.tsv"
  done
done
awk -F'\t' '{ d = $4 - $3; pct = 100 * d / $3; per[$2] = per[$2] sprintf(" %d", $5)
  if (!($2 in lo) || pct < lo[$2]) lo[$2] = pct; if (!($2 in hi) || pct > hi[$2]) hi[$2] = pct
  delta[$1, $2] = d }
  END { split("neither entry return both", kinds, " ")
    for (i = 1; i <= 4; i++) { k = kinds[i]; printf "%-8s a() moved %+.1f%% to %+.1f%%; ns per trap:%s\n", k, lo[k], hi[k], per[k] }
    printf "both / (entry + return) by round:"
    for (r = 1; (r, "both") in delta; r++) printf " %.2f", delta[r, "both"] / (delta[r, "entry"] + delta[r, "return"])
    printf "\n" }' "$work/runs.tsv"
