#!/usr/bin/env bash
# The DTrace example's investigation as a test: a real PostgreSQL server, the JDBC workload and jmethodtime,
# through examples/jdbc-demo.sh (which starts the server with examples/jdbc/pg.sh).
#
#  1. attach mode (--json, times corrected), 4 threads: the driver's call counts equal the ones the
#     application counted (getString(I), getInt(I), prepareStatement(String), executeQuery() and
#     the pg_sleep queries' Statement.executeQuery(String)); the pg_sleep queries' method and the
#     method that reads the socket (VisibleBufferedInputStream.readMore) show elapsed time of at
#     least the sleeps' total and far above their on-CPU time; the five tables and the flame graph.
#  2. launch mode (--raw), 1 thread: the same counts; row decoding (PgResultSet.getString) is on a
#     CPU for most of its elapsed time, while the pg_sleep queries are not.
#  3. SIGTERM to the demo in the middle of the traced work (attach and launch mode), and while the
#     server starts; SIGINT to its process group (Ctrl-C) in the middle of the work; a postmaster
#     that does not stop (SIGSTOP) is killed by pg.sh.
# After every run: no process of it is left (none with this run's marker in its environment, none
# with a working directory or command line in its temporary directory), and the directory is empty.
#
# usage: jdbc_test.sh JMETHODTIME JDBC_CLASSES PGJDBC_JAR JAVA SOURCE_DIR
# Exit status: 0 pass, 1 fail, 2 usage, 77 skip (something needed is missing, unless CI=true).
set -uo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# != 5)); then
  echo "usage: $0 JMETHODTIME JDBC_CLASSES PGJDBC_JAR JAVA SOURCE_DIR" >&2
  exit 2
fi
jmt=$1 classes=$2 jar=$3 java=$4 src=$5
demo=$src/examples/jdbc-demo.sh

# --- what this test needs: skipped without it, unless CI=true ------------------------------------
need_root_and_btf
need_executable "$jmt" "$jmt (build jmethodtime)"
need_file "$jar" "the PostgreSQL JDBC driver $jar (apt-get install libpostgresql-jdbc-java)"
need_file "$classes/demo/jdbc/JdbcLoad.class" \
  "the compiled JDBC example in $classes (install libpostgresql-jdbc-java, reconfigure and build)"
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null ||
  missing+=("PostgreSQL's server binaries (apt-get install postgresql)")
need_tools "$java" jq setpriv pgrep ps ipcs
skip_or_fail_if_missing

# --- this run's directory and marker ---------------------------------------------------------------
work=$(mktemp -d /tmp/jmt-jdbc-test.XXXXXX)
chmod 755 "$work"  # the server's user reaches its directory in $work/tmp
mkdir -m 755 "$work/tmp"
marker="JMT_JDBC_TEST_RUN=$work"
demo_pid=""
cleanup() {
  local rc=$? p
  if [ -n "$demo_pid" ]; then kill -KILL "$demo_pid" 2>/dev/null; wait "$demo_pid" 2>/dev/null; fi
  # Nothing should be left; if something is (the test has failed then), do not leave it running.
  for p in $(leftover_pids); do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The live processes started by a run: with the marker in their environment (the demo's
# descendants: shells, the JVM, jmethodtime, pg_ctl...), or with their working directory or
# command line in $work (the postmaster and its children, whose working directory is the data
# directory). Zombies are not processes any more (a non-reaping init may keep some).
leftover_pids() {
  local d p state
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    if [ "$p" = $$ ] || [ "$p" = "$BASHPID" ]; then continue; fi
    state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "$d/stat" 2>/dev/null) || continue
    if [ -z "$state" ] || [ "$state" = Z ]; then continue; fi
    if { tr '\0' '\n' <"$d/environ" | grep -qxF "$marker"; } 2>/dev/null ||
       [[ "$(readlink "$d/cwd" 2>/dev/null)" == "$work"* ]] ||
       { tr '\0' ' ' <"$d/cmdline" | grep -qF "$work/"; } 2>/dev/null; then
      echo "$p"
    fi
  done
}

# Whether a JdbcLoad JVM started by this run runs.
jvm_running() {
  local d
  for d in /proc/[0-9]*; do
    { tr '\0' ' ' <"$d/cmdline" | grep -q 'demo\.jdbc\.JdbcLoad' &&
      tr '\0' '\n' <"$d/environ" | grep -qxF "$marker"; } 2>/dev/null && return 0
  done
  return 1
}

# Fails when anything of the last run is left: a process, a postmaster found by pgrep -f, or a
# file in $work/tmp. Processes get 3 s to go (a killed postmaster's children end on their own).
check_nothing_left() {
  local what=$1 i left=""
  for ((i = 0; i < 30; i++)); do
    left=$(leftover_pids)
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    ps -o pid,ppid,stat,args -p "$(echo "$left" | paste -sd,)" >&2
    fail "$what: processes left behind: $(echo "$left" | paste -sd' ')"
  fi
  if pgrep -f -- "$work/tmp/" >/dev/null; then
    pgrep -af -- "$work/tmp/" >&2
    fail "$what: pgrep -f $work/tmp/ finds processes"
  fi
  if [ -n "$(ls -A "$work/tmp")" ]; then
    ls -la "$work/tmp" >&2
    fail "$what: $work/tmp is not empty"
  fi
  note "$what: nothing left behind"
}

# The demo with this run's marker, TMPDIR and files (env execs it: one process, for SIGTERM).
demo_command() {  # NAME
  demo_cmd=(env "$marker" TMPDIR="$work/tmp" JMETHODTIME="$jmt" JDBC_CLASSES="$classes" PGJDBC_JAR="$jar"
            JAVA="$java" "$demo" --json "$work/$1.json" --flamegraph "$work/$1.html")
}
# Runs the demo; output in $work/NAME.out.
run_demo() {  # NAME DEMO_ARGS...
  demo_command "$1"
  "${demo_cmd[@]}" "${@:2}" >"$work/$1.out" 2>&1
}

# --- the JSON report --------------------------------------------------------------------------------
json=""
# The value of KEY for the method CLASS.METHOD+SIGNATURE (JVM form), summed over its rows (one
# per thread with --per-thread), 0 without such a row.
value() {  # METHOD_WITH_SIGNATURE KEY
  jq -r --arg m "$1" --arg k "$2" \
    '[.methods[] | select(.class + "." + .method + .signature == $m) | .[$k]] | add // 0' "$json"
}
expect_calls() {  # METHOD_WITH_SIGNATURE EXPECTED
  local got
  got=$(value "$1" calls)
  [ "$got" = "$2" ] || fail "$json: $1: $got calls, the application made $2"
  note "$1: $got calls (exact)"
}
ms() { awk -v ns="$1" 'BEGIN { printf "%.1f ms", ns / 1e6 }'; }

# The most on-CPU time a method can have had of its own, whatever this host's trap costs: the high
# end of its corrected time's bounds, or with --raw its time less its probe events at the low end of
# this run's per-event cost range (probe_cost.range, measured in the JVM: 0.5 us to 8 us per event
# on the hosts this runs on). KIND: incl, excl or foreign.
cpu_at_most() {  # METHOD_WITH_SIGNATURE KIND
  jq -r --arg m "$1" --arg k "$2" '
    .times as $times | .probe_cost.range as $r |
    [.methods[] | select(.class + "." + .method + .signature == $m) |
      if $times == "corrected" then .bounds["cpu_\($k)_ns"][1]
      else ({incl: ["events_incl", "traced_events_incl"], excl: ["events_excl", "traced_events_excl"],
             foreign: ["events_foreign", "traced_events_foreign"]}[$k]) as $ev |
        (.["cpu_\($k)_ns"] - .[$ev[1]] * $r.traced_event_ns[0]
           - (.[$ev[0]] - .[$ev[1]]) * $r.rejected_event_ns[0]) | if . < 0 then 0 else . end
      end] | add // 0 | floor' "$json"
}
# "(the probes' cost taken out at 5.38 us per traced event and more)": what cpu_at_most took out.
cost_note() {
  jq -r '"the probes cost taken out at " + (.probe_cost.range.traced_event_ns[0] | tostring) +
         " to " + (.probe_cost.range.traced_event_ns[1] | tostring) + " ns per traced event (" +
         .probe_cost.range.basis + ")"' "$json"
}

# DONE threads=.. prepares=.. executes=.. sleeps=.. sleep_ms=.. rows=.. getString=.. getInt=..
done_value() { sed -n "s/^DONE.* $1=\([0-9]*\).*/\1/p" "$2"; }

GET_STRING='org/postgresql/jdbc/PgResultSet.getString(I)Ljava/lang/String;'
GET_INT='org/postgresql/jdbc/PgResultSet.getInt(I)I'
PREPARE='org/postgresql/jdbc/PgConnection.prepareStatement(Ljava/lang/String;)Ljava/sql/PreparedStatement;'
EXECUTE='org/postgresql/jdbc/PgPreparedStatement.executeQuery()Ljava/sql/ResultSet;'
SLEEP_QUERY='org/postgresql/jdbc/PgStatement.executeQuery(Ljava/lang/String;)Ljava/sql/ResultSet;'
SOCKET_READ='org/postgresql/core/VisibleBufferedInputStream.readMore(IZ)Z'

# The counts of a run against the application's DONE line; sets sleeps and sleep_ms.
check_counts() {  # NAME
  local out=$work/$1.out
  grep -q '^DONE ' "$out" || { cat "$out" >&2; fail "$1: no DONE line from the application"; }
  grep '^DONE ' "$out"
  json=$work/$1.json
  [ -s "$json" ] || fail "$1: no JSON report"
  expect_calls "$GET_STRING" "$(done_value getString "$out")"
  expect_calls "$GET_INT" "$(done_value getInt "$out")"
  expect_calls "$PREPARE" "$(done_value prepares "$out")"
  expect_calls "$EXECUTE" "$(done_value executes "$out")"
  expect_calls "$SLEEP_QUERY" "$(done_value sleeps "$out")"
  sleeps=$(done_value sleeps "$out") sleep_ms=$(done_value sleep_ms "$out")
}

# The pg_sleep queries wait on the server: elapsed at least the sleeps' total, on-CPU a fraction.
check_waits() {  # NAME
  local total=$((sleeps * sleep_ms * 1000000)) wall cpu
  wall=$(value "$SLEEP_QUERY" wall_incl_ns) cpu=$(cpu_at_most "$SLEEP_QUERY" incl)
  ((wall * 100 >= total * 95)) ||
    fail "$1: $SLEEP_QUERY: elapsed inclusive $(ms "$wall"), below the $sleeps x $sleep_ms ms the server slept"
  ((wall > 5 * cpu)) ||
    fail "$1: $SLEEP_QUERY: elapsed inclusive $(ms "$wall") is not > 5 x on-CPU $(ms "$cpu") at most ($(cost_note))"
  note "$1: the pg_sleep queries: elapsed $(ms "$wall") (slept $(ms "$total")), on-CPU $(ms "$cpu")"
  # Each sleep is one blocking read of the socket, in readMore (the socket's own methods are not
  # traced, so the wait is readMore's exclusive time).
  wall=$(value "$SOCKET_READ" wall_excl_ns) cpu=$(cpu_at_most "$SOCKET_READ" excl)
  ((wall * 100 >= total * 95)) ||
    fail "$1: $SOCKET_READ: elapsed exclusive $(ms "$wall"), below the $sleeps x $sleep_ms ms the server slept"
  ((wall > 5 * cpu)) ||
    fail "$1: $SOCKET_READ: elapsed exclusive $(ms "$wall") is not > 5 x on-CPU $(ms "$cpu") at most ($(cost_note))"
  note "$1: the socket reads (readMore, exclusive): elapsed $(ms "$wall"), on-CPU $(ms "$cpu")"
  # --foreign: that wait is inside readMore's untraced callees (the socket's read), within its
  # exclusive time, and off the CPU.
  local excl=$wall
  wall=$(value "$SOCKET_READ" wall_foreign_ns) cpu=$(cpu_at_most "$SOCKET_READ" foreign)
  ((wall * 100 >= total * 95)) ||
    fail "$1: $SOCKET_READ: elapsed in untraced callees $(ms "$wall"), below the $sleeps x $sleep_ms ms the server slept"
  ((wall <= excl)) || fail "$1: $SOCKET_READ: foreign $(ms "$wall") above exclusive $(ms "$excl")"
  ((wall > 5 * cpu)) ||
    fail "$1: $SOCKET_READ: foreign elapsed $(ms "$wall") is not > 5 x on-CPU $(ms "$cpu") at most ($(cost_note))"
  note "$1: the socket reads (readMore, untraced callees): elapsed $(ms "$wall"), on-CPU $(ms "$cpu")"
}

workload=(--rows 500 --rounds 2 --executes 2 --sleeps 4 --sleep-ms 50)

# --- 1. attach mode, times corrected, 4 threads -----------------------------------------------------
note "attach mode: jmethodtime -p PID --package org/postgresql --foreign --per-thread --json, 4 threads"
run_demo attach --per-thread --threads 4 "${workload[@]}" || { cat "$work/attach.out" >&2; fail "attach: the demo failed"; }
cat "$work/attach.out"
check_counts attach
[ "$(done_value threads "$work/attach.out")" = 4 ] || fail "attach: not 4 threads"
# --per-thread: the four workers (jdbc-1..4) do the same work, so each made a quarter of the calls.
for method in "$GET_STRING" "$GET_INT" "$EXECUTE"; do
  per_thread=$(jq -r --arg m "$method" '[.methods[] | select(.class + "." + .method + .signature == $m) |
      "\(.thread)=\(.calls)"] | sort | join(" ")' "$json")
  total=$(value "$method" calls)
  made=$(done_value "$(case $method in "$GET_STRING") echo getString ;; "$GET_INT") echo getInt ;; *) echo executes ;; esac)" "$work/attach.out")
  [ "$total" = "$made" ] || fail "attach: $method: the threads' rows add up to $total calls, the application made $made"
  expect="jdbc-1=$((made / 4)) jdbc-2=$((made / 4)) jdbc-3=$((made / 4)) jdbc-4=$((made / 4))"
  [ "$per_thread" = "$expect" ] || fail "attach: $method per thread: $per_thread, expected $expect"
  note "attach: $method per thread: $per_thread (exact)"
done
[ "$(jq -r .times "$json")" = corrected ] || fail "attach: times are not corrected"
check_waits attach
for title in "by calls" "by elapsed time, inclusive" "by elapsed time, exclusive" \
             "by on-CPU time, inclusive" "by on-CPU time, exclusive" \
             "by elapsed time in untraced callees (Foreign)"; do
  grep -qx "Top 5 $title" "$work/attach.out" || fail "attach: no table 'Top 5 $title'"
done
# Before the tracer attached, the JVM timed getString itself: the demo shows it beside the trace.
grep -qE '^  PgResultSet.getString untraced [0-9.]+ [nu]s, traced [0-9.]+ [nu]s \(51 probe events per call\)$' \
  "$work/attach.out" || fail "attach: no untraced-against-traced line for getString (51 probe events per call)"
grep -qF 'org.postgresql.jdbc.PgResultSet.getString(int)' "$work/attach.html" ||
  fail "attach: the flame graph has no PgResultSet.getString(int) frame"
check_nothing_left attach

# --- 2. launch mode, raw times, 1 thread ---------------------------------------------------------
note "launch mode: jmethodtime --package org/postgresql --raw -- java ..., 1 thread"
run_demo launch --launch --raw --threads 1 "${workload[@]}" ||
  { cat "$work/launch.out" >&2; fail "launch: the demo failed"; }
cat "$work/launch.out"
grep -q '^Tracing package org/postgresql in .* from its start' "$work/launch.out" || fail "launch: not launch mode"
check_counts launch
[ "$(jq -r .times "$json")" = raw ] || fail "launch: times are not raw"
check_waits launch
# Row decoding never waits: as measured (the probes' cost is on the CPU too), the thread is on a
# CPU for most of getString's elapsed time; a busy host (other processes taking the CPUs) lowers it.
wall=$(value "$GET_STRING" wall_incl_ns) cpu=$(value "$GET_STRING" cpu_incl_ns)
((cpu * 10 >= wall * 7)) ||
  fail "launch: $GET_STRING: on-CPU $(ms "$cpu") is under 0.7 x elapsed $(ms "$wall") (load: $(cut -d' ' -f1-3 /proc/loadavg))"
note "launch: getString: elapsed $(ms "$wall"), on-CPU $(ms "$cpu")"
# The pg_sleep queries' on-CPU time at most, with their probe events' cost out (see cpu_at_most).
wall_sleep=$(value "$SLEEP_QUERY" wall_incl_ns) cpu_sleep=$(cpu_at_most "$SLEEP_QUERY" incl)
((cpu * wall_sleep > 5 * cpu_sleep * wall)) ||
  fail "launch: getString's on-CPU share is not 5 x the pg_sleep queries'"
check_nothing_left launch

# --- 3. interrupted ------------------------------------------------------------------------------------
# Starts the demo, waits for PATTERN in its output (or a file matching @GLOB), and DELAY seconds
# later sends SIGNAL: TERM to the demo, or INT to its process group, as Ctrl-C on a terminal does
# (the demo then runs in a session of its own, with SIGINT not ignored, unlike a background job's).
# It must end with 128 + the signal's number and leave nothing.
interrupt() {  # NAME PATTERN|@GLOB DELAY TERM|INT DEMO_ARGS...
  local name=$1 pattern=$2 delay=$3 sig=$4 i rc expect
  shift 4
  demo_command "$name"
  if [ "$sig" = INT ]; then
    setsid env --default-signal=INT "${demo_cmd[@]}" "$@" >"$work/$name.out" 2>&1 &
    expect=130
  else
    "${demo_cmd[@]}" "$@" >"$work/$name.out" 2>&1 &
    expect=143
  fi
  demo_pid=$!
  for ((i = 0; i < 600; i++)); do
    if [ "${pattern:0:1}" = @ ]; then
      compgen -G "${pattern:1}" >/dev/null && break
    else
      grep -q -- "$pattern" "$work/$name.out" 2>/dev/null && break
    fi
    kill -0 "$demo_pid" 2>/dev/null || { cat "$work/$name.out" >&2; fail "$name: the demo ended early"; }
    sleep 0.05
  done
  ((i < 600)) || fail "$name: no '$pattern' within 30 s"
  sleep "$delay"
  kill -0 "$demo_pid" 2>/dev/null || { cat "$work/$name.out" >&2; fail "$name: the demo ended before SIG$sig"; }
  # The JVM and the server run now (unless the signal is meant for the server's start).
  if [ "${pattern:0:1}" != @ ] && ! jvm_running; then
    cat "$work/$name.out" >&2
    fail "$name: no JdbcLoad JVM of this run is running"
  fi
  if [ "$sig" = INT ]; then
    [ "$(ps -o pgid= -p "$demo_pid" | tr -d ' ')" = "$demo_pid" ] || fail "$name: the demo leads no process group"
    kill -INT -- "-$demo_pid"
  else
    kill -TERM "$demo_pid"
  fi
  for ((i = 0; i < 600; i++)); do
    kill -0 "$demo_pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -0 "$demo_pid" 2>/dev/null && fail "$name: the demo still runs 30 s after SIG$sig"
  wait "$demo_pid"
  rc=$?
  demo_pid=""
  [ "$rc" = "$expect" ] || { cat "$work/$name.out" >&2; fail "$name: exit status $rc after SIG$sig, not $expect"; }
  grep -q '^DONE' "$work/$name.out" && fail "$name: the workload finished before SIG$sig"
  note "$name: SIG$sig, exit status $rc"
  check_nothing_left "$name"
}
long=(--threads 2 --rows 200 --rounds 1 --sleeps 400 --sleep-ms 50)  # 20 s of pg_sleep per thread
interrupt sigterm-attach '^Tracing' 1.5 TERM "${long[@]}"
interrupt sigterm-launch '^jmethodtime runs JdbcLoad' 4 TERM --launch "${long[@]}"
interrupt sigterm-start "@$work/tmp/jmt-pg.*/data" 0.1 TERM "${long[@]}"
interrupt ctrl-c-attach '^Tracing' 1.5 INT "${long[@]}"

# A postmaster that does not stop (SIGSTOP): pg_ctl stop gives up after PG_STOP_TIMEOUT, pg.sh
# kills it with SIGKILL and removes its System V shared memory segment.
note "a stopped postmaster: pg.sh falls back to SIGKILL"
# shellcheck disable=SC2016  # expanded by sh -c, with the server's PGHOST
env "$marker" TMPDIR="$work/tmp" PG_STOP_TIMEOUT=2 "$src/examples/jdbc/pg.sh" \
  sh -c 'head -1 "$PGHOST/data/postmaster.pid" >"$0"; kill -STOP "$(head -1 "$PGHOST/data/postmaster.pid")"' \
  "$work/postmaster.pid" >"$work/stopped.out" 2>&1 || { cat "$work/stopped.out" >&2; fail "stopped: pg.sh failed"; }
pm=$(cat "$work/postmaster.pid")
[ -n "$pm" ] || fail "stopped: no postmaster pid"
if [ -d "/proc/$pm" ] && [ "$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$pm/stat")" != Z ]; then
  fail "stopped: the postmaster $pm still runs"
fi
check_nothing_left stopped
ipcs -m -p | awk -v pm="$pm" '$1 ~ /^[0-9]+$/ && $3 == pm { found = 1 } END { exit found }' ||
  fail "stopped: the killed postmaster's System V shared memory segment is left"
note "stopped: its shared memory segment is gone"

echo "PASS"
