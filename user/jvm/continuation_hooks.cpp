#include "jvm/continuation_hooks.h"

#include <cstring>
#include <optional>
#include <utility>

#include "jvm/elf_file.h"
#include "util/error.h"

namespace jmt {

namespace {

constexpr const char *kFreezePrefix = "_Z6freezeI6Config";                  // freeze<Config<...>>(JavaThread*, long*)
constexpr const char *kFreezePreempt = "14freeze_preemptEP10JavaThreadPl";  // Config<...>::freeze_preempt
constexpr const char *kThawPrefix = "_Z4thawI6Config";                      // thaw<Config<...>>(JavaThread*, int)

bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

struct LibjvmScan {
    std::vector<GElf_Phdr> loads;
    std::vector<uint64_t> freeze, thaw;
};

void scan_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr &sh, LibjvmScan &s)
{
    Elf_Data *data = elf_getdata(scn, nullptr);
    const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; data && i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
            continue;
        const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name)
            continue;
        if (GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
            if (starts_with(name, kFreezePrefix) ||
                (starts_with(name, "_ZN6Config") && ends_with(name, kFreezePreempt)))
                s.freeze.push_back(sym.st_value);
            else if (starts_with(name, kThawPrefix))
                s.thaw.push_back(sym.st_value);
        }
    }
}

}  // namespace

ContinuationHooks find_continuation_hooks(const std::string &libjvm)
{
    const ElfFile file(libjvm);
    Elf *elf = file.elf();
    LibjvmScan s;
    s.loads = elf_loads(elf);
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
            scan_symbols(elf, scn, sh, s);
    }
    ContinuationHooks h;
    for (auto [list, into] : {std::pair{&s.freeze, &h.freeze}, std::pair{&s.thaw, &h.thaw}})
        for (uint64_t vaddr : *list)
            if (const std::optional<uint64_t> off = vaddr_file_offset(s.loads, vaddr))
                into->push_back({vaddr, *off});
    return h;
}

}  // namespace jmt
