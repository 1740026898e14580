#include "jvm/usdt_notes.h"

#include <cstring>

#include "jvm/elf_file.h"

namespace jmt {

namespace {

constexpr uint32_t kNtStapsdt = 3;

uint64_t read_word(const char *p, bool is64)
{
    if (is64) {
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

void parse_stapsdt(Elf_Scn *scn, bool is64, const std::string &provider, std::vector<UsdtNote> &out)
{
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data)
        return;
    size_t offset = 0, name_off, desc_off;
    GElf_Nhdr nhdr;
    const size_t word = is64 ? 8 : 4;
    while ((offset = gelf_getnote(data, offset, &nhdr, &name_off, &desc_off)) > 0) {
        if (nhdr.n_type != kNtStapsdt || nhdr.n_descsz < 3 * word)
            continue;
        const char *desc = static_cast<const char *>(data->d_buf) + desc_off;
        const char *end = desc + nhdr.n_descsz;
        UsdtNote note;
        note.location = read_word(desc, is64);
        note.base = read_word(desc + word, is64);
        note.semaphore = read_word(desc + 2 * word, is64);
        const char *s = desc + 3 * word;
        std::string fields[3];
        for (auto &f : fields) {
            const char *z = static_cast<const char *>(memchr(s, '\0', end - s));
            if (!z)
                break;
            f.assign(s, z);
            s = z + 1;
        }
        note.provider = fields[0];
        note.name = fields[1];
        note.args = fields[2];
        if (note.provider == provider)
            out.push_back(std::move(note));
    }
}

}  // namespace

std::vector<UsdtNote> read_usdt_notes(Elf *elf, const std::string &provider)
{
    const bool is64 = gelf_getclass(elf) == ELFCLASS64;
    std::vector<UsdtNote> notes;
    size_t shstrndx = 0;
    elf_getshdrstrndx(elf, &shstrndx);
    std::optional<uint64_t> stapsdt_base;
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (sh.sh_type == SHT_NOTE && name && strcmp(name, ".note.stapsdt") == 0)
            parse_stapsdt(scn, is64, provider, notes);
        if (name && strcmp(name, ".stapsdt.base") == 0)
            stapsdt_base = sh.sh_addr;
    }
    // A prelinked file moved .stapsdt.base, and its notes' locations with it (as libbpf reads them).
    const std::vector<GElf_Phdr> loads = elf_loads(elf);
    for (UsdtNote &note : notes) {
        if (stapsdt_base && note.base)
            note.location += *stapsdt_base - note.base;
        note.file_offset = vaddr_file_offset(loads, note.location);
    }
    return notes;
}

}  // namespace jmt
