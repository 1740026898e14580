#!/usr/bin/env bash
# --per-thread in launch mode: threads worker-1..3 call task() 1000, 2000 and 3000 x N
# times, then main calls it 500 x N times; each row is one (method, thread) pair.
# Needs root and a build.
# usage: examples/threads-demo.sh [N=10] [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
n=${1:-10}
shift $(( $# < 1 ? $# : 1 ))
# The workload waits for one line on stdin before it starts.
exec "$build/jmethodtime" --per-thread --package demo/globs --method task --sort calls "$@" \
  -- "${JAVA:-java}" -cp "$build/examples/classes" demo.globs.Workers "$n" <<<go
