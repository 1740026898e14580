#include "jvm/usdt_notes.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "jmethodtime.h"
#include "jvm/elf_file.h"
#include "util/error.h"

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

// The symbols of sh's table (.symtab or .dynsym) that kLibjvmSymbols names, into info.
void read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr &sh, LibjvmInfo &info)
{
    Elf_Data *data = elf_getdata(scn, nullptr);
    const size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; data && i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF)
            continue;
        const char *sname = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!sname || !*sname)
            continue;
        for (size_t k = 0; kLibjvmSymbols[k]; k++)
            if (strcmp(sname, kLibjvmSymbols[k]) == 0)
                info.symbols.emplace(sname, sym.st_value);
    }
}

}  // namespace

const char *const kLibjvmSymbols[] = {
    "DTraceMethodProbes",
    "DisableAttachMechanism",
    "EnableDynamicAgentLoading",
    "_ZN11JvmtiExport30_all_dependencies_are_recordedE",
    "_ZN19Abstract_VM_Version12_s_vm_releaseE",
    "gHotSpotVMStructs",
    "gHotSpotVMStructEntryArrayStride",
    "gHotSpotVMStructEntryTypeNameOffset",
    "gHotSpotVMStructEntryFieldNameOffset",
    "gHotSpotVMStructEntryIsStaticOffset",
    "gHotSpotVMStructEntryOffsetOffset",
    "gHotSpotVMStructEntryAddressOffset",
    "gHotSpotVMTypes",
    "gHotSpotVMTypeEntryArrayStride",
    "gHotSpotVMTypeEntryTypeNameOffset",
    "gHotSpotVMTypeEntrySizeOffset",
    "UseZGC",
    "ZGenerational",
    "ZPointerLoadShift",
    "ZPointerLoadGoodMask",
    "_ZN16java_lang_Thread11_tid_offsetE",
    "_ZL12freeze_entry",
    "_ZL20freeze_preempt_entry",
    "_ZL10thaw_entry",
    nullptr,
};

namespace {

LibjvmInfo read_libjvm(const std::string &path, const std::string &provider)
{
    const ElfFile file(path);
    Elf *elf = file.elf();
    const bool is64 = gelf_getclass(elf) == ELFCLASS64;

    LibjvmInfo info;
    info.file = file.id();
    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf, &ehdr))
        info.machine = ehdr.e_machine;
    const std::vector<GElf_Phdr> loads = elf_loads(elf);
    if (!loads.empty())
        info.first_load_vaddr = loads.front().p_vaddr;
    size_t shstrndx = 0;
    elf_getshdrstrndx(elf, &shstrndx);
    std::optional<uint64_t> stapsdt_base;
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (sh.sh_type == SHT_NOTE && name && strcmp(name, ".note.stapsdt") == 0)
            parse_stapsdt(scn, is64, provider, info.notes);
        if (name && strcmp(name, ".stapsdt.base") == 0)
            stapsdt_base = sh.sh_addr;
        if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
            read_symbols(elf, scn, sh, info);
    }
    // A prelinked file moved .stapsdt.base, and its notes' locations with it (as libbpf reads them).
    for (UsdtNote &note : info.notes) {
        if (stapsdt_base && note.base)
            note.location += *stapsdt_base - note.base;
        note.file_offset = vaddr_file_offset(loads, note.location);
    }
    return info;
}

// A file as stat(2) saw it: another file at the path (a new inode), or the same one written
// since (its size or its modification time), is another key.
struct FileVersion {
    dev_t dev = 0;
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    std::string provider;
    bool operator<(const FileVersion &o) const
    {
        return std::tie(dev, inode, size, mtime_ns, provider) <
               std::tie(o.dev, o.inode, o.size, o.mtime_ns, o.provider);
    }
};

}  // namespace

LibjvmInfo inspect_libjvm(const std::string &path, const std::string &provider)
{
    static std::mutex mutex;
    static std::map<FileVersion, LibjvmInfo> read;  // every file read, by its version and provider
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
        return read_libjvm(path, provider);  // its error, from the open
    const FileVersion version{st.st_dev, st.st_ino, st.st_size,
                              int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, provider};
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = read.find(version); it != read.end())
            return it->second;
    }
    LibjvmInfo info = read_libjvm(path, provider);
    // Kept only when the file read is the one stat saw (not one put at the path in between).
    if (info.file == FileId{major(st.st_dev), minor(st.st_dev), uint64_t(st.st_ino)}) {
        std::lock_guard<std::mutex> lock(mutex);
        read.emplace(version, info);
    }
    return info;
}

bool has_method_probes(const LibjvmInfo &info, std::optional<std::array<uint8_t, 7>> *regs)
{
    const UsdtNote *entry = nullptr, *ret = nullptr;
    bool one_layout = true;
    for (const auto &n : info.notes) {
        if (n.name != "method__entry" && n.name != "method__return")
            continue;
        const UsdtNote *&first = n.name == "method__entry" ? entry : ret;
        if (!first)
            first = &n;
        one_layout = one_layout && n.args == first->args;
    }
    if (!entry || !ret)
        return false;
    if (regs && one_layout && entry->args == ret->args)
        *regs = register_args(entry->args, info.machine);
    return true;
}

std::optional<std::array<uint8_t, 2>> class_unloaded_registers(const LibjvmInfo &info)
{
    std::optional<std::string> spec;
    for (const auto &n : info.notes) {
        if (n.name != "class__unloaded")
            continue;
        if (spec && *spec != n.args)
            return std::nullopt;
        spec = n.args;
    }
    // The name's address a whole 8-byte register, its length at least 2 bytes.
    const auto regs = spec ? plain_registers(*spec, info.machine, {8, 2}, false) : std::nullopt;
    if (!regs)
        return std::nullopt;
    std::array<uint8_t, 2> out{};
    std::copy(regs->begin(), regs->end(), out.begin());
    return out;
}

}  // namespace jmt
