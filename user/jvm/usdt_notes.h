// The stapsdt (USDT) notes of an ELF file, read with libelf: where each probe
// is, its semaphore, its argument spec.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// The notes of elf whose provider is provider, in file order.
std::vector<UsdtNote> read_usdt_notes(Elf *elf, const std::string &provider);

}  // namespace jmt
