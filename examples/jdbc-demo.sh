#!/usr/bin/env bash
# The DTrace example's investigation in one command: the PostgreSQL JDBC driver against a real PostgreSQL
# server. Starts a throwaway server (examples/jdbc/pg.sh), runs the JDBC workload
# (examples/jdbc: threads with a connection each, prepared statements, every column of every
# row read with getString/getInt, and SELECT pg_sleep(0.05) calls that wait on the server) in a
# JVM with -XX:+DTraceMethodProbes, attaches jmethodtime -p PID --package org/postgresql before
# the work starts, and prints the top methods by calls, elapsed inclusive/exclusive and on-CPU
# inclusive/exclusive time and time inside untraced callees (--foreign: the JDK, the socket) from
# that one trace (--json, read with jq), plus a flame graph of its call paths. The server, the JVM and every temporary file are gone when it ends, also on Ctrl-C
# or SIGTERM. Needs root, a build, and Debian's postgresql, libpostgresql-jdbc-java and jq
# (.ci/install-deps installs them).
#
# usage: examples/jdbc-demo.sh [--launch] [--raw] [--per-thread] [--top N] [--flamegraph FILE.html] [--json FILE]
#                              [JdbcLoad options: --threads N --rows N --rounds N --executes N
#                               --sleeps N --sleep-ms N]
#   --launch      launch mode instead: jmethodtime --package org/postgresql -- java ... JdbcLoad
#                 (traced from the JVM's first Java method: connecting and creating the table too)
#   --raw         times as measured, the probes' own cost left in (jmethodtime --raw)
#   --per-thread  rows split by thread in the JSON (jmethodtime --per-thread); the tables add the
#                 threads up, and getString's calls are shown per thread
#   --top N       rows per table (default 5)
#   --flamegraph  where the flame graph goes (default: BUILD/jdbc.html)
#   --json FILE   also keep jmethodtime's JSON report (every method)
#   JdbcLoad runs 4 threads (fewer on a host with fewer CPUs, so that threads waiting for a CPU do
#   not pass for threads waiting on the server), 1000 rows, 3 prepares x 2 executes and 5 sleeps of
#   50 ms per thread unless told otherwise.
# Environment: BUILD_DIR (default: build), JMETHODTIME (default: BUILD/jmethodtime), JDBC_CLASSES
# (default: BUILD/examples/jdbc/classes), JAVA (default: java), PGJDBC_JAR (default:
# /usr/share/java/postgresql.jar), and pg.sh's PG_BIN and PG_OS_USER.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
java=${JAVA:-java}
jar=${PGJDBC_JAR:-/usr/share/java/postgresql.jar}
jmt=${JMETHODTIME:-$build/jmethodtime}
classes=${JDBC_CLASSES:-$build/examples/jdbc/classes}

cpus=$(nproc 2>/dev/null || echo 4)
launch=0 top=5 flamegraph=$build/jdbc.html keep_json="" raw=() per_thread=()
app_args=(--threads $((cpus < 4 ? cpus : 4)))
while (($#)); do
  case $1 in
    --launch) launch=1; shift ;;
    --raw) raw=(--raw); shift ;;
    --per-thread) per_thread=(--per-thread); shift ;;
    --top) top=${2:?--top needs a number}; shift 2 ;;
    --flamegraph) flamegraph=${2:?--flamegraph needs a file}; shift 2 ;;
    --json) keep_json=${2:?--json needs a file}; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) app_args+=("$1"); shift ;;
  esac
done

die() { echo "jdbc-demo: $*" >&2; exit 1; }

# await_line FILE PATTERN PID SECONDS WHO WHAT: waits until FILE has a line matching PATTERN;
# dies with FILE's text when PID exits first, or when SECONDS pass.
await_line() {
  local file=$1 pattern=$2 pid=$3 seconds=$4 who=$5 what=$6 i
  for ((i = 0; i < seconds * 10; i++)); do
    grep -q "$pattern" "$file" && return 0
    pg_alive "$pid" || { cat "$file" >&2; die "$who exited before it could $what"; }
    sleep 0.1
  done
  die "$who did not $what within $seconds s"
}
[ -x "$jmt" ] || die "no $jmt: build first (cmake -S . -B build && cmake --build build -j2)"
[ -r "$jar" ] || die "no PostgreSQL JDBC driver at $jar: apt-get install libpostgresql-jdbc-java (or .ci/install-deps), or set PGJDBC_JAR"
[ -f "$classes/demo/jdbc/JdbcLoad.class" ] ||
  die "no compiled JDBC example in $classes: rebuild after installing libpostgresql-jdbc-java (cmake -S . -B build && cmake --build build -j2)"
command -v "$java" >/dev/null || die "$java not found"
command -v jq >/dev/null || die "jq not found: apt-get install jq (or .ci/install-deps)"

# shellcheck source=examples/jdbc/pg.sh
source "$root/examples/jdbc/pg.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/jmt-jdbc-demo.XXXXXX")
java_pid="" jmt_pid=""
# Stops (TERM, then KILL after 5 s) and reaps one child of this script.
stop_child() {
  local i
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do pg_alive "$1" || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  trap - INT TERM
  exec 3>&-
  stop_child "$java_pid"
  stop_child "$jmt_pid"
  pg_stop
  rm -rf "$work"
  if ((rc == 130 || rc == 143)); then
    echo "jdbc-demo: interrupted; the JVM and the server are stopped, their files removed" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pg_start || die "could not start PostgreSQL"
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT, data in $PG_DIR (user $PG_OS_USER)"

jmt_opts=(--package org/postgresql --foreign --json -o "$work/report.json" --flamegraph "$flamegraph" "${raw[@]}"
          "${per_thread[@]}")
cp=$classes:$jar
if ((launch)); then
  # jmethodtime starts the JVM (adding -XX:+DTraceMethodProbes) and traces it from its start;
  # in the background so that a signal to this script is handled at once.
  # The JVM's output (jmethodtime's stdout) is kept for its DONE line, and printed in order
  # between jmethodtime's first line and its last ones.
  "$jmt" "${jmt_opts[@]}" -- "$java" -cp "$cp" demo.jdbc.JdbcLoad --no-wait \
    "${app_args[@]}" "$PG_URL" >"$work/java.out" 2>"$work/jmt.err" &
  jmt_pid=$!
  echo "jmethodtime runs JdbcLoad (launch mode)"
  rc=0
  wait "$jmt_pid" || rc=$?
  jmt_pid=""
  grep '^Tracing' "$work/jmt.err" || true
  cat "$work/java.out"
  grep -v '^Tracing' "$work/jmt.err" || true
  ((rc == 0)) || die "jmethodtime or the JVM failed (exit status $rc)"
else
  # The JVM creates the table and opens its connections, prints READY, and waits for a line on
  # stdin (the fifo) before the work starts; jmethodtime attaches in between.
  mkfifo "$work/go"
  "$java" -XX:+DTraceMethodProbes -cp "$cp" demo.jdbc.JdbcLoad "${app_args[@]}" "$PG_URL" \
    <"$work/go" >"$work/java.out" 2>&1 &
  java_pid=$!
  exec 3>"$work/go"
  await_line "$work/java.out" '^READY' "$java_pid" 60 "the JVM" "print READY"
  echo "JdbcLoad (pid $java_pid) created its table and opened its connections; attaching"

  : >"$work/jmt.err"
  "$jmt" -p "$java_pid" "${jmt_opts[@]}" 2>"$work/jmt.err" &
  jmt_pid=$!
  await_line "$work/jmt.err" '^Tracing' "$jmt_pid" 30 "jmethodtime" "attach"
  cat "$work/jmt.err"
  echo go >&3
  exec 3>&-
  rc=0
  wait "$java_pid" || rc=$?
  java_pid=""
  grep -v '^READY\|^BASELINE' "$work/java.out" || true
  ((rc == 0)) || die "the JVM failed (exit status $rc)"
  rc=0
  wait "$jmt_pid" || rc=$?
  jmt_pid=""
  grep -v '^Tracing' "$work/jmt.err" || true
  ((rc == 0)) || die "jmethodtime failed (exit status $rc)"
fi
[ -s "$work/report.json" ] || die "jmethodtime wrote no report"
[ -z "$keep_json" ] || cp "$work/report.json" "$keep_json"

# --- five tables from the one trace -----------------------------------------------------------
read -r n_methods n_calls seconds times traced_ns rejected_ns cost_source < <(jq -r '[(.methods | length),
  ([.methods[].calls] | add // 0), (.duration_ns / 1e7 | round / 100), .times,
  .probe_cost.traced_event_ns, .probe_cost.rejected_event_ns, .probe_cost.source] | @tsv' \
  "$work/report.json")
# What the cost taken out rests on (probe_cost.source, docs/outputs.md).
case $cost_source in
  paid) calibrated="what the JVM paid per event (its CPU per I/O call before and during the trace)" ;;
  windows) calibrated="what the JVM paid per event in windows after the trace" ;;
  gaps) calibrated="the lower edge of the gaps between the JVM's probe events plus the refill after each" ;;
  *) calibrated="the calibration (too few gaps between probe events)" ;;
esac
echo
echo "Traced $n_methods methods of org/postgresql for $seconds s, $n_calls calls."
if [ "$times" = raw ]; then
  echo "Times as measured, the probes' own cost included (--raw)."
else
  echo "Times exclude the probes' own cost: $traced_ns ns per traced event, $rejected_ns ns per filtered-out event, from $calibrated (--raw to keep it)."
fi
jq -r '.overhead | "The probes: \(.events) events (every Java call traps, traced or not), about \(.trap_ns / 1e6 | round) ms of trap time"
  + (if .jvm_cpu_ns == null then "." else ", \((.share // 0) * 100 | round)% of the JVM'"'"'s \(.jvm_cpu_ns / 1e6 | round) ms on a CPU"
  + (if .jvm_cpu_early then " (read up to 25 ms before it exited)." else "." end) end)' \
  "$work/report.json"
echo "Elapsed: wall-clock time from entry to return; CPU: the time the thread was on a CPU meanwhile."
echo "Incl: with the traced methods it called; Excl: without them. Foreign: the part of Excl inside"
echo "untraced callees (JDK code, the socket), elapsed and on a CPU."

# ns as jmethodtime prints them: three significant digits in ns, us, ms or s.
awk_t='function t(ns,   u, i, v) {
  if (ns < 1000) return ns " ns"
  split("us ms s", u, " ")
  v = ns / 1000
  for (i = 1; i < 3 && v >= 999.5; i++) v /= 1000
  if (v >= 99.95) return sprintf("%.0f %s", v, u[i])
  if (v >= 9.995) return sprintf("%.1f %s", v, u[i])
  return sprintf("%.2f %s", v, u[i])
}'

# The methods, rows of one method on several threads (--per-thread) added up (marked * when
# every thread's row is).
# shellcheck disable=SC2016  # jq's $e, not the shell's
jq_merged='def merged: [.methods | group_by([.class, .method, .signature])[] |
  (.[0] | {class, method, signature}) + {probe_dominated: (map(.probe_dominated) | all)} +
  (reduce (.[] | to_entries[] | select(.key != "tid" and (.value | type) == "number")) as $e
     ({}; .[$e.key] += $e.value))];'

table() {  # TITLE JSON_KEY
  echo
  echo "Top $top by $1"
  jq -r --arg key "$2" --argjson top "$top" "$jq_merged"'merged | sort_by(-.[$key], .class, .method, .signature) | .[:$top][] |
      [.calls, .wall_incl_ns, .wall_excl_ns, .cpu_incl_ns, .cpu_excl_ns, .wall_foreign_ns, .cpu_foreign_ns,
       .class + "." + .method + .signature + (if .probe_dominated then " *" else "" end)] | @tsv' \
    "$work/report.json" | awk -F'\t' "$awk_t"'
    BEGIN { printf "%7s  %12s  %12s  %9s  %9s  %9s  %11s  %s\n", "Calls", "Elapsed Incl", "Elapsed Excl", "CPU Incl", "CPU Excl", "Foreign", "CPU Foreign", "Method" }
    { printf "%7d  %12s  %12s  %9s  %9s  %9s  %11s  %s\n", $1, t($2), t($3), t($4), t($5), t($6), t($7), $8 }'
}
{
  table "calls" calls
  table "elapsed time, inclusive" wall_incl_ns
  table "elapsed time, exclusive" wall_excl_ns
  table "on-CPU time, inclusive" cpu_incl_ns
  table "on-CPU time, exclusive" cpu_excl_ns
  table "elapsed time in untraced callees (Foreign)" wall_foreign_ns
} >"$work/tables.txt"
cat "$work/tables.txt"
if grep -q ' \*$' "$work/tables.txt"; then
  echo
  echo "* The probes' own cost was over half of these calls' measured time: their times are known only"
  echo "  within their bounds (the report's JSON: bounds), from the per-event cost range (trace fewer,"
  echo "  larger methods to see into them)."
fi

# --- the application's own counts against the trace -------------------------------------------
done_line=$(grep '^DONE ' "$work/java.out" || true)
if [ -n "$done_line" ]; then
  done_value() { sed -n "s/^DONE.* $1=\([0-9]*\).*/\1/p" <<<"$done_line"; }
  # METHOD (class.name+signature) LABEL MADE [incl|excl|foreign]: calls traced and made, and the times.
  row() {
    jq -r --arg m "$1" "$jq_merged"'[merged[] | select(.class + "." + .method + .signature == $m)] | first // {} |
        [.calls // 0, .wall_incl_ns // 0, .cpu_incl_ns // 0, .wall_excl_ns // 0, .cpu_excl_ns // 0,
         .wall_foreign_ns // 0, .cpu_foreign_ns // 0] | @tsv' \
      "$work/report.json" | awk -F'\t' -v label="$2" -v made="$3" -v times="${4:-}" "$awk_t"'
      { printf "  %-38s %7d calls traced", label, $1
        if (made != "") printf ", %7d made", made
        if (times == "incl") printf "; elapsed %s, on-CPU %s", t($2), t($3)
        if (times == "excl") printf "; exclusive: elapsed %s, on-CPU %s", t($4), t($5)
        if (times == "foreign") printf "; in untraced callees: elapsed %s, on-CPU %s", t($6), t($7)
        printf "\n" }'
  }
  sleeps=$(done_value sleeps) sleep_ms=$(done_value sleep_ms)
  echo
  echo "The application's own counts (its DONE line) against the trace:"
  row 'org/postgresql/jdbc/PgResultSet.getString(I)Ljava/lang/String;' 'PgResultSet.getString(int)' "$(done_value getString)"
  row 'org/postgresql/jdbc/PgResultSet.getInt(I)I' 'PgResultSet.getInt(int)' "$(done_value getInt)"
  row 'org/postgresql/jdbc/PgConnection.prepareStatement(Ljava/lang/String;)Ljava/sql/PreparedStatement;' \
    'PgConnection.prepareStatement(String)' "$(done_value prepares)"
  row 'org/postgresql/jdbc/PgPreparedStatement.executeQuery()Ljava/sql/ResultSet;' \
    'PgPreparedStatement.executeQuery()' "$(done_value executes)"
  row 'org/postgresql/jdbc/PgStatement.executeQuery(Ljava/lang/String;)Ljava/sql/ResultSet;' \
    'PgStatement.executeQuery(String)' "$sleeps" incl
  echo "  (Statement.executeQuery(String) runs only the pg_sleep queries: the server slept $sleeps x $sleep_ms ms in them)"
  if ((${#per_thread[@]})); then
    jq -r '[.methods[] | select(.class + "." + .method + .signature ==
        "org/postgresql/jdbc/PgResultSet.getString(I)Ljava/lang/String;") | "\(.thread) \(.calls)"] | sort | join(", ")' \
      "$work/report.json" | sed 's/^/  getString per thread: /'
  fi
  baseline=$(grep '^BASELINE ' "$work/java.out" || true)
  if [ -n "$baseline" ]; then
    # The JVM timed getString/getInt itself before the tracer attached: what one call costs untraced.
    echo "Per call, the JVM's own timing before the tracer attached (probe flag on, nothing attached)"
    echo "against the trace (inclusive, on a CPU, with the probe events inside each call):"
    for m in getString getInt; do
      untraced=$(sed -n "s/.* ${m}_ns=\([0-9]*\).*/\1/p" <<<"$baseline")
      sig=$([ "$m" = getString ] && echo '(I)Ljava/lang/String;' || echo '(I)I')
      jq -r --arg m "org/postgresql/jdbc/PgResultSet.$m$sig" "$jq_merged"'[merged[] |
          select(.class + "." + .method + .signature == $m)] | first // {} |
          [.calls // 0, .cpu_incl_ns // 0, .events_incl // 0] | @tsv' "$work/report.json" |
        awk -F'\t' -v m="$m" -v u="$untraced" "$awk_t"'
          { if ($1 > 0) printf "  PgResultSet.%-9s untraced %s, traced %s (%.0f probe events per call)\n", m, t(u), t(int($2 / $1)), $3 / $1 }'
    done
  fi
  echo "Where the driver waits for the server's answer (the socket read is an untraced callee):"
  row 'org/postgresql/core/VisibleBufferedInputStream.readMore(IZ)Z' 'VisibleBufferedInputStream.readMore' "" foreign
fi
echo
echo "Flame graph of the call paths: $flamegraph"
