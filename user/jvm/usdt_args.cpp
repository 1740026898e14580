#include "jvm/usdt_args.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "jmethodtime.h"

namespace jmt {

namespace {

// spec split at blanks outside brackets: "8@[sp, 8]" is one argument.
std::vector<std::string> split_args(const std::string &spec)
{
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    for (char c : spec) {
        if (c == '[')
            depth++;
        else if (c == ']')
            depth--;
        if ((c == ' ' || c == '\t') && depth == 0) {
            if (!cur.empty())
                out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty())
        out.push_back(cur);
    return out;
}

std::string strip(const std::string &s)
{
    const size_t b = s.find_first_not_of(" \t");
    const size_t e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// A whole decimal (or 0x hex) integer, sign allowed.
std::optional<int64_t> integer(const std::string &s)
{
    if (s.empty())
        return std::nullopt;
    char *end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 0);
    if (!end || *end)
        return std::nullopt;
    return static_cast<int64_t>(v);
}

// x86-64 operands (AT&T): %reg, $imm, off(%reg), (%reg).
bool parse_x86(const std::string &op, UsdtArg &a)
{
    if (op.size() > 1 && op[0] == '%') {
        a.kind = UsdtArg::Kind::Register;
        a.reg = op.substr(1);
        return register_number(a.reg, kMachineX86_64).has_value() || a.reg == "rip";
    }
    if (op.size() > 1 && op[0] == '$') {
        const auto v = integer(op.substr(1));
        a.kind = UsdtArg::Kind::Constant;
        a.value = v.value_or(0);
        return v.has_value();
    }
    const size_t open = op.find("(%");
    if (open == std::string::npos || op.back() != ')')
        return false;
    const auto off = open == 0 ? std::optional<int64_t>(0) : integer(op.substr(0, open));
    a.kind = UsdtArg::Kind::Memory;
    a.reg = op.substr(open + 2, op.size() - open - 3);
    a.value = off.value_or(0);
    return off.has_value() && (register_number(a.reg, kMachineX86_64).has_value() || a.reg == "rip");
}

// arm64 operands: xN, wN, sp, imm, [reg], [reg, off].
bool parse_arm64(const std::string &op, UsdtArg &a)
{
    if (op.size() > 2 && op.front() == '[' && op.back() == ']') {
        const std::string inner = op.substr(1, op.size() - 2);
        const size_t comma = inner.find(',');
        a.kind = UsdtArg::Kind::Memory;
        a.reg = strip(inner.substr(0, comma));
        std::optional<int64_t> off = 0;
        if (comma != std::string::npos)
            off = integer(strip(inner.substr(comma + 1)));
        a.value = off.value_or(0);
        return off.has_value() && register_number(a.reg, kMachineAarch64).has_value();
    }
    if (const auto v = integer(op)) {
        a.kind = UsdtArg::Kind::Constant;
        a.value = *v;
        return true;
    }
    a.kind = UsdtArg::Kind::Register;
    a.reg = op;
    return register_number(a.reg, kMachineAarch64).has_value();
}

}  // namespace

uint16_t host_machine()
{
#if defined(__x86_64__)
    return kMachineX86_64;
#elif defined(__aarch64__)
    return kMachineAarch64;
#else
#error "jmethodtime is built for x86_64 and aarch64"
#endif
}

std::string machine_name(uint16_t machine)
{
    switch (machine) {
    case kMachineX86_64: return "x86-64";
    case kMachineAarch64: return "aarch64";
    default: return "ELF machine " + std::to_string(machine);
    }
}

std::optional<std::vector<UsdtArg>> parse_usdt_args(const std::string &spec, uint16_t machine)
{
    if (machine != kMachineX86_64 && machine != kMachineAarch64)
        return std::nullopt;
    std::vector<UsdtArg> out;
    for (const std::string &arg : split_args(spec)) {
        const size_t at = arg.find('@');
        if (at == std::string::npos || at == 0 || at + 1 >= arg.size())
            return std::nullopt;
        const auto size = integer(arg.substr(0, at));
        if (!size ||
            (std::llabs(*size) != 1 && std::llabs(*size) != 2 && std::llabs(*size) != 4 && std::llabs(*size) != 8))
            return std::nullopt;
        UsdtArg a;
        a.size = static_cast<int>(std::llabs(*size));
        a.is_signed = *size < 0;
        const std::string op = arg.substr(at + 1);
        if (!(machine == kMachineX86_64 ? parse_x86(op, a) : parse_arm64(op, a)))
            return std::nullopt;
        out.push_back(a);
    }
    return out;
}

std::optional<uint8_t> register_number(const std::string &reg, uint16_t machine)
{
    if (machine == kMachineX86_64) {
        static const std::map<std::string, uint8_t> regs = {
            {"rax", JMT_REG_AX},  {"eax", JMT_REG_AX},   {"rbx", JMT_REG_BX},  {"ebx", JMT_REG_BX},
            {"rcx", JMT_REG_CX},  {"ecx", JMT_REG_CX},   {"rdx", JMT_REG_DX},  {"edx", JMT_REG_DX},
            {"rsi", JMT_REG_SI},  {"esi", JMT_REG_SI},   {"rdi", JMT_REG_DI},  {"edi", JMT_REG_DI},
            {"rbp", JMT_REG_BP},  {"ebp", JMT_REG_BP},   {"rsp", JMT_REG_SP},  {"esp", JMT_REG_SP},
            {"r8", JMT_REG_R8},   {"r8d", JMT_REG_R8},   {"r9", JMT_REG_R9},   {"r9d", JMT_REG_R9},
            {"r10", JMT_REG_R10}, {"r10d", JMT_REG_R10}, {"r11", JMT_REG_R11}, {"r11d", JMT_REG_R11},
            {"r12", JMT_REG_R12}, {"r12d", JMT_REG_R12}, {"r13", JMT_REG_R13}, {"r13d", JMT_REG_R13},
            {"r14", JMT_REG_R14}, {"r14d", JMT_REG_R14}, {"r15", JMT_REG_R15}, {"r15d", JMT_REG_R15},
        };
        const auto it = regs.find(reg);
        if (it == regs.end())
            return std::nullopt;
        return it->second;
    }
    if (machine == kMachineAarch64) {
        if (reg == "sp")
            return static_cast<uint8_t>(JMT_REG_ARM64_SP);
        // xN is the 64-bit register N, wN its low 32 bits (the same pt_regs slot).
        if (reg.size() < 2 || reg.size() > 3 || (reg[0] != 'x' && reg[0] != 'w'))
            return std::nullopt;
        for (size_t i = 1; i < reg.size(); i++)
            if (reg[i] < '0' || reg[i] > '9')
                return std::nullopt;
        if (reg.size() == 3 && reg[1] == '0')
            return std::nullopt;
        const int n = std::atoi(reg.c_str() + 1);
        if (n > 30)
            return std::nullopt;
        return static_cast<uint8_t>(JMT_REG_ARM64_X(n));
    }
    return std::nullopt;
}

std::optional<std::vector<uint8_t>> plain_registers(const std::string &spec, uint16_t machine,
                                                    const std::vector<int> &min_bytes, bool every_argument)
{
    const auto args = parse_usdt_args(spec, machine);
    if (!args || args->size() < min_bytes.size() || (every_argument && args->size() != min_bytes.size()))
        return std::nullopt;
    std::vector<uint8_t> out;
    for (size_t i = 0; i < min_bytes.size(); i++) {
        const UsdtArg &a = (*args)[i];
        const auto reg = register_number(a.reg, machine);
        if (a.kind != UsdtArg::Kind::Register || a.size < min_bytes[i] || !reg)
            return std::nullopt;
        out.push_back(*reg);
    }
    return out;
}

std::optional<std::array<uint8_t, 7>> register_args(const std::string &spec, uint16_t machine)
{
    // Pointers (1, 3, 5) whole 8-byte registers; lengths (2, 4, 6) at least 2 bytes.
    const auto regs = plain_registers(spec, machine, {1, 8, 2, 8, 2, 8, 2}, true);
    if (!regs)
        return std::nullopt;
    std::array<uint8_t, 7> out{};
    std::copy(regs->begin(), regs->end(), out.begin());
    return out;
}

}  // namespace jmt
