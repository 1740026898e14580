# Sourced by the Tomcat shell tests after test_lib.sh.
#
# tomcat_test_setup NAME "$@": checks the arguments (JMETHODTIME SOURCE_DIR) and what a test of
# the examples webapp needs (skip 77, or fail under CI=true), sources examples/tomcat/tomcat.sh,
# sets jmt, src and work (a fresh directory under /tmp named for the test).
#
# What every Tomcat test shares, once TC_URL is set (tc_start) and work exists:
#   load N [C]            N requests, C at a time (default 1); every one must get a 200
#   start_traffic [C]     requests, C at a time, in the background until stop_traffic
#   stop_traffic
#   tomcat_test_cleanup   for the EXIT trap: kills jmethodtime ($jmt_pid) and the traffic,
#                         stops the server, removes $work
jmt_pid="" bg=""

tomcat_test_setup() {
  local name=$1
  shift
  if (($# != 2)); then
    echo "usage: $0 JMETHODTIME SOURCE_DIR" >&2
    exit 2
  fi
  jmt=$1 src=$2
  need_root_and_btf
  need_executable "$jmt" "$jmt (build jmethodtime)"
  need_file /usr/share/tomcat10/lib/catalina.jar "Tomcat 10 (apt-get install tomcat10)"
  need_file /usr/share/tomcat10-examples/examples/WEB-INF/classes/HelloWorldExample.class \
    "Tomcat's examples (apt-get install tomcat10-examples)"
  need_tools ab jq curl java setpriv
  skip_or_fail_if_missing
  # shellcheck source=../../examples/tomcat/tomcat.sh
  source "$src/examples/tomcat/tomcat.sh"
  work=$(mktemp -d "/tmp/jmt-$name.XXXXXX")
}

load() {
  local c=${2:-1}
  ab -n "$1" -c "$c" "$TC_URL" >"$work/ab.txt" 2>&1 || { cat "$work/ab.txt" >&2; fail "ab -n $1 -c $c failed"; }
  grep -q '^Failed requests: *0' "$work/ab.txt" || { cat "$work/ab.txt" >&2; fail "ab: failed requests"; }
  if grep -q '^Non-2xx' "$work/ab.txt"; then cat "$work/ab.txt" >&2; fail "ab: responses other than 200"; fi
}

start_traffic() {
  ab -t 600 -n 100000000 -c "${1:-1}" "$TC_URL" >/dev/null 2>&1 &
  bg=$!
}

stop_traffic() {
  if [ -n "$bg" ]; then kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null; fi
  bg=""
}

tomcat_test_cleanup() {
  if [ -n "$jmt_pid" ]; then kill -KILL "$jmt_pid" 2>/dev/null; wait "$jmt_pid" 2>/dev/null; fi
  stop_traffic
  tc_stop
  rm -rf "$work"
}
