# Sourced by the Tomcat shell tests after test_lib.sh: checks the arguments
# (JMETHODTIME SOURCE_DIR) and what a Tomcat test needs (skip 77, or fail under
# CI=true), sources examples/tomcat/tomcat.sh, sets jmt, src and work (a fresh
# directory under /tmp named for the test).
# usage: tomcat_test_setup NAME "$@"
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
