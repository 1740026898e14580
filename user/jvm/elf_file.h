// An ELF file opened read-only with libelf (RAII), the one walk of its
// loadable segments, and where a mapped file's addresses lie in a process.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "util/mapped_path.h"

namespace jmt {

class ElfFile {
public:
    // Opens path; throws jmt::Error naming the file when it cannot be read as ELF.
    explicit ElfFile(const std::string &path);
    ~ElfFile();
    ElfFile(const ElfFile &) = delete;
    ElfFile &operator=(const ElfFile &) = delete;

    Elf *elf() const { return elf_; }
    // The identity of the file read (fstat of the descriptor), whatever its path names now.
    FileId id() const { return id_; }

private:
    int fd_ = -1;
    Elf *elf_ = nullptr;
    FileId id_;
};

// The PT_LOAD program headers of elf, in file order.
std::vector<GElf_Phdr> elf_loads(Elf *elf);

// Calls visit with each defined, named symbol of elf's tables of the types
// given (SHT_SYMTAB, SHT_DYNSYM), table by table in section order.
void for_each_symbol(Elf *elf, std::initializer_list<uint32_t> table_types,
                     const std::function<void(const GElf_Sym &sym, const char *name)> &visit);

// Where a file's vaddr 0 lies in a process that maps the file's offset 0 at
// mapping_start, its first PT_LOAD being at first_load_vaddr: a vaddr plus
// this is the address in that process.
uint64_t load_bias(uint64_t mapping_start, uint64_t first_load_vaddr);

// The file offset of vaddr, inside the file bytes of one of loads; nullopt
// when no segment holds it (a .bss address).
std::optional<uint64_t> vaddr_file_offset(const std::vector<GElf_Phdr> &loads, uint64_t vaddr);

}  // namespace jmt
