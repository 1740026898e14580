# shellcheck shell=sh
# The cases an emulated machine runs (sourced by its /init or run by bash; busybox sh is enough):
# the classic DTrace script's A/B/C flow attached mid-run and through the run-time switch, rows
# per thread with call paths and --foreign, launch mode, virtual threads on a JDK 25 on standby, bad input. Each case prints its report between
# "JMT-BEGIN NAME" and "JMT-END NAME RC"; check_cases.sh reads them on the host.
#
# Set before: JMT_BIN (jmethodtime), JMT_CLS (the example classes), JMT_ROOT25 (a root whose
# JMT_JAVA25 runs the JDK 25 case by chroot, as in a container), java on PATH (JDK 17).
: "${JMT_BIN:?}" "${JMT_CLS:?}" "${JMT_ROOT25:?}" "${JMT_JAVA25:?}"
jmt_tmp=$(mktemp -d /tmp/jmt-cases.XXXXXX)
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk "BEGIN { printf \"%.1f\", $(up) - $1 }"; }
echo "JMT-INFO kernel $(uname -r) $(uname -m) cpus $(grep -c ^processor /proc/cpuinfo) uptime $(up)"
[ -r /sys/kernel/btf/vmlinux ] || echo "JMT-INFO no /sys/kernel/btf/vmlinux"
"$JMT_BIN" --version

# case_out NAME FILE RC: prints FILE between the markers with the exit status RC.
case_out() {
  echo "JMT-BEGIN $1"
  cat "$2"
  echo "JMT-END $1 $3"
}

# start_jvm COMMAND...: a JVM that prints READY and waits for a line on $jmt_tmp/go.
start_jvm() {
  rm -f "$jmt_tmp/go" "$jmt_tmp/jvm.out"
  mkfifo "$jmt_tmp/go"
  exec 3<>"$jmt_tmp/go"
  "$@" <"$jmt_tmp/go" >"$jmt_tmp/jvm.out" 2>&1 &
  jvm=$!
  i=0
  while ! grep -q READY "$jmt_tmp/jvm.out" 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.5; i=$((i + 1)); done
}

# jmethodtime -p $jvm "$@" in the background until it says Tracing, then go; waits for both.
trace_running() {
  # Truncated here, not by the redirection in the child: an old file's "Tracing" must not be read.
  rm -f "$jmt_tmp/trace.out" "$jmt_tmp/trace.err"
  timeout -s TERM 600 "$JMT_BIN" -p "$jvm" "$@" >"$jmt_tmp/trace.out" 2>"$jmt_tmp/trace.err" &
  tracer=$!
  i=0
  while ! grep -q '^Tracing' "$jmt_tmp/trace.err" 2>/dev/null && [ $i -lt 1200 ]; do
    kill -0 $tracer 2>/dev/null || break
    sleep 0.5
    i=$((i + 1))
  done
  echo go >&3
  exec 3>&-
  wait $jvm
  wait $tracer
  rc=$?
  cat "$jmt_tmp/trace.err"
  [ $rc = 0 ] || { echo "JMT-INFO the JVM's last output:"; tail -n 5 "$jmt_tmp/jvm.out"; }
  return $rc
}

# 1. The A/B/C flow, attached mid-run: the flag on at start, the tracer attached while main() runs.
t0=$(up)
start_jvm java -XX:+DTraceMethodProbes -cp "$JMT_CLS" demo.abc.FixedWork 200 5
trace_running --package demo/abc --json -o "$jmt_tmp/attach.json"
rc=$?
case_out attach "$jmt_tmp/attach.json" $rc
echo "JMT-TIME attach $(since "$t0")"

# 1b. --per-thread with call paths (--json) and --foreign, a --method glob, attached: worker-1..3
#     call task() 1000, 2000 and 3000 times, then main 500; task() calls step() (untraced) twice.
t0=$(up)
start_jvm java -XX:+DTraceMethodProbes -cp "$JMT_CLS" demo.globs.Workers 1
trace_running --package demo/globs --method task --per-thread --foreign --json -o "$jmt_tmp/threads.json"
rc=$?
case_out threads "$jmt_tmp/threads.json" $rc
echo "JMT-TIME threads $(since "$t0")"

# 2. The run-time switch: a JVM started without -XX:+DTraceMethodProbes, its probes switched on;
#    every returned call recorded by --slower-than 1ns (--raw: a call's time as the probes saw it,
#    none taken out to zero), 50 kept.
t0=$(up)
start_jvm java -cp "$JMT_CLS" demo.abc.FixedWork 200 5
trace_running --package demo/abc --json -o "$jmt_tmp/switch.json" --settle 5 --raw --slower-than 1ns --slow-calls 50
rc=$?
case_out switch "$jmt_tmp/switch.json" $rc
echo "JMT-TIME switch $(since "$t0")"

# 3. Launch mode: traced from the JVM's first Java method (Startup: main calls step 1000
#    times, each step calls leaf once).
t0=$(up)
timeout -s TERM 600 "$JMT_BIN" --package demo/launch --json -o "$jmt_tmp/launch.json" -- \
  java -cp "$JMT_CLS" demo.launch.Startup 1000 </dev/null >"$jmt_tmp/launch.out" 2>"$jmt_tmp/launch.err"
rc=$?
cat "$jmt_tmp/launch.err"
# A refusal writes no report: its one line is the case's.
if [ -s "$jmt_tmp/launch.json" ]; then
  case_out launch "$jmt_tmp/launch.json" $rc
else
  case_out launch "$jmt_tmp/launch.err" $rc
fi
echo "JMT-TIME launch $(since "$t0")"

# 4. JDK 25 on standby (-XX:+DTraceMethodProbes from the start, nothing attached for a while),
#    then traced: 4 virtual threads of 3 steps each, every step sleeping (an unmount) between
#    two work() calls, followed across carriers. The JVM runs in JMT_ROOT25 by chroot, as in a
#    container; jmethodtime runs outside it.
t0=$(up)
mkdir -p "$JMT_ROOT25/proc" "$JMT_ROOT25/jmt-cls" "$JMT_ROOT25/tmp"
mount -t proc proc "$JMT_ROOT25/proc"
mount -t tmpfs tmp "$JMT_ROOT25/tmp"
mount --bind "$JMT_CLS" "$JMT_ROOT25/jmt-cls"
start_jvm chroot "$JMT_ROOT25" "$JMT_JAVA25" -XX:+DTraceMethodProbes -cp /jmt-cls \
  demo.vt.VirtualTasks sleep 4 3 20 500
sleep 2
trace_running --package demo/vt --json -o "$jmt_tmp/vthreads.json"
rc=$?
cat "$jmt_tmp/jvm.out"
umount "$JMT_ROOT25/jmt-cls" "$JMT_ROOT25/tmp" "$JMT_ROOT25/proc"
case_out vthreads "$jmt_tmp/vthreads.json" $rc
echo "JMT-TIME vthreads $(since "$t0")"

# 5. Bad input: no such process, a bad option value, a process that is not a JVM (on a kernel
#    the programs cannot load on, the kernel's refusal).
"$JMT_BIN" -p 999999 >"$jmt_tmp/bad.out" 2>"$jmt_tmp/bad.err"
case_out bad_pid "$jmt_tmp/bad.err" $?
"$JMT_BIN" -p 1 -d -3 >"$jmt_tmp/bad.out" 2>"$jmt_tmp/bad2.err"
case_out bad_duration "$jmt_tmp/bad2.err" $?
"$JMT_BIN" -p $$ -d 1 >"$jmt_tmp/bad.out" 2>"$jmt_tmp/bad3.err"
case_out not_a_jvm "$jmt_tmp/bad3.err" $?

echo "JMT-DONE uptime $(up)"
