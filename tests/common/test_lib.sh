# shellcheck shell=bash
# The preamble shared by the shell-driven tests (tests/*/*.sh). Sourced, not executed, by each
# test relative to its own location:
#   # shellcheck source=../common/test_lib.sh
#   source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1
#
# The contract of a test that sources it: exit status 0 pass, 1 fail, 77 skip (the tests'
# SKIP_RETURN_CODE in CMake). A test skips only when something it needs is missing, and under
# CI=true that is a failure instead. (Exit 2 for a wrong usage stays with each script.)
#
# It sets no shell options: the tests set their own (set -uo pipefail, some also -e). Every
# function here returns 0 or exits, so it is safe under set -e and set -u.
#
#   fail MESSAGE...          prints "FAIL: MESSAGE..." on stderr and exits 1
#   note MESSAGE...          prints "-- MESSAGE..." on stdout
#   missing                  an array, empty once sourced: one entry per thing the test needs and
#                            lacks, each naming it and how to get it. The need_* functions append
#                            to it; a test appends its own entries for checks of its own.
#   need_root_and_btf        root, and the kernel's BTF at /sys/kernel/btf/vmlinux (what the BPF
#                            programs need)
#   need_tools TOOL...       each TOOL (a name or a path) that command -v does not find, named as is
#   need_tool TOOL WHAT      TOOL that command -v does not find, named by WHAT
#   need_file PATH WHAT      PATH that is not a readable file, named by WHAT
#   need_executable PATH WHAT
#                            PATH that is not executable, named by WHAT
#   skip_or_fail_if_missing  returns when missing is empty; otherwise, under CI=true, fails with
#                            "FAIL: CI=true and missing: A; B", else prints "SKIP: missing: A; B"
#                            on stdout and exits 77
# WHAT is the whole entry, e.g. "Tomcat 10 (apt-get install tomcat10)".

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "-- $*"; }

missing=()

need_root_and_btf() {
  [ "$(id -u)" = 0 ] || missing+=("root (run the tests as root)")
  [ -r /sys/kernel/btf/vmlinux ] || missing+=("BTF (/sys/kernel/btf/vmlinux)")
  return 0
}

need_tools() {  # TOOL...
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  return 0
}

need_tool() {  # TOOL WHAT
  command -v "$1" >/dev/null || missing+=("$2")
  return 0
}

need_file() {  # PATH WHAT
  if [ ! -f "$1" ] || [ ! -r "$1" ]; then missing+=("$2"); fi
  return 0
}

need_executable() {  # PATH WHAT
  [ -x "$1" ] || missing+=("$2")
  return 0
}

skip_or_fail_if_missing() {
  ((${#missing[@]})) || return 0
  local what
  what=$(printf '%s; ' "${missing[@]}")
  what=${what%; }
  [ "${CI:-}" = true ] && fail "CI=true and missing: $what"
  echo "SKIP: missing: $what"
  exit 77
}
