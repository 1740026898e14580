#!/usr/bin/env bash
# A throwaway Tomcat 10 (Debian's tomcat10 and tomcat10-examples packages) for the application
# server example and its test: a fresh CATALINA_BASE in a new temporary directory, the examples
# webapp at /examples (or another webapp), one HTTP connector on 127.0.0.1 at a free port, run by
# the tomcat user (or nobody) with -XX:+DTraceMethodProbes, on the host or from a Debian root in
# its own mount and pid namespaces (as in a container). Stopping it (SIGTERM, then SIGKILL) leaves
# no process, mount or directory behind.
#
# As a command (root):
#   examples/tomcat/tomcat.sh                     start, print its URL and pid, wait for Ctrl-C
#   examples/tomcat/tomcat.sh COMMAND [ARGS...]   start, run COMMAND with TC_URL and TC_PID set, stop
# From another script (which must call tc_stop from its EXIT trap):
#   source examples/tomcat/tomcat.sh; tc_start; ... "$TC_URL" ... "$TC_PID" ...; tc_stop
#
# tc_start sets TC_DIR (the CATALINA_BASE, under ${TMPDIR:-/tmp}), TC_PORT, TC_PID (the JVM, as
# this host's pid namespace numbers it) and TC_URL (http://127.0.0.1:PORT/examples/servlets/
# servlet/HelloWorldExample, or the webapp's TC_WEBAPP_URL).
# Environment: TC_HOME (default /usr/share/tomcat10), TC_EXAMPLES (default
# /usr/share/tomcat10-examples/examples), JAVA (default java), TC_OS_USER (default tomcat),
# TC_JAVA_OPTS (more JVM options), TC_PROBES (the probe flag; default -XX:+DTraceMethodProbes,
# empty: started without it, for the runtime switch), TC_START_TIMEOUT (seconds; default 60),
# TC_VIRTUAL_THREADS (true: the connector runs requests on virtual threads, JDK 21+),
# TC_WEBAPP (a webapp directory, copied into the base and deployed at /NAME, NAME its directory's
# name, instead of the examples) with TC_WEBAPP_URL (the path under it that TC_URL names and that
# must answer; default /), TC_ROOT (a root directory, such as a Debian root made by mmdebstrap:
# the server runs from it in its own mount and pid namespaces, with the root read-only, its own
# /proc and /tmp, and the base at /mnt; TC_HOME and JAVA are paths in the root, and the user is
# the root's).

tc_log() { echo "tomcat.sh: $*" >&2; }

# Whether process $1 exists and is not a zombie.
tc_alive() {
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "${state:0:1}" != Z ]
}

# Checks what the server needs and says on stderr what is missing.
tc_check() {
  TC_HOME=${TC_HOME:-/usr/share/tomcat10}
  TC_EXAMPLES=${TC_EXAMPLES:-/usr/share/tomcat10-examples/examples}
  TC_ROOT=${TC_ROOT:-}
  TC_ROOT=${TC_ROOT%/}
  local in_root=${TC_ROOT:+ in $TC_ROOT}
  if [ ! -r "$TC_ROOT$TC_HOME/bin/bootstrap.jar" ] || [ ! -r "$TC_ROOT$TC_HOME/lib/catalina.jar" ]; then
    tc_log "no Tomcat 10 in $TC_HOME$in_root: apt-get install tomcat10"
    return 1
  fi
  if [ -n "${TC_WEBAPP:-}" ]; then
    [ -d "$TC_WEBAPP/WEB-INF" ] || { tc_log "no webapp in $TC_WEBAPP (no WEB-INF)"; return 1; }
  elif [ ! -r "$TC_ROOT$TC_EXAMPLES/WEB-INF/classes/HelloWorldExample.class" ]; then
    tc_log "no Tomcat examples webapp in $TC_EXAMPLES$in_root: apt-get install tomcat10-examples"
    return 1
  fi
  if [ "$(id -u)" != 0 ]; then
    tc_log "not root: the server runs as an unprivileged user, which needs root to switch to"
    return 1
  fi
  local tool
  for tool in setpriv ps pgrep curl ${TC_ROOT:+unshare}; do
    command -v "$tool" >/dev/null || { tc_log "$tool not found"; return 1; }
  done
  if [ -n "$TC_ROOT" ]; then
    if [ -z "${JAVA:-}" ] || [ ! -x "$TC_ROOT$JAVA" ]; then
      tc_log "no java at '${JAVA:-}'$in_root: set JAVA to its path in the root"
      return 1
    fi
  elif ! command -v "${JAVA:-java}" >/dev/null; then
    tc_log "${JAVA:-java} not found"
    return 1
  fi
  # The server's user and group, as the root it runs from numbers them.
  local user=${TC_OS_USER:-}
  if [ -z "$user" ]; then
    if grep -q '^tomcat:' "$TC_ROOT/etc/passwd"; then user=tomcat; else user=nobody; fi
  fi
  read -r TC_OS_UID TC_OS_GID < <(awk -F: -v u="$user" '$1 == u || $3 == u { print $3, $4; exit }' \
    "$TC_ROOT/etc/passwd")
  [ -n "${TC_OS_UID:-}" ] || { tc_log "no user $user$in_root to run the server as"; return 1; }
  return 0
}

# A TCP port on 127.0.0.1 that nothing listens on.
tc_free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# A webapp at /NAME from DIR (as the server sees it), its links followed: tc_context NAME DIR
tc_context() {
  cat >"$TC_DIR/conf/Catalina/localhost/$1.xml" <<EOF
<Context path="/$1" docBase="$2">
  <Resources allowLinking="true"/>
</Context>
EOF
}

# The CATALINA_BASE: Debian's configuration, but one connector on 127.0.0.1:$TC_PORT, no
# shutdown port, no default webapps, and the examples at /examples or the webapp at /NAME; sets
# TC_URL. $1: where the server sees the base (TC_DIR, or /mnt from a root).
tc_make_base() {
  local base=$1 conf=$TC_ROOT/etc/tomcat10 virtual="" name
  mkdir -p "$TC_DIR/conf/Catalina/localhost" "$TC_DIR/webapps" "$TC_DIR/logs" "$TC_DIR/work" "$TC_DIR/temp"
  cp "$conf/web.xml" "$conf/context.xml" "$conf/catalina.properties" \
    "$conf/logging.properties" "$conf/tomcat-users.xml" "$TC_DIR/conf/" 2>/dev/null ||
    cp "$TC_ROOT$TC_HOME"/etc/*.xml "$TC_ROOT$TC_HOME"/etc/*.properties "$TC_DIR/conf/" 2>/dev/null
  [ "${TC_VIRTUAL_THREADS:-}" != true ] || virtual=' useVirtualThreads="true"'
  cat >"$TC_DIR/conf/server.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector address="127.0.0.1" port="$TC_PORT" protocol="HTTP/1.1" connectionTimeout="20000"$virtual/>
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/>
    </Engine>
  </Service>
</Server>
EOF
  if [ -n "${TC_WEBAPP:-}" ]; then
    name=$(basename "$TC_WEBAPP")
    cp -a "$TC_WEBAPP" "$TC_DIR/app"
    tc_context "$name" "$base/app"
    TC_URL="http://127.0.0.1:$TC_PORT/$name${TC_WEBAPP_URL:-/}"
  else
    tc_context examples "$TC_EXAMPLES"
    TC_URL="http://127.0.0.1:$TC_PORT/examples/servlets/servlet/HelloWorldExample"
  fi
  chown -R "$TC_OS_UID:$TC_OS_GID" "$TC_DIR"
}

# The shell that runs the server from TC_ROOT in new mount and pid namespaces: $1 the root, $2
# the base (host paths), then the command. The root is bind-mounted on itself read-only
# (pivot_root takes a mount point), with its own /proc and /tmp and the base at /mnt.
tc_container_script='set -e; r=$1; base=$2; shift 2
mount --bind "$r" "$r"; mount -o remount,bind,ro "$r"
mount -t proc proc "$r/proc"; mount -t tmpfs -o mode=1777 jmt-tmp "$r/tmp"
mount --bind "$base" "$r/mnt"
cd "$r"; pivot_root . .; umount -l .; cd /; exec "$@"'

# Starts the server and waits until the servlet answers.
tc_start() {
  tc_check || return 1
  TC_DIR=$(mktemp -d "${TMPDIR:-/tmp}/jmt-tomcat.XXXXXX") || return 1
  chmod 755 "$TC_DIR"
  TC_PORT=$(tc_free_port) || { tc_log "no free port on 127.0.0.1"; return 1; }
  local base=$TC_DIR wrap=()
  if [ -n "$TC_ROOT" ]; then
    base=/mnt
    wrap=(unshare --mount --pid --fork --kill-child --propagation private -- sh -c "$tc_container_script" sh
          "$TC_ROOT" "$TC_DIR")
  fi
  tc_make_base "$base"
  # shellcheck disable=SC2086  # TC_JAVA_OPTS is a list of options
  "${wrap[@]}" setpriv --reuid="$TC_OS_UID" --regid="$TC_OS_GID" --clear-groups \
    "${JAVA:-java}" ${TC_PROBES--XX:+DTraceMethodProbes} ${TC_JAVA_OPTS:-} \
    -Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager \
    -Djava.util.logging.config.file="$base/conf/logging.properties" \
    -Dcatalina.home="$TC_HOME" -Dcatalina.base="$base" -Djava.io.tmpdir="$base/temp" \
    -cp "$TC_HOME/bin/bootstrap.jar:$TC_HOME/bin/tomcat-juli.jar" \
    org.apache.catalina.startup.Bootstrap start >"$TC_DIR/logs/stdout.log" 2>&1 &
  TC_PID=$! TC_WRAPPER_PID=""
  local deadline=$((SECONDS + ${TC_START_TIMEOUT:-60}))
  if [ -n "$TC_ROOT" ]; then  # the JVM: unshare's child, once setpriv has become java
    TC_WRAPPER_PID=$TC_PID TC_PID=""
    while ((SECONDS < deadline)) && tc_alive "$TC_WRAPPER_PID"; do
      TC_PID=$(pgrep -P "$TC_WRAPPER_PID" -x java || true)
      [ -z "$TC_PID" ] || break
      sleep 0.05
    done
    [ -n "$TC_PID" ] || TC_PID=$TC_WRAPPER_PID
  fi
  while ((SECONDS < deadline)); do
    if ! tc_alive "$TC_PID"; then
      tc_log "the server exited while starting; its log:"
      tail -20 "$TC_DIR/logs/stdout.log" >&2
      tc_stop
      return 1
    fi
    if curl -sf -m 5 -o /dev/null "$TC_URL"; then
      return 0
    fi
    sleep 0.2
  done
  tc_log "the server did not answer $TC_URL within ${TC_START_TIMEOUT:-60} s; its log:"
  tail -20 "$TC_DIR/logs/stdout.log" >&2
  tc_stop
  return 1
}

# Stops the server (SIGTERM, SIGKILL after 15 s) and removes its directory. Safe to call twice.
tc_stop() {
  if [ -n "${TC_PID:-}" ]; then
    kill -TERM "$TC_PID" 2>/dev/null
    for _ in $(seq 150); do tc_alive "$TC_PID" || break; sleep 0.1; done
    tc_alive "$TC_PID" && kill -KILL "$TC_PID" 2>/dev/null
    # unshare (--kill-child) ends with its child, and the namespace's mounts with it
    [ -z "${TC_WRAPPER_PID:-}" ] || wait "$TC_WRAPPER_PID" 2>/dev/null
    wait "$TC_PID" 2>/dev/null
    TC_PID="" TC_WRAPPER_PID=""
  fi
  if [ -n "${TC_DIR:-}" ] && [ -d "$TC_DIR" ]; then
    rm -rf "$TC_DIR"
    TC_DIR=""
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  trap 'tc_stop' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  tc_start || exit 1
  if (($# == 0)); then
    echo "Tomcat $TC_URL (pid $TC_PID); Ctrl-C stops it" >&2
    while tc_alive "$TC_PID"; do sleep 1; done
    exit 0
  fi
  TC_URL=$TC_URL TC_PID=$TC_PID "$@"
  exit $?
fi
