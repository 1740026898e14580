// A running JVM's libjvm seen from outside: its symbols at their addresses in
// the JVM's memory, bytes read there (/proc/PID/mem), and HotSpot's
// flags by name, from libjvm's .symtab or, where that is stripped, from the
// flag table HotSpot exports for its serviceability agent (VMStructs).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace jmt {

// Reads len bytes at addr of some memory; empty when it cannot.
using ReadMemory = std::function<std::string(uint64_t addr, size_t len)>;

// The addresses of the flags named in names, found through HotSpot's exported
// VMStructs and VMTypes tables (gHotSpotVMStructs, the entry layout variables:
// exported holds their addresses in the JVM's memory). The flag table is the
// static field "flags" of type JVMFlag (JDK 11+) or Flag (JDK 8), numFlags
// entries of the type's size, each with a name (_name) and the flag's address
// (_addr). Flags not found are left out; nothing when a table is missing.
std::map<std::string, uint64_t> flags_from_vmstructs(const ReadMemory &read,
                                                     const std::map<std::string, uint64_t> &exported,
                                                     const std::vector<std::string> &names);

// The VMStructs fields named "Type::field" in names: a non-static field's
// offset in its type, a static one's address in the JVM (as above, from the
// table a running JVM initialised). Fields not found are left out.
std::map<std::string, uint64_t> fields_from_vmstructs(const ReadMemory &read,
                                                      const std::map<std::string, uint64_t> &exported,
                                                      const std::vector<std::string> &names);

class JvmMemory {
public:
    // pid's libjvm loaded at bias (the address of its vaddr 0); symbols: st_value by name.
    JvmMemory(int pid, uint64_t bias, std::map<std::string, uint64_t> symbols);

    int pid() const { return pid_; }
    // The address of libjvm's vaddr 0 in the JVM's memory.
    uint64_t bias() const { return bias_; }
    // The address of a libjvm symbol in the JVM's memory.
    std::optional<uint64_t> symbol(const std::string &name) const;
    // len bytes at addr; empty when they cannot be read.
    std::string read(uint64_t addr, size_t len) const;
    std::optional<uint8_t> read_u8(uint64_t addr) const;
    std::optional<uint64_t> read_u64(uint64_t addr) const;
    // The address of HotSpot flag name (a bool flag is one byte there): .symtab,
    // else VMStructs' flag table (the flags of hotspot::kFlags); nullopt when neither has it.
    std::optional<uint64_t> flag(const std::string &name) const;
    // VMStructs fields by "Type::field": offsets, or addresses of statics (fields_from_vmstructs).
    std::map<std::string, uint64_t> fields(const std::vector<std::string> &names) const;
    // A NUL-terminated string at addr, at most max bytes; empty when unreadable.
    std::string read_string(uint64_t addr, size_t max = 256) const;

private:
    // The exported VMStructs layout variables at their addresses in the JVM's memory.
    std::map<std::string, uint64_t> exported() const;

    int pid_;
    uint64_t bias_;
    std::map<std::string, uint64_t> symbols_;
    mutable std::optional<std::map<std::string, uint64_t>> vmstructs_flags_;  // read once
};

}  // namespace jmt
