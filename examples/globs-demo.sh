#!/usr/bin/env bash
# --class and --method globs, decided in the kernel: only the get* methods of classes
# whose name ends in Shop or Inner under demo/globs/shop are traced; the untraced setters
# they call stay in their exclusive time. Needs root and a build.
# usage: examples/globs-demo.sh [N=2000] [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
n=${1:-2000}
shift $(( $# < 1 ? $# : 1 ))
# The workload waits for one line on stdin before it starts.
exec "$build/jmethodtime" --package demo/globs/shop --class '*Shop' --class '*Inner' --method 'get*' "$@" \
  -- "${JAVA:-java}" -cp "$build/examples/classes" demo.globs.GlobMain "$n" <<<go
