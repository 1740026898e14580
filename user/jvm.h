// JVM discovery through /proc and libelf: where libjvm.so is, whether it has
// the hotspot probes, whether the running JVM enabled them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jmt {

// One mapping of libjvm.so found in /proc/PID/maps.
struct LibjvmMapping {
    std::string path;      // as the target sees it (its mount namespace)
    uint64_t start = 0;    // address of the mapping with file offset 0
    bool found = false;
};

// Parses the text of /proc/PID/maps: the libjvm.so mapping with offset 0.
LibjvmMapping find_libjvm(const std::string &maps_text);

// A stapsdt note of an ELF file.
struct UsdtNote {
    std::string provider;
    std::string name;
    uint64_t location = 0;
    uint64_t semaphore = 0;
    std::string args;  // "-8@%rax 8@%rdx -4@%ecx ..."
};

// x86-64 register numbers the BPF program understands (enum jmt_reg), or
// nullopt when an argument is not a plain register ("8@-16(%rbp)", "$5").
std::optional<std::array<uint8_t, 7>> register_args(const std::string &args);

struct LibjvmInfo {
    std::vector<UsdtNote> notes;               // of the requested provider only
    std::optional<uint64_t> flag_vaddr;        // st_value of DTraceMethodProbes in .symtab
    uint64_t first_load_vaddr = 0;             // p_vaddr of the first PT_LOAD
};

// Reads the stapsdt notes of provider and the flag symbol of a libjvm.so, or
// of any ELF file with probes (throws jmt::Error).
LibjvmInfo inspect_libjvm(const std::string &path, const std::string &provider = "hotspot");

// What the preflight found about a pid; throws jmt::Error with the cause and the fix.
struct JvmTarget {
    int pid = 0;
    std::string comm;
    std::string libjvm;       // path usable from here (through /proc/PID/root)
    std::optional<std::array<uint8_t, 7>> arg_regs;  // entry/return share one layout
};
JvmTarget inspect_target(int pid);

// Reads len bytes of the target's memory at addr; empty on failure.
std::string read_target_memory(int pid, uint64_t addr, size_t len);

std::string read_file(const std::string &path);

}  // namespace jmt
