# Cross build for arm64 (aarch64) on a Debian host with multiarch: the compilers from
# gcc-aarch64-linux-gnu / g++-aarch64-linux-gnu, the libraries from the :arm64 packages
# (libbpf-dev:arm64, libelf-dev:arm64, zlib1g-dev:arm64, libgtest-dev:arm64), which install
# into /usr/lib/aarch64-linux-gnu and /usr/include/aarch64-linux-gnu; no sysroot.
# Programs that run at build time (clang, bpftool, help2man, javac) are the host's; the
# aarch64 executables the build runs (help2man's `jmethodtime --help`, the unit tests' listing)
# run under qemu-aarch64-static (qemu-user-static).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

find_program(JMT_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(JMT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${JMT_QEMU_AARCH64})
endif()

# pkg-config reads the arm64 .pc files only (libbpf.pc, libelf.pc, zlib.pc).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# Libraries and headers: the aarch64 multiarch directories (CMAKE_LIBRARY_ARCHITECTURE), never
# the host's /usr/lib/x86_64-linux-gnu.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/include/x86_64-linux-gnu)
