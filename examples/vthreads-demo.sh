#!/usr/bin/env bash
# Virtual threads followed across unmounts (JDK 24+): THREADS virtual threads on as many
# carriers as CPUs, each ROUNDS calls of step() (work, Thread.sleep(MS), work), launched
# under jmethodtime --package demo/vt --raw. The JVM times step() itself; the script prints
# its figures after the report, whose step() row should match them. Needs root, a build and
# a JDK 24+ (JAVA, default Temurin 25 where the machine has it).
# usage: examples/vthreads-demo.sh [THREADS] [ROUNDS] [MS] [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
threads=${1:-64}
rounds=${2:-5}
ms=${3:-20}
shift $(( $# < 3 ? $# : 3 ))
java=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
if [ ! -x "$java" ]; then
  echo "vthreads-demo: no JDK 24+ at $java: set JAVA to one" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo go | "$build/jmethodtime" --package demo/vt --raw -o "$work/report.txt" "$@" -- \
  "$java" -cp "$build/examples/classes" demo.vt.VirtualTasks sleep "$threads" "$rounds" "$ms" 500 \
  >"$work/jvm.out"
cat "$work/report.txt"
done_line=$(grep '^DONE' "$work/jvm.out")
steps=$(sed -E 's/.*steps=([0-9]+).*/\1/' <<<"$done_line")
step_ns=$(sed -E 's/.*step_ns=([0-9]+).*/\1/' <<<"$done_line")
blocked_ns=$(sed -E 's/.*blocked_ns=([0-9]+).*/\1/' <<<"$done_line")
awk -v n="$steps" -v s="$step_ns" -v b="$blocked_ns" 'BEGIN {
  printf "The JVM timed itself: %d calls of step(), %.2f ms each, %.2f ms of it blocked\n", n, s / n / 1e6, b / n / 1e6 }'
