#!/usr/bin/env bash
# A throwaway Tomcat 10 (Debian's tomcat10 and tomcat10-examples packages) for the application
# server example and its test: a fresh CATALINA_BASE in a new temporary directory, the examples
# webapp at /examples, one HTTP connector on 127.0.0.1 at a free port, run by the tomcat user (or
# nobody) with -XX:+DTraceMethodProbes. Stopping it (SIGTERM, then SIGKILL) leaves no process and
# no directory behind.
#
# As a command (root):
#   examples/tomcat/tomcat.sh                     start, print its URL and pid, wait for Ctrl-C
#   examples/tomcat/tomcat.sh COMMAND [ARGS...]   start, run COMMAND with TC_URL and TC_PID set, stop
# From another script (which must call tc_stop from its EXIT trap):
#   source examples/tomcat/tomcat.sh; tc_start; ... "$TC_URL" ... "$TC_PID" ...; tc_stop
#
# tc_start sets TC_DIR (the CATALINA_BASE, under ${TMPDIR:-/tmp}), TC_PORT, TC_PID (the JVM) and
# TC_URL (http://127.0.0.1:PORT/examples/servlets/servlet/HelloWorldExample).
# Environment: TC_HOME (default /usr/share/tomcat10), TC_EXAMPLES (default
# /usr/share/tomcat10-examples/examples), JAVA (default java), TC_OS_USER (default tomcat),
# TC_JAVA_OPTS (more JVM options), TC_PROBES (the probe flag; default -XX:+DTraceMethodProbes,
# empty: started without it, for the runtime switch), TC_START_TIMEOUT (seconds; default 60).

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
  if [ ! -r "$TC_HOME/bin/bootstrap.jar" ] || [ ! -r "$TC_HOME/lib/catalina.jar" ]; then
    tc_log "no Tomcat 10 in $TC_HOME: apt-get install tomcat10"
    return 1
  fi
  if [ ! -r "$TC_EXAMPLES/WEB-INF/classes/HelloWorldExample.class" ]; then
    tc_log "no Tomcat examples webapp in $TC_EXAMPLES: apt-get install tomcat10-examples"
    return 1
  fi
  if [ "$(id -u)" != 0 ]; then
    tc_log "not root: the server runs as an unprivileged user, which needs root to switch to"
    return 1
  fi
  local tool
  for tool in setpriv ps curl "${JAVA:-java}"; do
    command -v "$tool" >/dev/null || { tc_log "$tool not found"; return 1; }
  done
  if [ -z "${TC_OS_USER:-}" ]; then
    if id tomcat >/dev/null 2>&1; then TC_OS_USER=tomcat; else TC_OS_USER=nobody; fi
  fi
  TC_OS_GROUP=$(id -g "$TC_OS_USER") || { tc_log "no user $TC_OS_USER to run the server as"; return 1; }
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

# The CATALINA_BASE: Debian's configuration, but one connector on 127.0.0.1:$TC_PORT, no
# shutdown port, no default webapps, and the examples at /examples.
tc_make_base() {
  mkdir -p "$TC_DIR/conf/Catalina/localhost" "$TC_DIR/webapps" "$TC_DIR/logs" "$TC_DIR/work" "$TC_DIR/temp"
  cp /etc/tomcat10/web.xml /etc/tomcat10/context.xml /etc/tomcat10/catalina.properties \
    /etc/tomcat10/logging.properties /etc/tomcat10/tomcat-users.xml "$TC_DIR/conf/" 2>/dev/null ||
    cp "$TC_HOME"/etc/*.xml "$TC_HOME"/etc/*.properties "$TC_DIR/conf/" 2>/dev/null
  cat >"$TC_DIR/conf/server.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector address="127.0.0.1" port="$TC_PORT" protocol="HTTP/1.1" connectionTimeout="20000"/>
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/>
    </Engine>
  </Service>
</Server>
EOF
  cat >"$TC_DIR/conf/Catalina/localhost/examples.xml" <<EOF
<Context path="/examples" docBase="$TC_EXAMPLES">
  <Resources allowLinking="true"/>
</Context>
EOF
  chown -R "$TC_OS_USER:$TC_OS_GROUP" "$TC_DIR"
}

# Starts the server and waits until the servlet answers.
tc_start() {
  tc_check || return 1
  TC_DIR=$(mktemp -d "${TMPDIR:-/tmp}/jmt-tomcat.XXXXXX") || return 1
  chmod 755 "$TC_DIR"
  TC_PORT=$(tc_free_port) || { tc_log "no free port on 127.0.0.1"; return 1; }
  tc_make_base
  TC_URL="http://127.0.0.1:$TC_PORT/examples/servlets/servlet/HelloWorldExample"
  # shellcheck disable=SC2086  # TC_JAVA_OPTS is a list of options
  setpriv --reuid="$TC_OS_USER" --regid="$TC_OS_GROUP" --clear-groups \
    "${JAVA:-java}" ${TC_PROBES--XX:+DTraceMethodProbes} ${TC_JAVA_OPTS:-} \
    -Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager \
    -Djava.util.logging.config.file="$TC_DIR/conf/logging.properties" \
    -Dcatalina.home="$TC_HOME" -Dcatalina.base="$TC_DIR" -Djava.io.tmpdir="$TC_DIR/temp" \
    -cp "$TC_HOME/bin/bootstrap.jar:$TC_HOME/bin/tomcat-juli.jar" \
    org.apache.catalina.startup.Bootstrap start >"$TC_DIR/logs/stdout.log" 2>&1 &
  TC_PID=$!
  local deadline=$((SECONDS + ${TC_START_TIMEOUT:-60}))
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
    wait "$TC_PID" 2>/dev/null
    TC_PID=""
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
