#!/usr/bin/env bash
# docs/switch.md's quiet, busy and standby rows on JDK 21: Tomcat 10.1 from the Debian root
# (tests/containers/make-root.sh) on its OpenJDK 21, in its own namespaces, its connector on
# virtual threads, the query webapp (examples/tomcat/query-webapp) against a throwaway PostgreSQL
# on the host. Each JVM warmed with 3,000 requests, traced with --class 'org.apache.catalina.*'
# --class demo.server.QueryServlet, N requests one at a time after "Tracing"; probe events per
# request of a first and a later trace:
#
#   flag at start   started with -XX:+DTraceMethodProbes (the reference)
#   quiet           started without it, quiet during each switch
#   busy            the same with traffic until "Tracing"
#   standby         `jmethodtime standby -p` under traffic first, then quiet during each switch
#
# Every trace's end has traffic while it waits for the code it deoptimized. No figure is
# asserted; the probe event cost of the run is printed with them.
#
# usage: tests/bench/switch_jdk21.sh [REQUESTS]   (root; a build in build/; default 1000)
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$src/build}
jmt=$build/jmethodtime
n=${1:-1000}
root=${JMT_TEST_ROOT:-/var/cache/jmethodtime/trixie-root}
work=$(mktemp -d /tmp/jmt-switch21.XXXXXX)
chmod 755 "$work"
# shellcheck source=../../examples/jdbc/pg.sh
source "$src/examples/jdbc/pg.sh"
# shellcheck source=../../examples/tomcat/tomcat.sh
source "$src/examples/tomcat/tomcat.sh"
bg=""
stop_traffic() { if [ -n "$bg" ]; then kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null; fi; bg=""; }
start_traffic() { ab -t 900 -n 100000000 -c 1 "$TC_URL" >/dev/null 2>&1 & bg=$!; }
cleanup() { stop_traffic; tc_stop; pg_stop; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
filter=(--class 'org.apache.catalina.*' --class demo.server.QueryServlet)

server() {  # PROBES
  TC_ROOT=$root JAVA=/usr/lib/jvm/java-21-openjdk-amd64/bin/java TC_VIRTUAL_THREADS=true \
    TC_WEBAPP=$build/examples/tomcat/query-webapp TC_WEBAPP_URL=/query \
    TC_JAVA_OPTS="-Djmt.jdbc.url=$PG_URL -Djmt.query.sleep_ms=0 -Djmt.query.rows=10" TC_PROBES=$1 tc_start ||
    exit 1
  ab -n 3000 -c 1 "$TC_URL" >/dev/null 2>&1
}
# trace NAME BUSY: prints NAME, probe events per request, the doGet calls, the cold line's state
trace() {
  local out=$work/$1.json pid
  [ "$2" = busy ] && start_traffic
  rm -f "$out.err"  # not an earlier run's "Tracing"
  "$jmt" -p "$TC_PID" --json -o "$out" "${filter[@]}" 2>"$out.err" &
  pid=$!
  until grep -q '^Tracing' "$out.err" 2>/dev/null; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  stop_traffic
  ab -n "$n" -c 1 "$TC_URL" >/dev/null 2>&1
  kill -INT "$pid"
  until grep -q "code deoptimized at the trace's end\|^Detached" "$out.err" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || break; sleep 0.1
  done
  start_traffic
  wait "$pid"
  stop_traffic
  printf '%-16s %8s events/request  doGet %s  cold %s  back %s of %s  event %s ns\n' "$1" \
    "$(($(jq '.overhead.events' "$out") / n))" \
    "$(jq '[.methods[] | select(.method == "doGet") | .calls] | add' "$out")" \
    "$(jq '.probes.cold' "$out")" "$(jq '.probes.hot_back' "$out")" "$(jq '.probes.hot_methods' "$out")" \
    "$(jq -c '.probe_cost.range.traced_event_ns' "$out")"
  sleep 2
}

pg_start || exit 1
server -XX:+DTraceMethodProbes
trace at-start quiet
tc_stop
server ""
trace quiet-first quiet
trace quiet-later quiet
tc_stop
server ""
trace busy-first busy
trace busy-later busy
tc_stop
server ""
start_traffic
"$jmt" standby -p "$TC_PID" | sed 's/^/   /'
stop_traffic
sleep 2
trace standby-first quiet
trace standby-later quiet
