#!/usr/bin/env bash
# The unit tests built for arm64 (cross_build.sh) run under qemu-aarch64-static: every test of
# tests/unit on an emulated AArch64 CPU, the USDT decoding of both machines included.
#
# usage: unit_tests.sh ARM64_BUILD_DIR [GTEST_ARGS...]
# Exit 77 (skip) when the cross tools are missing and CI is not true (as cross_build.sh).
set -uo pipefail
# shellcheck source=../common/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/test_lib.sh" || exit 1
# shellcheck source=arm64_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/arm64_lib.sh" || exit 1

if (($# < 1)); then
  echo "usage: $0 ARM64_BUILD_DIR [GTEST_ARGS...]" >&2
  exit 2
fi
dir=$1
shift
need_arm64_cross
skip_or_fail_if_missing
bin=$dir/tests/jmt_unit_tests
[ -x "$bin" ] || fail "no $bin: the arm64 build (ctest -R arm64.cross_build) did not make it"
aarch64_elf "$bin"
t0=$SECONDS
# InspectLibjvm.DebianJdkHasTheProbesAndTheFlagSymbol reads an installed JDK 17 of the
# test's own architecture: this host's are amd64. The arm64 JDK 17's probes are read and
# traced in the emulated machine (arm64.vm_integration).
note "InspectLibjvm.DebianJdkHasTheProbesAndTheFlagSymbol left to arm64.vm_integration: no arm64 JDK 17 on this host"
qemu-aarch64-static "$bin" --gtest_brief=1 --gtest_filter=-InspectLibjvm.DebianJdkHasTheProbesAndTheFlagSymbol "$@"
rc=$?
note "unit tests under qemu-aarch64-static: exit $rc in $((SECONDS - t0)) s"
exit "$rc"
