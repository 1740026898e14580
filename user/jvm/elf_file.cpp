#include "jvm/elf_file.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace jmt {

ElfFile::ElfFile(const std::string &path)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        throw Error("libelf initialisation failed: " + std::string(elf_errmsg(-1)));
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
        const int err = errno;
        throw Error("cannot open " + path + ": " + strerror(err), err);
    }
    struct stat st = {};
    if (fstat(fd_, &st) == 0)
        id_ = FileId{major(st.st_dev), minor(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
    if (!elf_ || elf_kind(elf_) != ELF_K_ELF) {
        const std::string why = elf_errmsg(-1);
        if (elf_)
            elf_end(elf_);
        close(fd_);
        throw Error(path + " is not an ELF file: " + why);
    }
}

ElfFile::~ElfFile()
{
    elf_end(elf_);
    close(fd_);
}

std::vector<GElf_Phdr> elf_loads(Elf *elf)
{
    std::vector<GElf_Phdr> loads;
    size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) != 0)
        return loads;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
            loads.push_back(ph);
    }
    return loads;
}

void for_each_symbol(Elf *elf, std::initializer_list<uint32_t> table_types,
                     const std::function<void(const GElf_Sym &sym, const char *name)> &visit)
{
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) ||
            std::find(table_types.begin(), table_types.end(), sh.sh_type) == table_types.end())
            continue;
        Elf_Data *data = elf_getdata(scn, nullptr);
        const size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; data && i < count; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF)
                continue;
            const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (name && *name)
                visit(sym, name);
        }
    }
}

uint64_t load_bias(uint64_t mapping_start, uint64_t first_load_vaddr)
{
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    return mapping_start - (first_load_vaddr & ~(page - 1));
}

std::optional<uint64_t> vaddr_file_offset(const std::vector<GElf_Phdr> &loads, uint64_t vaddr)
{
    for (const GElf_Phdr &ph : loads)
        if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
            return vaddr - ph.p_vaddr + ph.p_offset;
    return std::nullopt;
}

}  // namespace jmt
