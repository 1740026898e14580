// The argument spec of a stapsdt note ("-8@%rax 8@-16(%rbp) -4@$5" on x86-64,
// "-8@x0 -4@[x1, 16] 8@[sp] 4@-1" on arm64), decoded for the machine the note's
// ELF file was built for: each argument's size and where its value is.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jmt {

// ELF e_machine values of the machines jmethodtime decodes.
constexpr uint16_t kMachineX86_64 = 62;    // EM_X86_64
constexpr uint16_t kMachineAarch64 = 183;  // EM_AARCH64

// The machine this jmethodtime runs on (and its BPF programs were built for).
uint16_t host_machine();

// "x86-64", "aarch64", or "ELF machine N".
std::string machine_name(uint16_t machine);

struct UsdtArg {
    enum class Kind { Constant, Register, Memory };
    Kind kind = Kind::Constant;
    int size = 8;            // bytes: 1, 2, 4 or 8
    bool is_signed = false;  // the spec's size was negative
    std::string reg;         // Register, Memory: the register's name as written ("rax", "x1", "sp")
    int64_t value = 0;       // Constant: the value; Memory: the byte offset added to reg
};

// The arguments of spec, or nullopt when one of them is not of a form machine's
// notes use (a note of another machine, a register the machine lacks, a bad size).
std::optional<std::vector<UsdtArg>> parse_usdt_args(const std::string &spec, uint16_t machine);

// reg's number in the BPF programs' numbering for machine (enum jmt_reg on
// x86-64, JMT_REG_ARM64_X(n) and JMT_REG_ARM64_SP on arm64), or nullopt for a
// register outside it (x86's xmm0, arm64's v0).
std::optional<uint8_t> register_number(const std::string &reg, uint16_t machine);

// The registers of spec's first min_bytes.size() arguments when each is a plain
// register (of machine's numbering) of at least min_bytes[i] bytes, or nullopt;
// every_argument: the spec has no other argument.
std::optional<std::vector<uint8_t>> plain_registers(const std::string &spec, uint16_t machine,
                                                    const std::vector<int> &min_bytes, bool every_argument);

// The registers of HotSpot's 7 method probe arguments when every one is a plain
// register (pointers whole 8-byte registers, lengths at least 2 bytes), or
// nullopt: the programs then read them through libbpf's generic reader.
std::optional<std::array<uint8_t, 7>> register_args(const std::string &spec, uint16_t machine = host_machine());

}  // namespace jmt
