#!/usr/bin/env bash
# The arm64 build from this x86-64 host, as CMakePresets.json's arm64 preset makes it
# (packaging/aarch64-linux-gnu.cmake, JMT_STATIC=ON), configured into ARM64_BUILD_DIR and built
# to its `package` target; then checked: jmethodtime is an AArch64 static executable that answers
# --version under qemu-aarch64-static, the .deb is arm64 with that binary and its man page, the
# embedded JVMTI agent was built for AArch64, the BPF object reads arm64's registers
# (user_pt_regs in its BTF), and the unit tests were built for AArch64.
#
# usage: cross_build.sh SOURCE_DIR ARM64_BUILD_DIR
# Exit 77 (skip) when the cross tools or :arm64 libraries are missing and CI is not true.
set -euo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1
# shellcheck source=arm64_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/arm64_lib.sh" || exit 1

if (($# != 2)); then
  echo "usage: $0 SOURCE_DIR ARM64_BUILD_DIR" >&2
  exit 2
fi
src=$1 dir=$2
need_arm64_cross
skip_or_fail_if_missing

t0=$SECONDS
mkdir -p "$dir"
log=$dir/cross-build.log
{ nice -n 19 cmake --preset arm64 -S "$src" -B "$dir" &&
  nice -n 19 cmake --build "$dir" -j2 --target package; } >"$log" 2>&1 ||
  { tail -n 40 "$log" >&2; fail "the arm64 cross build failed (whole log: $log)"; }
note "arm64 cross build (configure, build, package) took $((SECONDS - t0)) s"
if grep -i "warning: Using '.*' in statically linked" "$log"; then
  fail "glibc warns about a function that needs its shared libraries at run time (above)"
fi

# --- the static aarch64 binary ------------------------------------------------------------------
bin=$dir/jmethodtime
[ -x "$bin" ] || fail "no $bin"
aarch64_elf "$bin"
readelf -lW "$bin" | grep -q INTERP && fail "$bin has a program interpreter: not static"
readelf -d "$bin" | grep -q "There is no dynamic section" || fail "$bin has a dynamic section: not static"
[ "$(readelf -h "$bin" | sed -n 's/^ *Type: *//p' | cut -d' ' -f1)" = EXEC ] ||
  fail "$bin is not an executable (readelf -h: $(readelf -h "$bin" | sed -n 's/^ *Type: *//p'))"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$dir/CMakeCache.txt")
[ -n "$version" ] || fail "no project version in $dir/CMakeCache.txt"
t1=$SECONDS
out=$(qemu-aarch64-static "$bin" --version) || fail "qemu-aarch64-static $bin --version failed"
[ "$out" = "jmethodtime $version" ] || fail "qemu-aarch64-static $bin --version printed '$out'"
note "$bin: AArch64, static, $(stat -c %s "$bin") bytes; under qemu-aarch64-static: '$out' ($((SECONDS - t1)) s)"

# --- the embedded agent and the BPF programs ----------------------------------------------------
agent=$dir/user/generated/libjmtagent.so
aarch64_elf "$agent"
[ "$(readelf -h "$agent" | sed -n 's/^ *Type: *//p' | cut -d' ' -f1)" = DYN ] || fail "$agent is not a shared object"
readelf -d "$agent" | grep -q NEEDED && fail "$agent needs a library (it must need none): $(readelf -d "$agent" | grep NEEDED)"
note "$agent: AArch64 shared object, no library needed"
obj=$dir/bpf/jmethodtime.bpf.o
btf=$(bpftool btf dump file "$obj") || fail "bpftool cannot read the BTF of $obj"
grep -q "STRUCT 'user_pt_regs'" <<<"$btf" ||
  fail "$obj has no user_pt_regs in its BTF: not built with -D__TARGET_ARCH_arm64"
grep -q "STRUCT 'pt_regs'" <<<"$btf" || fail "$obj has no pt_regs in its BTF"
note "$obj: arm64's user_pt_regs in its BTF (CO-RE relocations against the running kernel's)"

# --- the .deb -----------------------------------------------------------------------------------
deb=$dir/jmethodtime_${version}_arm64.deb
[ -f "$deb" ] || { ls -la "$dir" >&2; fail "no $(basename "$deb") in $dir"; }
[ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || fail "$deb: Architecture is $(dpkg-deb -f "$deb" Architecture)"
dpkg-deb -f "$deb" Depends | grep -q . && fail "$deb depends on $(dpkg-deb -f "$deb" Depends): a static binary needs nothing"
x=$dir/deb-contents
rm -rf "$x"
dpkg-deb -x "$deb" "$x"
aarch64_elf "$x/usr/sbin/jmethodtime"
out=$(qemu-aarch64-static "$x/usr/sbin/jmethodtime" --version) || fail "the .deb's binary does not run under qemu"
[ "$out" = "jmethodtime $version" ] || fail "the .deb's binary: --version printed '$out'"
man=$x/usr/share/man/man8/jmethodtime.8.gz
zcat "$man" | grep -q '^\.TH JMETHODTIME "8"' || fail "$man is not jmethodtime's section 8 page"
zcat "$man" | grep -q -- 'package' || fail "$man does not describe --package (help2man under qemu?)"
note "$(basename "$deb"): Architecture arm64, $(stat -c %s "$deb") bytes, its binary and man page checked"

# --- the unit tests -----------------------------------------------------------------------------
aarch64_elf "$dir/tests/jmt_unit_tests"
note "arm64 build checked in $((SECONDS - t0)) s"
