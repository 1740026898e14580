#!/usr/bin/env bash
# A real client on virtual threads: Debian's Tomcat 10.1 from the Debian root (its OpenJDK 21 or
# 25), in its own mount and pid namespaces, with its connector on virtual threads
# (useVirtualThreads="true"); the query webapp (examples/tomcat/query-webapp) runs one PostgreSQL
# query per request through the root's pgjdbc against a throwaway server on the host
# (examples/jdbc/pg.sh), and times PreparedStatement.executeQuery() itself. ab on loopback with
# more clients than connections (16 against 8) and carriers, so requests park on the pool and on
# the socket and their virtual threads unmount inside the driver.
#
#  1. wide: the JVM started with -XX:+DTraceMethodProbes, traced with --package org/postgresql
#     (every Java call traps): PgPreparedStatement.executeQuery's calls equal the servlet's, on
#     virtual threads; no frame lost across unmounts, no unmatched return, no frame dropped; its
#     elapsed time as measured (the corrected one plus the probe costs taken out) within 10% of
#     the servlet's own timing of the same calls; its probe events per request, the reference.
#  2. narrow, on standby: JDK 25, the same JVM put on standby under traffic; JDK 21, a JVM started
#     without the flag, put on standby under traffic (the one-time deoptimization ahead). Then
#     quiet until "Tracing", traced with --class org.postgresql.jdbc.PgPreparedStatement --method
#     executeQuery: the same exact counts, no frame lost, its corrected elapsed time within 10% of
#     the servlet's, and at most a quarter of the wide trace's probe events per request.
# Every figure is printed; servers, mounts and directories are gone whatever happens.
#
# usage: vthreads_pg_test.sh JMETHODTIME SOURCE_DIR WEBAPP ROOT JDK   (JDK: 21 or 25)
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (something needed is missing, unless CI=true).
set -uo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# != 5)) || { [ "$5" != 21 ] && [ "$5" != 25 ]; }; then
  echo "usage: $0 JMETHODTIME SOURCE_DIR WEBAPP ROOT 21|25" >&2
  exit 2
fi
jmt=$1 src=$2 webapp=$3 root=$4 jdk=$5
java=/usr/lib/jvm/java-$jdk-openjdk-amd64/bin/java
need_root_and_btf
need_executable "$jmt" "$jmt (build jmethodtime)"
need_file "$webapp/WEB-INF/classes/demo/server/QueryServlet.class" \
  "the query webapp in $webapp (apt-get install libtomcat10-java, reconfigure and build)"
need_file "$root/.jmethodtime-root" "the Debian root $root (tests/containers/make-root.sh)"
need_executable "$root$java" "OpenJDK $jdk in $root (tests/containers/make-root.sh)"
need_file "$root/usr/share/java/postgresql.jar" "pgjdbc in $root (tests/containers/make-root.sh)"
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null ||
  missing+=("PostgreSQL's server binaries (apt-get install postgresql)")
need_tools ab jq curl setpriv unshare pgrep
skip_or_fail_if_missing

# shellcheck source=../../examples/jdbc/pg.sh
source "$src/examples/jdbc/pg.sh"
# shellcheck source=../../examples/tomcat/tomcat.sh
source "$src/examples/tomcat/tomcat.sh"
# shellcheck source=tomcat_test_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/tomcat_test_setup.sh" || exit 1
work=$(mktemp -d "/tmp/jmt-vthreads-pg-$jdk.XXXXXX")
chmod 755 "$work"
trap 'tomcat_test_cleanup; pg_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

n=${JMT_VTHREADS_PG_REQUESTS:-600}
clients=16
class=org/postgresql/jdbc/PgPreparedStatement

# The servlet's counters: calls, ns inside executeQuery, calls on a virtual thread.
servlet_stats() {
  curl -sf -m 10 "$TC_URL?stats" | awk '$1 == "calls" { print $2, $4, $6 }'
}
wait_tracing() {
  for _ in $(seq 1200); do
    grep -q '^Tracing' "$1" 2>/dev/null && return 0
    kill -0 "$jmt_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$1" >&2
  fail "jmethodtime did not start tracing"
}

server() {  # PROBES: start the server, warm it with 2,000 requests
  TC_ROOT=$root JAVA=$java TC_VIRTUAL_THREADS=true TC_WEBAPP=$webapp TC_WEBAPP_URL=/query \
    TC_JAVA_OPTS="-Djmt.jdbc.url=$PG_URL" TC_PROBES=$1 tc_start ||
    fail "Tomcat (OpenJDK $jdk in $root) did not start"
  load 2000 "$clients"
}

# trace NAME FILTER...: quiet until "Tracing", then n requests; checks the counts and that no
# frame was lost; sets per_call_ns (the servlet's), events_per_request; the report in $work/NAME.json.
trace() {
  local name=$1 out=$work/$1.json c0 ns0 v0 calls ns virtual
  shift
  "$jmt" -p "$TC_PID" --json -o "$out" "$@" 2>"$out.err" &
  jmt_pid=$!
  wait_tracing "$out.err"
  read -r c0 ns0 v0 < <(servlet_stats)
  load "$n" "$clients"
  read -r calls ns virtual < <(servlet_stats)
  kill -INT "$jmt_pid"
  wait "$jmt_pid" || { cat "$out.err" >&2; fail "$name: jmethodtime exited with $?"; }
  jmt_pid=""
  sed 's/^/   /' "$out.err"
  calls=$((calls - c0)) ns=$((ns - ns0)) virtual=$((virtual - v0))
  ((calls == n)) || fail "$name: the servlet counted $calls queries for $n requests"
  ((virtual == n)) || fail "$name: $virtual of the $n queries ran on a virtual thread"
  per_call_ns=$((ns / n))
  local got
  got=$(jq --arg c "$class" '[.methods[] | select(.class == $c and .method == "executeQuery"
        and .signature == "()Ljava/sql/ResultSet;") | .calls] | add // 0' "$out")
  ((got == n)) || fail "$name: PgPreparedStatement.executeQuery(): $got calls, the servlet's $n"
  local key value
  for key in vt_frames_lost unmatched_returns dropped_frames depth_overflow vt_unfollowed vt_layout_mismatch; do
    value=$(jq ".diagnostics.$key" "$out")
    [ "$value" = 0 ] || fail "$name: $key $value"
  done
  [ "$(jq -r '.virtual_threads_not_followed' "$out")" = "" ] ||
    fail "$name: virtual threads not followed: $(jq -r '.virtual_threads_not_followed' "$out")"
  value=$(jq '.diagnostics.vt_unmounts' "$out")
  ((value > 0)) || fail "$name: no virtual thread unmounted during the trace (the test's premise)"
  events_per_request=$(($(jq '.overhead.events' "$out") / n))
  note "$name: $n of $n calls on virtual threads, $value unmounts, no frame lost; $events_per_request probe events per request at $(jq -r '.probe_cost.range.traced_event_ns | "\(.[0])-\(.[1])"' "$out") ns each"
}

# within_10_percent WHAT GOT_NS WANT_NS
within_10_percent() {
  note "$1: $(awk -v g="$2" -v w="$3" 'BEGIN { printf "%.3f ms per call against the servlet'"'"'s %.3f ms (%+.1f%%)", g / 1e6, w / 1e6, (g - w) * 100 / w }')"
  awk -v g="$2" -v w="$3" 'BEGIN { exit !(g >= 0.9 * w && g <= 1.1 * w) }' || fail "$1: not within 10% of the servlet's timing"
}

# The row's elapsed inclusive time per call: corrected, and as measured (with the probe costs
# the correction took out).
row() {  # FILE -> "corrected_ns measured_ns"
  jq -r --arg c "$class" '.probe_cost as $p | .methods[] | select(.class == $c and .method == "executeQuery"
      and .signature == "()Ljava/sql/ResultSet;") |
    "\(.wall_incl_ns / .calls | floor) \((.wall_incl_ns + .traced_events_incl * $p.traced_event_ns
      + (.events_incl - .traced_events_incl) * $p.rejected_event_ns) / .calls | floor)"' "$1"
}

pg_start || fail "PostgreSQL did not start"
note "OpenJDK $jdk in $root, Tomcat on virtual threads, PostgreSQL 127.0.0.1:$PG_PORT; $n requests per trace, $clients clients"

# --- 1. wide, the flag at start --------------------------------------------------------------------
server -XX:+DTraceMethodProbes
trace wide --package org/postgresql
wide_events=$events_per_request
read -r corrected measured < <(row "$work/wide.json")
within_10_percent "wide: executeQuery as measured" "$measured" "$per_call_ns"
note "wide: executeQuery corrected $(awk -v g="$corrected" 'BEGIN { printf "%.3f", g / 1e6 }') ms per call (the servlet's timing holds the traps)"

# --- 2. narrow, on standby ---------------------------------------------------------------------------
if [ "$jdk" = 21 ]; then
  tc_stop
  server ""
fi
start_traffic "$clients"
"$jmt" standby -p "$TC_PID" >"$work/standby.txt" 2>"$work/standby.err" ||
  { cat "$work/standby.err" >&2; fail "standby failed"; }
stop_traffic
sed 's/^/   /' "$work/standby.txt"
grep -q "^pid $TC_PID is ready: " "$work/standby.txt" || fail "standby did not say pid $TC_PID is ready"
sleep 2
trace narrow --class org.postgresql.jdbc.PgPreparedStatement --method executeQuery
read -r corrected measured < <(row "$work/narrow.json")
within_10_percent "narrow: executeQuery" "$corrected" "$per_call_ns"
((events_per_request * 4 <= wide_events)) ||
  fail "narrow: $events_per_request probe events per request, over a quarter of the wide trace's $wide_events"
note "pass"
