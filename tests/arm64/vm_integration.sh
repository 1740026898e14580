#!/usr/bin/env bash
# jmethodtime for arm64 in an emulated arm64 machine: qemu-system-aarch64 (TCG) boots Debian's
# arm64 kernel (trixie's, with BTF) on an initramfs made from an arm64 Debian root (bookworm,
# OpenJDK 17, busybox; mmdebstrap --variant=extract needs no emulation) plus the cross-built
# static jmethodtime and the example classes. vm_init.sh, the machine's /init, runs the cases
# and prints each report between markers; this script checks them: the classic DTrace script's
# A/B/C flow attached mid-run and through the run-time switch (exact counts, and c()'s
# exclusive time equal to its inclusive time: a ratio emulation keeps), launch mode (exact
# counts from the first Java method), virtual threads on a JDK 25 on standby (trixie's arm64
# root with OpenJDK 25, in the machine at /root25: exact counts, every unmount followed), and
# bad input (one line, exit 1 and 2).
#
# usage: vm_integration.sh SOURCE_DIR ARM64_BUILD_DIR CLASSES_DIR [CACHE_DIR]
#   CACHE_DIR (default /var/cache/jmethodtime/arm64-vm) keeps the root and the kernel between
#   runs; each is made again when its record (suite, packages) differs.
# Exit 77 (skip) when qemu-system-aarch64, mmdebstrap, cpio or jq is missing and CI is not true.
set -euo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1

if (($# < 3 || $# > 4)); then
  echo "usage: $0 SOURCE_DIR ARM64_BUILD_DIR CLASSES_DIR [CACHE_DIR]" >&2
  exit 2
fi
src=$1 dir=$2 classes=$3 cache=${4:-/var/cache/jmethodtime/arm64-vm}
[ "$(id -u)" = 0 ] || missing+=("root (run the tests as root)")
need_tool qemu-system-aarch64 "qemu-system-aarch64 (apt-get install qemu-system-arm, or .ci/install-deps)"
need_tool mmdebstrap "mmdebstrap (apt-get install mmdebstrap)"
need_tool cpio "cpio (apt-get install cpio)"
need_tool jq "jq (apt-get install jq)"
skip_or_fail_if_missing
bin=$dir/jmethodtime
[ -x "$bin" ] || fail "no $bin: the arm64 build (ctest -R arm64.cross_build) did not make it"
[ -d "$classes/demo/abc" ] || fail "no compiled examples in $classes"
mirror=http://deb.debian.org/debian

# make_tree DIR RECORD SUITE PACKAGES [KEEP]: DIR made by mmdebstrap unless its record is RECORD;
# with KEEP, only that top directory of it is kept (the kernel's boot/, not its 400 MB of modules).
make_tree() {
  local tree=$1 record=$2 suite=$3 packages=$4 keep=${5:-}
  if [ -f "$tree/.jmethodtime-root" ] && [ "$(cat "$tree/.jmethodtime-root")" = "$record" ]; then
    return 0
  fi
  rm -rf --one-file-system "$tree" "$tree.new"
  mkdir -p "$(dirname "$tree")"
  nice -n 19 mmdebstrap --architectures=arm64 --variant=extract --include="$packages" "$suite" "$tree.new" "$mirror" \
    >"$tree.log" 2>&1 || { tail -n 20 "$tree.log" >&2; fail "mmdebstrap $suite ($packages) failed"; }
  if [ -n "$keep" ]; then
    find "$tree.new" -mindepth 1 -maxdepth 1 ! -name "$keep" -exec rm -rf --one-file-system {} +
  fi
  echo "$record" >"$tree.new/.jmethodtime-root"
  mv "$tree.new" "$tree"
}
t0=$SECONDS
make_tree "$cache/root" "bookworm arm64 extract openjdk-17-jre-headless,busybox-static" bookworm \
  openjdk-17-jre-headless,busybox-static
make_tree "$cache/root25" "trixie arm64 extract openjdk-25-jre-headless" trixie openjdk-25-jre-headless
# trixie's /bin, /lib and /sbin are links into /usr, which --variant=extract does not make: the
# JVM's loader is /lib/ld-linux-aarch64.so.1.
for d in bin lib sbin; do
  [ -e "$cache/root25/$d" ] || ln -s "usr/$d" "$cache/root25/$d"
done
make_tree "$cache/kernel" "trixie arm64 extract linux-image-arm64, boot only" trixie linux-image-arm64 boot
kernel=$(ls "$cache"/kernel/boot/vmlinuz-*-arm64 | head -n 1)
[ -f "$kernel" ] || fail "no arm64 kernel image in $cache/kernel/boot"
note "root and kernel ready in $((SECONDS - t0)) s ($(basename "$kernel"))"

work=$(mktemp -d /tmp/jmt-arm64-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The root's archive, then one with /init, /jmethodtime and /cls: the kernel unpacks both.
(cd "$cache/root" && find . -path ./usr/share/doc -prune -o -path ./usr/share/man -prune -o \
  -path ./usr/share/locale -prune -o ! -name .jmethodtime-root -print | cpio -o -H newc --quiet) >"$work/initrd"
# trixie's root with OpenJDK 25 under /root25 (the JVM of the virtual-thread case runs in it).
(cd "$cache" && find root25 -path root25/usr/share/doc -prune -o -path root25/usr/share/man -prune -o \
  -path root25/usr/share/locale -prune -o ! -name .jmethodtime-root -print | cpio -o -H newc --quiet) >>"$work/initrd"
mkdir "$work/extra"
install -m 0755 "$src/tests/arm64/vm_init.sh" "$work/extra/init"
aarch64-linux-gnu-strip -o "$work/extra/jmethodtime" "$bin" 2>/dev/null || cp "$bin" "$work/extra/jmethodtime"
cp -r "$classes" "$work/extra/cls"
(cd "$work/extra" && find . | cpio -o -H newc --quiet) >>"$work/initrd"

t1=$SECONDS
timeout 1500 nice -n 19 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 3072 -nographic -nic none \
  -no-reboot -kernel "$kernel" -initrd "$work/initrd" -append "console=ttyAMA0 rdinit=/init panic=-1 quiet" \
  </dev/null >"$work/console.log" 2>&1 || true
tr -d '\r' <"$work/console.log" >"$work/console.txt"
note "the emulated machine ran $((SECONDS - t1)) s"
grep -a '^JMT-\|^jmethodtime\|^Tracing\|^Traced\|^Switched\|^Probe events' "$work/console.txt" |
  grep -v '^JMT-BEGIN\|^JMT-END' || true
grep -q '^JMT-DONE' "$work/console.txt" || { tail -n 60 "$work/console.txt" >&2; fail "the machine did not finish its cases"; }

# report NAME: the text between JMT-BEGIN NAME and JMT-END NAME RC; rc NAME: RC.
report() { awk -v n="$1" '$0 == "JMT-BEGIN " n { on = 1; next } $1 == "JMT-END" && $2 == n { on = 0 } on' "$work/console.txt"; }
rc() { awk -v n="$1" '$1 == "JMT-END" && $2 == n { print $3 }' "$work/console.txt"; }
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

[ "$(rc launch)" = 0 ] || fail "launch mode exited $(rc launch)"
report launch | jq -e '[.methods[] | select(.class == "demo/launch/Startup") | {(.method): .calls}] | add |
  .step == 1000 and .leaf == 1000 and .main == 1' >/dev/null ||
  fail "launch mode: not step 1000, leaf 1000, main 1: $(report launch | jq -c '[.methods[] | {(.method): .calls}]')"
# path_calls NAME FRAMES...: the calls of the call paths that end in these methods of FixedWork.
path_calls() {
  local name=$1
  shift
  report "$name" | jq -r --args '[.paths[] | select(.frames[-($ARGS.positional | length):] ==
    [$ARGS.positional[] | "demo.abc.FixedWork.\(.)()"]) | .calls] | add // 0' "$@"
}
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
# The cost range: from the gaps between the JVM's own probe events when at least 1,000 of them
# fall under the histogram's top (2^17 ns), else from the calibration, and then the report says
# so. Under TCG an event costs about 200 us, above that top: the calibration's range, honestly.
report attach | jq -e '.probe_cost as $c | $c.calibration_samples > 0 and
  ($c.range.traced_event_ns | .[0] > 0 and .[0] <= .[1]) and
  $c.range.traced_event_ns[0] <= $c.traced_event_ns and $c.traced_event_ns <= $c.range.traced_event_ns[1] and
  (if $c.range.basis == "gaps" then $c.gaps.samples >= 1000
   else $c.range.basis == "calibration" and $c.gaps.samples < 1000 end)' >/dev/null ||
  fail "attach: the cost range does not hold its likely cost or misnames its basis: $(report attach | jq -c '.probe_cost')"
# Virtual threads on JDK 25 (standby, then traced): exact counts, every unmount followed.
[ "$(rc vthreads)" = 0 ] || fail "vthreads: jmethodtime exited $(rc vthreads)"
report vthreads | jq -e '([.methods[] | select(.class == "demo/vt/VirtualTasks") | {(.method): .calls}] | add) as $c |
  .diagnostics as $d | .virtual_threads_not_followed == "" and (.jdk_version | startswith("25")) and
  $c.task == 4 and $c.step == 12 and $c.block == 12 and $c.work == 24 and
  $d.vt_unmounts >= 12 and $d.vt_unmounts == $d.vt_mounts and $d.vt_frames_lost == 0 and
  $d.vt_unfollowed == 0 and $d.dropped_frames == 0' >/dev/null ||
  fail "vthreads: not task 4, step 12, block 12, work 24 with every unmount followed: $(report vthreads |
    jq -c '{not_followed: .virtual_threads_not_followed, jdk: .jdk_version, calls: [.methods[] | {(.method): .calls}],
      d: (.diagnostics | {vt_unmounts, vt_mounts, vt_frames_lost, vt_unfollowed, dropped_frames})}')"
[ "$(rc bad_pid)" = 1 ] || fail "-p 999999 exited $(rc bad_pid), expected 1"
[ "$(report bad_pid | wc -l)" = 1 ] || fail "-p 999999 printed more than one line"
report bad_pid | grep -q 'no process with pid 999999' || fail "-p 999999: $(report bad_pid)"
[ "$(rc bad_duration)" = 2 ] || fail "-d -3 exited $(rc bad_duration), expected 2"
note "arm64 in the emulated machine: the A/B/C flow attached mid-run and switched at run time (exact counts and call paths, the cost range and its basis), launch mode (exact counts), virtual threads on a JDK 25 on standby (exact counts, every unmount followed) and bad input pass ($((SECONDS - t0)) s)"
