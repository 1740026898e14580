// The stapsdt (USDT) notes of an ELF file, read with libelf: where each probe
// is, its semaphore, its argument spec; and the libjvm symbols the runtime switch reads.
#pragma once

#include <array>
#include <map>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jvm/usdt_args.h"
#include "util/mapped_path.h"

namespace jmt {

// A stapsdt note of an ELF file.
struct UsdtNote {
    std::string provider;
    std::string name;
    uint64_t location = 0;  // vaddr of the probe's instruction (moved as .stapsdt.base was)
    uint64_t base = 0;      // the .stapsdt.base vaddr the note was written for
    uint64_t semaphore = 0;
    std::optional<uint64_t> file_offset;  // of location: where a plain uprobe goes
    std::string args;                     // "-8@%rax 8@%rdx -4@%ecx ..." (x86-64), "-8@x0 8@x1 -4@x2 ..." (arm64)
};

struct LibjvmInfo {
    std::vector<UsdtNote> notes;    // of the requested provider only
    uint16_t machine = 0;           // e_machine: kMachineX86_64, kMachineAarch64, ...
    uint64_t first_load_vaddr = 0;  // p_vaddr of the first PT_LOAD
    FileId file;                    // the file read (its descriptor's identity)
    // st_value of the symbols of kLibjvmSymbols that the file has (.symtab,
    // which a stripped libjvm lacks, or .dynsym, which it keeps).
    std::map<std::string, uint64_t> symbols;
};

// The libjvm symbols the runtime switch and the virtual-thread hooks read:
// flags (one byte each), HotSpot statics, and the exported VMStructs tables
// (jvm/hotspot_flags.h).
extern const char *const kLibjvmSymbols[];

// Reads the stapsdt notes of provider and the symbols of kLibjvmSymbols of a libjvm.so, or
// of any ELF file with probes (throws jmt::Error); once per file version (device, inode, size,
// modification time) and provider, later calls copy that read.
LibjvmInfo inspect_libjvm(const std::string &path, const std::string &provider = "hotspot");

// True when info has hotspot method__entry and method__return notes; regs gets
// their argument registers (for info.machine) when both share one plain-register layout.
// Every site of both probes must share that layout: a plain uprobe at each
// site then reads them as the USDT spec would.
bool has_method_probes(const LibjvmInfo &info, std::optional<std::array<uint8_t, 7>> *regs);

// The registers of class__unloaded's name and its length when every site passes
// them in plain registers (the name whole 8 bytes, the length at least 2), or nullopt.
std::optional<std::array<uint8_t, 2>> class_unloaded_registers(const LibjvmInfo &info);

}  // namespace jmt
