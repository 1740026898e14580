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
# shellcheck source=../vm/check_cases.sh
source "$(dirname "${BASH_SOURCE[0]}")/../vm/check_cases.sh" || exit 1

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
install -m 0644 "$src/tests/vm/cases.sh" "$work/extra/cases.sh"
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

check_cases "$work/console.txt"
note "arm64 in the emulated machine: the A/B/C flow attached mid-run and switched at run time (exact counts and call paths, the cost range and its basis), launch mode (exact counts), virtual threads on a JDK 25 on standby (exact counts, every unmount followed) and bad input pass ($((SECONDS - t0)) s)"
