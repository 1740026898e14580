#!/bin/busybox sh
# /init of the emulated arm64 machine (vm_integration.sh puts it into the initramfs with the
# arm64 jmethodtime at /jmethodtime, the example classes at /cls, Debian's arm64 OpenJDK 17 and
# trixie's root with OpenJDK 25 at /root25). The cases: the A/B/C flow attached mid-run, the
# run-time switch, launch mode, virtual threads on a JDK 25 on standby, bad input.
# Each case prints its report between "JMT-BEGIN NAME" and "JMT-END NAME RC"; the host checks
# them. The machine powers off at the end.
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /tmp /sys/fs/bpf
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
export PATH=/usr/lib/jvm/java-17-openjdk-arm64/bin:/usr/bin:/bin
up() { cut -d' ' -f1 /proc/uptime; }
since() { awk "BEGIN { printf \"%.1f\", $(up) - $1 }"; }
echo "JMT-INFO kernel $(uname -r) $(uname -m) cpus $(grep -c ^processor /proc/cpuinfo) uptime $(up)"
[ -r /sys/kernel/btf/vmlinux ] || echo "JMT-INFO no /sys/kernel/btf/vmlinux"
/jmethodtime --version

# case NAME FILE RC: prints FILE between the markers with the exit status RC.
case_out() {
  echo "JMT-BEGIN $1"
  cat "$2"
  echo "JMT-END $1 $3"
}

# start_jvm COMMAND...: a JVM that prints READY and waits for a line on /tmp/go.
start_jvm() {
  rm -f /tmp/go /tmp/jvm.out
  mkfifo /tmp/go
  exec 3<>/tmp/go
  "$@" </tmp/go >/tmp/jvm.out 2>&1 &
  jvm=$!
  i=0
  while ! grep -q READY /tmp/jvm.out 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.5; i=$((i + 1)); done
}

# jmethodtime -p $jvm $@ in the background until it says Tracing, then go; waits for both.
trace_running() {
  timeout -s TERM 600 /jmethodtime -p "$jvm" "$@" >/tmp/trace.out 2>/tmp/trace.err &
  tracer=$!
  i=0
  while ! grep -q '^Tracing' /tmp/trace.err 2>/dev/null && [ $i -lt 1200 ]; do
    kill -0 $tracer 2>/dev/null || break
    sleep 0.5
    i=$((i + 1))
  done
  echo go >&3
  exec 3>&-
  wait $jvm
  wait $tracer
  rc=$?
  cat /tmp/trace.err
  return $rc
}

# 1. The classic DTrace script's A/B/C flow, attached mid-run: the flag on at start, the tracer
#    attached while main() runs.
t0=$(up)
start_jvm java -XX:+DTraceMethodProbes -cp /cls demo.abc.FixedWork 200 5
trace_running --package demo/abc --json -o /tmp/attach.json
rc=$?
case_out attach /tmp/attach.json $rc
echo "JMT-TIME attach $(since $t0)"

# 2. The run-time switch: a JVM started without -XX:+DTraceMethodProbes, its probes switched on.
t0=$(up)
start_jvm java -cp /cls demo.abc.FixedWork 200 5
trace_running --package demo/abc --json -o /tmp/switch.json --settle 5
rc=$?
case_out switch /tmp/switch.json $rc
echo "JMT-TIME switch $(since $t0)"

# 3. Launch mode: traced from the JVM's first Java method (Startup: main calls step 1000
#    times, each step calls leaf once).
t0=$(up)
timeout -s TERM 600 /jmethodtime --package demo/launch --json -o /tmp/launch.json -- \
  java -cp /cls demo.launch.Startup 1000 </dev/null >/tmp/launch.out 2>/tmp/launch.err
rc=$?
cat /tmp/launch.err
case_out launch /tmp/launch.json $rc
echo "JMT-TIME launch $(since $t0)"

# 4. JDK 25 on standby (-XX:+DTraceMethodProbes from the start, nothing attached for a while),
#    then traced: 4 virtual threads of 3 steps each, every step sleeping (an unmount) between
#    two work() calls, followed across carriers. The JVM runs in trixie's root (/root25) by
#    chroot, as in a container; jmethodtime runs outside it.
t0=$(up)
mkdir -p /root25/proc /root25/cls /root25/tmp
mount -t proc proc /root25/proc
mount --bind /cls /root25/cls
mount --bind /tmp /root25/tmp
start_jvm chroot /root25 /usr/lib/jvm/java-25-openjdk-arm64/bin/java -XX:+DTraceMethodProbes -cp /cls \
  demo.vt.VirtualTasks sleep 4 3 20 500
sleep 2
trace_running --package demo/vt --json -o /tmp/vthreads.json
rc=$?
cat /tmp/jvm.out
case_out vthreads /tmp/vthreads.json $rc
echo "JMT-TIME vthreads $(since $t0)"

# 5. Bad input: no such process, and a bad option value.
/jmethodtime -p 999999 >/tmp/bad.out 2>/tmp/bad.err
case_out bad_pid /tmp/bad.err $?
/jmethodtime -p 1 -d -3 >/tmp/bad.out 2>/tmp/bad2.err
case_out bad_duration /tmp/bad2.err $?

echo "JMT-DONE uptime $(up)"
sync
poweroff -f
