#include "jvm/libjvm_file.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <tuple>

#include "jvm/elf_file.h"
#include "jvm/hotspot_symbols.h"

namespace jmt {

namespace {

bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

// Adds sym to info when hotspot::kLibjvmSymbols names it, or when it is a continuation function.
void keep_symbol(const GElf_Sym &sym, const char *name, uint32_t table, LibjvmInfo &info, std::vector<uint64_t> &freeze,
                 std::vector<uint64_t> &thaw)
{
    for (size_t k = 0; hotspot::kLibjvmSymbols[k]; k++)
        if (strcmp(name, hotspot::kLibjvmSymbols[k]) == 0)
            info.symbols.emplace(name, sym.st_value);
    if (table != SHT_SYMTAB || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
        return;
    if (starts_with(name, hotspot::kFreezePrefix) ||
        (starts_with(name, hotspot::kFreezePreemptPrefix) && ends_with(name, hotspot::kFreezePreemptSuffix)))
        freeze.push_back(sym.st_value);
    else if (starts_with(name, hotspot::kThawPrefix))
        thaw.push_back(sym.st_value);
}

LibjvmInfo read_libjvm(const std::string &path, const std::string &provider)
{
    const ElfFile file(path);
    Elf *elf = file.elf();
    LibjvmInfo info;
    info.file = file.id();
    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf, &ehdr))
        info.machine = ehdr.e_machine;
    const std::vector<GElf_Phdr> loads = elf_loads(elf);
    if (!loads.empty())
        info.first_load_vaddr = loads.front().p_vaddr;
    info.notes = read_usdt_notes(elf, provider);
    std::vector<uint64_t> freeze, thaw;
    for (uint32_t table : {SHT_SYMTAB, SHT_DYNSYM})
        for_each_symbol(elf, {table}, [&](const GElf_Sym &sym, const char *name) {
            keep_symbol(sym, name, table, info, freeze, thaw);
        });
    for (auto [list, into] : {std::pair{&freeze, &info.continuation.freeze}, std::pair{&thaw, &info.continuation.thaw}})
        for (uint64_t vaddr : *list)
            if (const std::optional<uint64_t> off = vaddr_file_offset(loads, vaddr))
                into->push_back({vaddr, *off});
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
