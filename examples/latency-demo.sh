#!/usr/bin/env bash
# Latency distributions in launch mode: demo.latency.Skewed makes CALLS calls of call(), sleeps of
# a known skewed spread (80% about 1 ms, 15% 2 to 4 ms, 4% 10 to 20 ms, 1% 30 to 60 ms), timed by
# the JVM too (its DONE line: its own nearest-rank percentiles); --slower-than lists each call of
# 20 ms or more. Needs root and a build.
# usage: examples/latency-demo.sh [CALLS=600] [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
calls=${1:-600}
shift $(( $# < 1 ? $# : 1 ))
# The workload waits for one line on stdin before it starts.
exec "$build/jmethodtime" --package demo/latency --slower-than 20ms --slow-calls 5 "$@" \
  -- "${JAVA:-java}" -cp "$build/examples/classes" demo.latency.Skewed "$calls" 1 <<<go
