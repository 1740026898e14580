# shellcheck shell=bash
# The host's checks of the cases an emulated machine ran (tests/vm/cases.sh): sourced after
# test_lib.sh. check_cases FILE reads FILE (the machine's output, carriage returns taken out)
# and fails on the first case whose report is not what the A/B/C flow, rows per thread, launch mode, virtual
# threads and bad input must give: exact counts and call paths, every call in --slower-than's
# records, c()'s exclusive time equal to its inclusive time (a ratio emulation keeps), the cost
# range and its basis, every unmount followed, one line and the exit status for bad input.

jmt_cases_out=  # check_cases' FILE

# report NAME: the text between JMT-BEGIN NAME and JMT-END NAME RC; rc NAME: RC.
report() { awk -v n="$1" '$0 == "JMT-BEGIN " n { on = 1; next } $1 == "JMT-END" && $2 == n { on = 0 } on' "$jmt_cases_out"; }
rc() { awk -v n="$1" '$1 == "JMT-END" && $2 == n { print $3 }' "$jmt_cases_out"; }
# calls NAME METHOD: the calls of demo/abc/FixedWork.METHOD in NAME's JSON report.
calls() { report "$1" | jq -r --arg m "$2" '[.methods[] | select(.class == "demo/abc/FixedWork" and .method == $m) | .calls] | add // 0'; }
expect_calls() {  # NAME METHOD WANT
  local got
  got=$(calls "$1" "$2") || fail "$1: the report is not JSON: $(report "$1" | head -c 300)"
  [ "$got" = "$3" ] || fail "$1: $2() $got calls, expected $3"
}
leaf_excl_is_incl() {  # NAME: c() calls nothing traced, so its exclusive time is its inclusive time
  local v
  v=$(report "$1" | jq -r '.methods[] | select(.method == "c") | "\(.wall_excl_ns) \(.wall_incl_ns)"')
  [ -n "$v" ] && [ "${v% *}" = "${v#* }" ] || fail "$1: c()'s exclusive and inclusive times differ: $v"
}

# path_calls NAME FRAMES...: the calls of the call paths that end in these methods of FixedWork.
path_calls() {
  local name=$1
  shift
  report "$name" | jq -r --args '[.paths[] | select(.frames[-($ARGS.positional | length):] ==
    [$ARGS.positional[] | "demo.abc.FixedWork.\(.)()"]) | .calls] | add // 0' "$@"
}
# check_cases FILE [compat]: every case of FILE checked; returns when all pass, else fails.
# compat: a kernel without bpf_loop (5.10), whose compat programs name their fallbacks in each
# report's source.kernel.
check_cases() {
  jmt_cases_out=$1
  local compat=${2:-}
  grep -q '^JMT-DONE' "$jmt_cases_out" || { tail -n 60 "$jmt_cases_out" >&2; fail "the machine did not finish its cases"; }
  # 5.10 has no BPF cookies either (5.15): launch mode goes to the probes' sites as plain uprobes.
  [ "$(rc launch)" = 0 ] || fail "launch mode exited $(rc launch): $(report launch | head -c 400)"
  report launch | jq -e '[.methods[] | select(.class == "demo/launch/Startup") | {(.method): .calls}] | add |
    .step == 1000 and .leaf == 1000 and .main == 1' >/dev/null ||
    fail "launch mode: not step 1000, leaf 1000, main 1: $(report launch | jq -c '[.methods[] | {(.method): .calls}]')"
  for name in switch attach; do
    [ "$(rc $name)" = 0 ] || fail "$name: jmethodtime exited $(rc $name)"
    expect_calls $name a 200
    expect_calls $name b 400
    expect_calls $name c 1000
    expect_calls $name run 1
    leaf_excl_is_incl $name
    # Call paths: a() calls b() twice and c() once, b() calls c() twice.
    for want in "a b c 800" "a c 200" "a b 400"; do
      read -r -a w <<<"$want"
      got=$(path_calls $name "${w[@]:0:${#w[@]}-1}")
      [ "$got" = "${w[-1]}" ] || fail "$name: call path ${w[*]:0:${#w[@]}-1}: $got calls, expected ${w[-1]}"
    done
  done
  # --per-thread, call paths, --foreign: each thread's task() row exact, step()'s events inside it
  # untraced (as the main programs count them on the host), one call path.
  [ "$(rc threads)" = 0 ] || fail "threads: jmethodtime exited $(rc threads): $(report threads | head -c 300)"
  report threads | jq -e '[.methods[] | select(.class == "demo/globs/Workers" and .method == "task")] as $r |
    ($r | map({(.thread | if startswith("worker-") then . else "main" end): .calls}) | add) ==
      {"worker-1": 1000, "worker-2": 2000, "worker-3": 3000, "main": 500} and
    ($r | all(.events_incl == 5 * .calls and .events_foreign == 2 * .calls and .tid > 0)) and
    ([.paths[] | select(.frames == ["demo.globs.Workers.task(int)"]) | .calls] == [6500]) and
    .diagnostics.thread_rows_full == 0' >/dev/null ||
    fail "threads: not task() 1000, 2000, 3000 and 500 per thread, 5 events each (2 untraced), one path of 6500: $(report threads |
      jq -c '{rows: [.methods[] | {thread, calls, events_incl, events_foreign}], paths: [.paths[]? | {frames, calls}]}')"
  note "threads: task() $(report threads | jq -c '[.methods[] | {(.thread): .calls}] | add')"
  # The cost range: from the gaps between the JVM's own probe events when at least 1,000 of them
  # fall under the histogram's top (2^17 ns), else from the calibration, and then the report says
  # so. Under TCG an event costs about 200 us, above that top: the calibration's range, honestly.
  report attach | jq -e '.probe_cost as $c | $c.calibration_samples > 0 and
    ($c.range.traced_event_ns | .[0] > 0 and .[0] <= .[1]) and
    $c.range.traced_event_ns[0] <= $c.traced_event_ns and $c.traced_event_ns <= $c.range.traced_event_ns[1] and
    (if $c.range.basis == "gaps" then $c.gaps.samples >= 1000
     else $c.range.basis == "calibration" and $c.gaps.samples < 1000 end)' >/dev/null ||
    fail "attach: the cost range does not hold its likely cost or misnames its basis: $(report attach | jq -c '.probe_cost')"
  # --slower-than 1ns: every returned call recorded, 50 kept, the rest counted.
  local slow
  slow=$(report switch | jq -c '{kept: (.slow_calls | length), dropped: .diagnostics.slow_calls_dropped,
    lost: .diagnostics.slow_calls_lost, calls: ([.methods[].calls] | add)}') ||
    fail "switch: the report is not JSON: $(report switch | head -c 300)"
  jq -e '.kept == 50 and .kept + .dropped + .lost == .calls' <<<"$slow" >/dev/null ||
    fail "switch: --slower-than 1ns did not record every call: $slow"
  note "switch: --slower-than 1ns $slow"
  [ "$(rc vthreads)" = 0 ] || fail "vthreads: jmethodtime exited $(rc vthreads)"
  if [ -n "$compat" ]; then
    for name in attach threads switch vthreads launch; do
      report $name | jq -e '.source.kernel | test("fallbacks: without bpf_loop")' >/dev/null ||
        fail "$name: source.kernel does not name the compat programs' fallbacks: $(report $name | jq -c '.source.kernel')"
    done
  fi
  # Virtual threads on JDK 25 (standby, then traced): exact counts, every unmount followed.
  report vthreads | jq -e '([.methods[] | select(.class == "demo/vt/VirtualTasks") | {(.method): .calls}] | add) as $c |
    .diagnostics as $d | .virtual_threads_not_followed == "" and (.jdk_version | startswith("25")) and
    $c.task == 4 and $c.step == 12 and $c.block == 12 and $c.work == 24 and
    $d.vt_unmounts >= 12 and $d.vt_unmounts == $d.vt_mounts and $d.vt_frames_lost == 0 and
    $d.vt_unfollowed == 0 and $d.dropped_frames == 0' >/dev/null ||
    fail "vthreads: not task 4, step 12, block 12, work 24 with every unmount followed: $(report vthreads |
      jq -c '{not_followed: .virtual_threads_not_followed, jdk: .jdk_version, calls: [.methods[] | {(.method): .calls}],
        d: (.diagnostics | {vt_unmounts, vt_mounts, vt_frames_lost, vt_unfollowed, dropped_frames})}')"
  # Their times: each step's elapsed holds its sleep, which the virtual thread spent unmounted.
  # The JVM's own step and blocked times (nanoTime around each, summed) bound it: from 80% of the
  # blocked time (the JVM's own also holds the traps of the sleep's Java calls, which the trace
  # takes out: 8% of it under emulation on 5.10) to 105% of the step time.
  local done_line
  done_line=$(grep -a '^DONE steps=12 .*blocked_ns=' "$jmt_cases_out" | tail -n 1)
  [ -n "$done_line" ] || fail "vthreads: the JVM printed no DONE line"
  local jvm_times
  jvm_times=$(jq -nc --arg l "$done_line" '$l | ltrimstr("DONE ") | split(" ") | map(split("=") | {(.[0]): (.[1] | tonumber)}) | add')
  report vthreads | jq -e --argjson jvm "$jvm_times" \
    '[.methods[] | select(.class == "demo/vt/VirtualTasks" and .method == "step")][0] as $s |
    $s.wall_incl_ns >= 0.8 * $jvm.blocked_ns and $s.wall_incl_ns <= 1.05 * $jvm.step_ns and
    $s.blocked_incl_ns >= 0.8 * $jvm.blocked_ns and $s.blocked_incl_ns <= $s.wall_incl_ns' >/dev/null ||
    fail "vthreads: step() elapsed or blocked time not within the JVM's own ($done_line): $(report vthreads |
      jq -c '.methods[] | select(.method == "step") | {wall_incl_ns, blocked_incl_ns}')"
  [ "$(rc bad_pid)" = 1 ] || fail "-p 999999 exited $(rc bad_pid), expected 1"
  [ "$(report bad_pid | wc -l)" = 1 ] || fail "-p 999999 printed more than one line"
  report bad_pid | grep -q 'no process with pid 999999' || fail "-p 999999: $(report bad_pid)"
  [ "$(rc bad_duration)" = 2 ] || fail "-d -3 exited $(rc bad_duration), expected 2"
  [ "$(rc not_a_jvm)" = 1 ] && [ "$(report not_a_jvm | wc -l)" = 1 ] &&
    report not_a_jvm | grep -q 'is not a JVM' || fail "-p of a shell: exit $(rc not_a_jvm): $(report not_a_jvm)"
}

# check_refusals FILE FEATURE RELEASE: FILE from refusal_cases (below) on a kernel without
# FEATURE: every trace, launch mode and --list say in one line that FEATURE is missing and which
# RELEASE brought it, a trace and launch mode with exit 1 (launch mode before it starts the JVM,
# whose -version would be more lines);
# no verifier log nor libbpf's messages.
check_refusals() {
  jmt_cases_out=$1
  local name
  grep -q '^JMT-DONE' "$jmt_cases_out" || { tail -n 60 "$jmt_cases_out" >&2; fail "the machine did not finish its cases"; }
  for name in trace bad_pid launch list; do
    [ "$(report $name | wc -l)" = 1 ] || fail "$name: not one line on a kernel without $2: $(report $name)"
    report $name | grep -q "has no $2, .*Linux $3 or newer" ||
      fail "$name: does not name $2 and Linux $3: $(report $name)"
  done
  for name in trace bad_pid launch; do
    [ "$(rc $name)" = 1 ] || fail "$name exited $(rc $name) on a kernel without $2, expected 1"
  done
  [ "$(rc list)" = 0 ] || fail "--list exited $(rc list), expected 0"
  grep -q 'BEGIN PROG LOAD LOG\|libbpf:' "$jmt_cases_out" && fail "a verifier log or libbpf's messages were shown without -v"
  return 0
}

# The cases check_refusals reads, as one bash command for the machine: BIN traces this shell,
# pid 999999, and java -version in launch mode; --list; each one's stderr.
refusal_cases() {  # BIN
  local bin=$1
  cat <<EOS
echo "JMT-INFO kernel \$(uname -r)"
out() { echo "JMT-BEGIN \$1"; cat /tmp/err; echo "JMT-END \$1 \$2"; }
$bin -p \$\$ -d 1 2>/tmp/err; out trace \$?
$bin -p 999999 2>/tmp/err; out bad_pid \$?
$bin -- java -version 2>/tmp/err; out launch \$?
$bin --list 2>/tmp/err >/dev/null; out list \$?
echo JMT-DONE
EOS
}
