// An ELF file opened read-only with libelf (RAII), and the section walk both
// readers of libjvm.so use.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <string>

namespace jmt {

class ElfFile {
public:
    // Opens path; throws jmt::Error naming the file when it cannot be read as ELF.
    explicit ElfFile(const std::string &path);
    ~ElfFile();
    ElfFile(const ElfFile &) = delete;
    ElfFile &operator=(const ElfFile &) = delete;

    Elf *elf() const { return elf_; }

private:
    int fd_ = -1;
    Elf *elf_ = nullptr;
};

}  // namespace jmt
