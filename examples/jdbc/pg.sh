#!/usr/bin/env bash
# A throwaway PostgreSQL server (Debian's postgresql package) for the JDBC example and its test:
# a fresh data directory in a new temporary directory, run by an unprivileged user (postgres, or
# nobody when there is no such user), listening on 127.0.0.1 at a free port and on a unix socket
# in that directory, database jmt owned by the superuser jmt, trust authentication. Stopping it
# (pg_ctl stop -m immediate, then SIGKILL) leaves no server process and no directory behind.
#
# As a command (root):
#   examples/jdbc/pg.sh                     start, print how to connect, wait for Ctrl-C or SIGTERM
#   examples/jdbc/pg.sh COMMAND [ARGS...]   start, run COMMAND with JDBC_URL, PGHOST, PGPORT,
#                                           PGUSER and PGDATABASE set, stop; exits with its status
# From another script (which must call pg_stop from its EXIT trap):
#   source examples/jdbc/pg.sh; pg_start; ... "$PG_URL" ...; pg_stop
#
# pg_start sets PG_DIR (the temporary directory, under ${TMPDIR:-/tmp}), PG_PORT, PG_PID (the
# postmaster), PG_URL (jdbc:postgresql://127.0.0.1:PORT/jmt?user=jmt) and exports the PG* variables.
# Environment: PG_BIN (default: the newest /usr/lib/postgresql/*/bin), PG_OS_USER (default postgres),
# PG_STOP_TIMEOUT (seconds pg_ctl stop may take before SIGKILL; default 10).

pg_log() { echo "pg.sh: $*" >&2; }

# Runs a command as the unprivileged user that owns the server, with HOME in the server's directory.
pg_as_user() {
  setpriv --reuid="$PG_OS_USER" --regid="$PG_OS_GROUP" --clear-groups \
    env HOME="$PG_DIR" PGTZ=UTC "$@"
}

# Whether process $1 exists and is not a zombie.
pg_alive() {
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "${state:0:1}" != Z ]
}

# Checks what the server needs, says on stderr what is missing; sets PG_BIN, PG_OS_USER, PG_OS_GROUP.
pg_check() {
  local d
  if [ -z "${PG_BIN:-}" ]; then
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V); do
      if [ -x "$d/postgres" ]; then PG_BIN=$d; fi
    done
  fi
  if [ -z "${PG_BIN:-}" ] || [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/postgres" ] ||
     [ ! -x "$PG_BIN/pg_ctl" ] || [ ! -x "$PG_BIN/pg_isready" ] || [ ! -x "$PG_BIN/createdb" ]; then
    pg_log "no PostgreSQL server binaries (initdb, postgres, pg_ctl) in ${PG_BIN:-/usr/lib/postgresql/*/bin}: apt-get install postgresql"
    return 1
  fi
  if [ "$(id -u)" != 0 ]; then
    pg_log "not root: the server runs as an unprivileged user, which needs root to switch to"
    return 1
  fi
  for d in setpriv ps pgrep; do
    command -v "$d" >/dev/null || { pg_log "$d not found (util-linux, procps)"; return 1; }
  done
  if [ -z "${PG_OS_USER:-}" ]; then
    if id postgres >/dev/null 2>&1; then PG_OS_USER=postgres; else PG_OS_USER=nobody; fi
  fi
  id "$PG_OS_USER" >/dev/null 2>&1 || { pg_log "no user $PG_OS_USER to run the server as"; return 1; }
  PG_OS_GROUP=$(id -g "$PG_OS_USER")
  return 0
}

pg_start() {
  local port attempt i
  pg_check || return 1
  PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/jmt-pg.XXXXXX") || return 1
  PG_PID=""
  chown "$PG_OS_USER:$PG_OS_GROUP" "$PG_DIR"
  if ! pg_as_user test -w "$PG_DIR"; then
    pg_log "user $PG_OS_USER cannot reach $PG_DIR: every directory above it must be searchable (chmod o+x), or set TMPDIR"
    return 1
  fi
  if ! pg_as_user "$PG_BIN/initdb" -D "$PG_DIR/data" -U jmt -A trust -E UTF8 --locale=C --no-sync \
       >"$PG_DIR/initdb.log" 2>&1; then
    pg_log "initdb failed:"; cat "$PG_DIR/initdb.log" >&2
    return 1
  fi
  # A random port; another one when it is taken (the server then exits at once).
  for attempt in $(seq 20); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    # Not through pg_as_user: a function in the background is a subshell, and PG_PID must be
    # the postmaster itself (setpriv and env exec it).
    setpriv --reuid="$PG_OS_USER" --regid="$PG_OS_GROUP" --clear-groups env HOME="$PG_DIR" PGTZ=UTC \
      "$PG_BIN/postgres" -D "$PG_DIR/data" -c listen_addresses=127.0.0.1 -c port="$port" \
      -c unix_socket_directories="$PG_DIR" -c fsync=off -c synchronous_commit=off \
      -c full_page_writes=off -c max_connections=30 -c shared_buffers=32MB \
      -c dynamic_shared_memory_type=mmap \
      </dev/null >"$PG_DIR/server.log" 2>&1 &
    PG_PID=$!
    for i in $(seq 300); do
      pg_alive "$PG_PID" || break
      if "$PG_BIN/pg_isready" -q -h "$PG_DIR" -p "$port" -U jmt -d postgres; then
        PG_PORT=$port
        break 2
      fi
      sleep 0.1
    done
    if pg_alive "$PG_PID"; then
      pg_log "the server did not accept connections within 30 s:"; cat "$PG_DIR/server.log" >&2
      return 1
    fi
    wait "$PG_PID" 2>/dev/null || true
    PG_PID=""
    if ! grep -q 'could not bind\|could not create any TCP/IP sockets' "$PG_DIR/server.log" || ((attempt == 20)); then
      pg_log "the server did not start:"; cat "$PG_DIR/server.log" >&2
      return 1
    fi
  done
  if ! pg_as_user "$PG_BIN/createdb" -h "$PG_DIR" -p "$PG_PORT" -U jmt jmt >>"$PG_DIR/server.log" 2>&1; then
    pg_log "createdb failed:"; cat "$PG_DIR/server.log" >&2
    return 1
  fi
  PG_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/jmt?user=jmt"
  export JDBC_URL=$PG_URL PGHOST=$PG_DIR PGPORT=$PG_PORT PGUSER=jmt PGDATABASE=jmt
  return 0
}

# Stops the server and removes its directory; does nothing when there is none. Safe to call
# twice, and from a trap at any point of pg_start.
pg_stop() {
  local pids p i killed="" left=""
  [ -n "${PG_DIR:-}" ] || return 0
  # The postmaster: the one started here, and any other whose command line names this directory
  # (a signal may have come between its start and the assignment of PG_PID).
  pids=$(pgrep -f -- "-D $PG_DIR/data" || true)
  [ -z "${PG_PID:-}" ] || pids="$PG_PID $pids"
  for p in $pids; do
    pg_alive "$p" || continue
    # Its children (backends, checkpointer...) end with it under -m immediate; kept for SIGKILL.
    pids="$pids $(pgrep -P "$p" | tr '\n' ' ' || true)"
    pg_as_user "$PG_BIN/pg_ctl" stop -D "$PG_DIR/data" -m immediate -w -t "${PG_STOP_TIMEOUT:-10}" \
      >/dev/null 2>&1 || true
    break
  done
  {  # (no "Killed" job notice from bash)
    for p in $pids; do
      if pg_alive "$p"; then
        kill -KILL "$p" || true
        killed="$killed $p"
      fi
    done
    [ -z "${PG_PID:-}" ] || wait "$PG_PID" || true
  } 2>/dev/null
  for p in $pids; do
    for ((i = 0; i < 100; i++)); do
      pg_alive "$p" || break
      sleep 0.05
    done
    if pg_alive "$p"; then left="$left $p"; fi
  done
  [ -z "$left" ] || pg_log "processes of the server still there:$left"
  # A killed postmaster leaves its small System V shared memory segment (the rest is anonymous
  # memory, and dynamic shared memory is files in the data directory).
  if [ -n "$killed" ] && command -v ipcs >/dev/null; then
    for p in $(ipcs -m -p | awk -v pids="$killed" '
        BEGIN { n = split(pids, a, " "); for (i = 1; i <= n; i++) k[a[i]] = 1 }
        $1 ~ /^[0-9]+$/ && ($3 in k) { print $1 }' || true); do
      ipcrm -m "$p" 2>/dev/null || true
    done
  fi
  rm -rf "$PG_DIR" || true
  PG_DIR="" PG_PID=""
  return 0
}

# --- as a command -----------------------------------------------------------------------------
pg_cmd_pid=""
pg_cleanup() {
  local rc=$? i
  trap - INT TERM
  if [ -n "$pg_cmd_pid" ]; then
    kill -TERM "$pg_cmd_pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do pg_alive "$pg_cmd_pid" || break; sleep 0.1; done
    kill -KILL "$pg_cmd_pid" 2>/dev/null
    wait "$pg_cmd_pid" 2>/dev/null
  fi
  pg_stop
  exit "$rc"
}

pg_main() {
  local rc
  trap pg_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  pg_start || exit 1
  if (($# == 0)); then
    echo "PostgreSQL on 127.0.0.1:$PG_PORT and in $PG_DIR (user $PG_OS_USER); Ctrl-C or SIGTERM to stop"
    echo "  JDBC:  $PG_URL"
    echo "  psql:  psql -h $PG_DIR -p $PG_PORT -U jmt jmt"
    sleep infinity &
    pg_cmd_pid=$!
    wait "$pg_cmd_pid"
    exit 0
  fi
  # In the background, so that a signal to this script is handled at once (with stdin kept).
  "$@" <&0 &
  pg_cmd_pid=$!
  wait "$pg_cmd_pid"
  rc=$?
  pg_cmd_pid=""
  exit "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  pg_main "$@"
fi
