#!/usr/bin/env bash
# Launch mode: jmethodtime starts the JVM itself (adding -XX:+DTraceMethodProbes),
# attaches before its first Java method, and reports when it exits. Here it shows
# where a small program's start-up goes before its main method runs: System's
# initialisation phases and the class loaders. Needs root and a build.
# usage: examples/launch-demo.sh [extra jmethodtime options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
exec "$build/jmethodtime" --top 10 --sort incl --package java/lang/System --package jdk/internal/loader "$@" \
  -- "${JAVA:-java}" -cp "$build/examples/classes" demo.launch.Startup 1000
