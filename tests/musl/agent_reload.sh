#!/usr/bin/env bash
# musl's dynamic linker loads jmethodtime's agent once per JVM only through the agent's kept file
# (agent_reload.c): built with musl-gcc, run on Debian's musl, with the agent the build made.
# usage: agent_reload.sh AGENT_SO
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=../common/test_lib.sh
source "$here/../common/test_lib.sh" || exit 1
agent=${1:?usage: $0 AGENT_SO}
need_tool musl-gcc "musl-gcc (apt-get install musl-tools)"
compgen -G '/lib/ld-musl-*.so.1' >/dev/null || missing+=("musl's dynamic linker (apt-get install musl)")
need_file "$agent" "the agent $agent (the build makes it)"
skip_or_fail_if_missing
work=$(mktemp -d /tmp/jmt-musl.XXXXXX)
trap 'rm -rf "$work"' EXIT
musl-gcc -O2 -Wall -Werror -o "$work/agent_reload" "$here/agent_reload.c"
# Built by musl-gcc: its interpreter is musl's, not glibc's.
readelf -l "$work/agent_reload" | grep -q 'ld-musl' || fail "agent_reload is not a musl program"
mkdir "$work/place"
"$work/agent_reload" "$agent" "$work/place" || fail "musl loaded the kept agent file as another copy (above)"
note "musl: an agent placed anew is a second copy; its kept file (/proc/self/fd/N) is the first"
