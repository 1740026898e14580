# shellcheck shell=bash
# What the arm64 tests (tests/arm64/*.sh) share; sourced after ../common/test_lib.sh.
#   need_arm64_cross    appends to missing what the arm64 cross build and its qemu-user runs need
#                       that this host lacks (each entry names its Debian package)
#   aarch64_elf FILE    fails unless FILE is an AArch64 ELF file

arm64_lib=/usr/lib/aarch64-linux-gnu
arm64_install="dpkg --add-architecture arm64 && apt-get update && apt-get install"

need_arm64_cross() {
  need_tool aarch64-linux-gnu-gcc "aarch64-linux-gnu-gcc ($arm64_install gcc-aarch64-linux-gnu, or .ci/install-deps)"
  need_tool aarch64-linux-gnu-g++ "aarch64-linux-gnu-g++ ($arm64_install g++-aarch64-linux-gnu)"
  need_tool qemu-aarch64-static "qemu-aarch64-static ($arm64_install qemu-user-static)"
  need_tools cmake cpack clang bpftool help2man readelf dpkg-deb
  need_file "$arm64_lib/libbpf.a" "libbpf for arm64 ($arm64_install libbpf-dev:arm64)"
  need_file "$arm64_lib/libelf.a" "libelf for arm64 ($arm64_install libelf-dev:arm64)"
  need_file "$arm64_lib/libz.a" "zlib for arm64 ($arm64_install zlib1g-dev:arm64)"
  need_file "$arm64_lib/libc.a" "glibc for arm64 ($arm64_install libc6-dev:arm64)"
  need_file "$arm64_lib/libstdc++.so.6" "libstdc++ for arm64 ($arm64_install libstdc++-12-dev:arm64)"
  need_file "$arm64_lib/libgtest.a" "GoogleTest for arm64 ($arm64_install libgtest-dev:arm64)"
  need_file /usr/include/aarch64-linux-gnu/sys/sdt.h "sys/sdt.h for arm64 ($arm64_install systemtap-sdt-dev:arm64)"
  need_file /lib/ld-linux-aarch64.so.1 "arm64's dynamic loader for qemu-user ($arm64_install libc6:arm64)"
  return 0
}

aarch64_elf() {  # FILE
  local machine
  machine=$(readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p')
  [ "$machine" = AArch64 ] || fail "$1 is not for AArch64 (readelf -h: Machine '$machine')"
}
