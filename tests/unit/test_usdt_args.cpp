// USDT argument specs of both machines, decoded on either: an x86-64 build reads
// arm64 notes the same as an arm64 build does (tests/CMakeLists.txt runs these
// again under qemu-aarch64 as arm64.unit_tests).
#include <gtest/gtest.h>

#include "cost/calibrate.h"
#include "jmethodtime.h"
#include "jvm/usdt_args.h"
#include "jvm/libjvm_file.h"

namespace {

using jmt::kMachineAarch64;
using jmt::kMachineX86_64;
using jmt::UsdtArg;

// HotSpot's method probes in Debian's arm64 OpenJDK 17 (readelf -n libjvm.so of
// openjdk-17-jre-headless 17.0.21 arm64): every argument an x register.
constexpr char kHotspotArm64[] = "-8@x0 8@x1 -4@x2 8@x3 -4@x4 8@x5 -4@x6";
// The same probes in Debian's amd64 OpenJDK 17.
constexpr char kHotspotX86[] = "-8@%rax 8@%rdx -4@%ecx 8@%rsi -4@%edi 8@%r8 -4@%r9d";

TEST(UsdtArgs, HotspotArm64LayoutIsXRegistersZeroToSix)
{
    const auto regs = jmt::register_args(kHotspotArm64, kMachineAarch64);
    ASSERT_TRUE(regs.has_value());
    const std::array<uint8_t, 7> want = {JMT_REG_ARM64_X(0), JMT_REG_ARM64_X(1), JMT_REG_ARM64_X(2), JMT_REG_ARM64_X(3),
                                         JMT_REG_ARM64_X(4), JMT_REG_ARM64_X(5), JMT_REG_ARM64_X(6)};
    EXPECT_EQ(*regs, want);
    EXPECT_EQ((*regs)[0], 1);
    EXPECT_EQ((*regs)[6], 7);
}

TEST(UsdtArgs, EachMachineReadsOnlyItsOwnNotes)
{
    EXPECT_FALSE(jmt::register_args(kHotspotArm64, kMachineX86_64).has_value());
    EXPECT_FALSE(jmt::register_args(kHotspotX86, kMachineAarch64).has_value());
    EXPECT_TRUE(jmt::register_args(kHotspotX86, kMachineX86_64).has_value());
    EXPECT_FALSE(jmt::parse_usdt_args(kHotspotArm64, 40 /* EM_ARM */).has_value());
}

TEST(UsdtArgs, Arm64RegisterNumbers)
{
    EXPECT_EQ(jmt::register_number("x0", kMachineAarch64), std::optional<uint8_t>(1));
    EXPECT_EQ(jmt::register_number("x19", kMachineAarch64), std::optional<uint8_t>(20));
    EXPECT_EQ(jmt::register_number("x30", kMachineAarch64), std::optional<uint8_t>(31));
    EXPECT_EQ(jmt::register_number("w7", kMachineAarch64), jmt::register_number("x7", kMachineAarch64));
    EXPECT_EQ(jmt::register_number("sp", kMachineAarch64), std::optional<uint8_t>(JMT_REG_ARM64_SP));
    EXPECT_EQ(JMT_REG_ARM64_SP, 32);
    for (const char *bad : {"x31", "x32", "w31", "x01", "x", "v0", "q1", "xzr", "lr", "pc", "rax", "%x0", "x1a"})
        EXPECT_FALSE(jmt::register_number(bad, kMachineAarch64).has_value()) << bad;
}

TEST(UsdtArgs, Arm64MemoryAndConstantOperands)
{
    // Forms from the same libjvm's other probes, and the ones GCC writes for stack slots.
    const auto args = jmt::parse_usdt_args("-4@[x1,16] 8@[sp, 8] 8@[x19, 152] 1@[x29] -4@0 4@-1 2@w3", kMachineAarch64);
    ASSERT_TRUE(args.has_value());
    ASSERT_EQ(args->size(), 7u);
    const auto &a = *args;
    EXPECT_EQ(a[0].kind, UsdtArg::Kind::Memory);
    EXPECT_EQ(a[0].reg, "x1");
    EXPECT_EQ(a[0].value, 16);
    EXPECT_EQ(a[0].size, 4);
    EXPECT_TRUE(a[0].is_signed);
    EXPECT_EQ(a[1].kind, UsdtArg::Kind::Memory);
    EXPECT_EQ(a[1].reg, "sp");
    EXPECT_EQ(a[1].value, 8);
    EXPECT_EQ(a[1].size, 8);
    EXPECT_FALSE(a[1].is_signed);
    EXPECT_EQ(a[2].reg, "x19");
    EXPECT_EQ(a[2].value, 152);
    EXPECT_EQ(a[3].kind, UsdtArg::Kind::Memory);
    EXPECT_EQ(a[3].reg, "x29");
    EXPECT_EQ(a[3].value, 0);
    EXPECT_EQ(a[3].size, 1);
    EXPECT_EQ(a[4].kind, UsdtArg::Kind::Constant);
    EXPECT_EQ(a[4].value, 0);
    EXPECT_EQ(a[5].kind, UsdtArg::Kind::Constant);
    EXPECT_EQ(a[5].value, -1);
    EXPECT_EQ(a[5].size, 4);
    EXPECT_EQ(a[6].kind, UsdtArg::Kind::Register);
    EXPECT_EQ(a[6].reg, "w3");
    EXPECT_EQ(a[6].size, 2);
}

TEST(UsdtArgs, Arm64NegativeOffsetsAndSpacing)
{
    const auto args = jmt::parse_usdt_args("  8@[x29, -24]\t-8@[ sp ,  0x10 ]  ", kMachineAarch64);
    ASSERT_TRUE(args.has_value());
    ASSERT_EQ(args->size(), 2u);
    EXPECT_EQ((*args)[0].value, -24);
    EXPECT_EQ((*args)[1].reg, "sp");
    EXPECT_EQ((*args)[1].value, 16);
}

TEST(UsdtArgs, Arm64MemoryOperandsFallBackToTheGenericReader)
{
    // A pointer in a stack slot: libbpf reads it (fast_args off), not the register fast path.
    EXPECT_FALSE(jmt::register_args("-8@x0 8@[sp, 8] -4@x2 8@x3 -4@x4 8@x5 -4@x6", kMachineAarch64).has_value());
    // A length spilled to memory.
    EXPECT_FALSE(jmt::register_args("-8@x0 8@x1 -4@[x1,16] 8@x3 -4@x4 8@x5 -4@x6", kMachineAarch64).has_value());
    // A constant length.
    EXPECT_FALSE(jmt::register_args("-8@x0 8@x1 -4@4 8@x3 -4@x4 8@x5 -4@x6", kMachineAarch64).has_value());
    // A pointer in a 32-bit register, a 1-byte length.
    EXPECT_FALSE(jmt::register_args("-8@x0 4@w1 -4@x2 8@x3 -4@x4 8@x5 -4@x6", kMachineAarch64).has_value());
    EXPECT_FALSE(jmt::register_args("-8@x0 8@x1 1@x2 8@x3 -4@x4 8@x5 -4@x6", kMachineAarch64).has_value());
    // Six or eight arguments.
    EXPECT_FALSE(jmt::register_args("-8@x0 8@x1 -4@x2 8@x3 -4@x4 8@x5", kMachineAarch64).has_value());
    EXPECT_FALSE(jmt::register_args("-8@x0 8@x1 -4@x2 8@x3 -4@x4 8@x5 -4@x6 8@x7", kMachineAarch64).has_value());
    // Lengths in w registers and sp as an argument are plain registers.
    const auto w = jmt::register_args("-8@sp 8@x1 -4@w2 8@x3 -2@w4 8@x5 -4@w30", kMachineAarch64);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ((*w)[0], JMT_REG_ARM64_SP);
    EXPECT_EQ((*w)[2], JMT_REG_ARM64_X(2));
    EXPECT_EQ((*w)[6], JMT_REG_ARM64_X(30));
}

TEST(UsdtArgs, MalformedSpecsAreRefused)
{
    for (const char *bad : {"8x0", "@x0", "3@x0", "16@x0", "8@", "8@[x0", "8@[x0, 8", "8@[x0, a]", "8@[v0, 8]",
                            "8@[x0,, 8]", "8@x0]", "8@%rax"})
        EXPECT_FALSE(jmt::parse_usdt_args(bad, kMachineAarch64).has_value()) << bad;
    for (const char *bad : {"8@rax", "8@%", "8@$", "8@$x", "8@16(%xmm0)", "8@16(rbp)", "8@[x0, 8]"})
        EXPECT_FALSE(jmt::parse_usdt_args(bad, kMachineX86_64).has_value()) << bad;
    EXPECT_EQ(jmt::parse_usdt_args("", kMachineAarch64)->size(), 0u);
}

TEST(UsdtArgs, X86OperandsStillDecode)
{
    const auto args = jmt::parse_usdt_args("-4@-20(%rbp) 8@(%rdi) -8@$5 8@16+8(%rsp)", kMachineX86_64);
    EXPECT_FALSE(args.has_value());  // "16+8" is no integer
    const auto ok = jmt::parse_usdt_args("-4@-20(%rbp) 8@(%rdi) -8@$5 1@%r9d", kMachineX86_64);
    ASSERT_TRUE(ok.has_value());
    EXPECT_EQ((*ok)[0].kind, UsdtArg::Kind::Memory);
    EXPECT_EQ((*ok)[0].reg, "rbp");
    EXPECT_EQ((*ok)[0].value, -20);
    EXPECT_EQ((*ok)[1].value, 0);
    EXPECT_EQ((*ok)[2].kind, UsdtArg::Kind::Constant);
    EXPECT_EQ((*ok)[2].value, 5);
    EXPECT_TRUE((*ok)[2].is_signed);
    EXPECT_EQ((*ok)[3].kind, UsdtArg::Kind::Register);
}

TEST(UsdtArgs, MachineNames)
{
    EXPECT_EQ(jmt::machine_name(kMachineX86_64), "x86-64");
    EXPECT_EQ(jmt::machine_name(kMachineAarch64), "aarch64");
    EXPECT_EQ(jmt::machine_name(40), "ELF machine 40");
#if defined(__aarch64__)
    EXPECT_EQ(jmt::host_machine(), kMachineAarch64);
#else
    EXPECT_EQ(jmt::host_machine(), kMachineX86_64);
#endif
}

// The tool's own calibration probes, compiled for the machine this test runs on, are
// in its notes with that machine's e_machine and decode to plain registers.
TEST(UsdtArgs, OwnCalibrationProbesDecodeOnThisMachine)
{
    const jmt::LibjvmInfo info = jmt::inspect_libjvm(jmt::self_probe::kBinary, jmt::self_probe::kProvider);
    EXPECT_EQ(info.machine, jmt::host_machine());
    ASSERT_FALSE(info.notes.empty()) << "no " << jmt::self_probe::kProvider << " notes in the test binary";
    for (const jmt::UsdtNote &n : info.notes)
        EXPECT_TRUE(jmt::register_args(n.args, info.machine).has_value()) << n.name << ": " << n.args;
    EXPECT_NO_THROW(jmt::self_probe::arg_regs());
}

}  // namespace
