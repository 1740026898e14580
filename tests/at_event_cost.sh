#!/bin/bash
# usage: at_event_cost.sh TARGET_NS JMETHODTIME JAVA CLASSES COMMAND [ARG...]
# Runs COMMAND where one probe event of jmethodtime's programs costs the JVM about TARGET_NS:
# measures what an event costs on this host (a launched trace of demo.getters.Getters, the
# report's probe_cost.traced_event_ns), then sets JMT_TEST_TRAP_NS to the rest (0 on a host
# that already pays TARGET_NS or more). A fixed addition would test a slow host at twice the
# cost the slow-trap tests stand for. Exit status: COMMAND's; when the measure fails, 1 with
# CI=true, else 77 (skipped).
set -uo pipefail
if (($# < 5)); then
  echo "usage: $0 TARGET_NS JMETHODTIME JAVA CLASSES COMMAND [ARG...]" >&2
  exit 2
fi
target=$1 jmt=$2 java=$3 classes=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$jmt" --json -o "$work/cost.json" --package demo/getters -- \
  "$java" -cp "$classes" demo.getters.Getters 30000 </dev/null >"$work/out" 2>"$work/err"; then
  cat "$work/err" >&2
  echo "at_event_cost.sh: the trace that measures one probe event's cost failed" >&2
  [ "${CI:-}" = true ] && exit 1
  echo "skipped: no trace here (root and BPF are needed)" >&2
  exit 77
fi
native=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["probe_cost"]["traced_event_ns"])' \
  "$work/cost.json") || exit 1
trap_ns=$((target > native ? target - native : 0))
echo "one probe event costs $native ns on this host: JMT_TEST_TRAP_NS=$trap_ns for about $target ns"
rm -rf "$work"
trap - EXIT
JMT_TEST_TRAP_NS=$trap_ns exec "$@"
