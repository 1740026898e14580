#include "jvm/hotspot_flags.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <functional>

#include "jvm/hotspot_symbols.h"
#include "util/error.h"
#include "util/procfs.h"

namespace jmt {

namespace {

// Bounds on what a table may hold: a corrupt pointer must not loop for long.
constexpr uint64_t kMaxVmStructEntries = 20000;
constexpr uint64_t kMaxFlags = 10000;
constexpr size_t kMaxNameBytes = 128;

std::optional<uint64_t> u64_at(const ReadMemory &read, uint64_t addr)
{
    const std::string b = read(addr, sizeof(uint64_t));
    if (b.size() != sizeof(uint64_t))
        return std::nullopt;
    uint64_t v;
    memcpy(&v, b.data(), sizeof(v));
    return v;
}

std::string string_at(const ReadMemory &read, uint64_t addr, size_t max)
{
    constexpr uint64_t kPage = 4096;
    std::string out;
    while (addr && out.size() < max) {
        // Never across a page: the string may end just before an unmapped one.
        const uint64_t at = addr + out.size();
        const std::string chunk = read(at, static_cast<size_t>(std::min<uint64_t>(16, kPage - at % kPage)));
        if (chunk.empty())
            return {};
        const size_t nul = chunk.find('\0');
        out += chunk.substr(0, nul);
        if (nul != std::string::npos)
            return out.substr(0, max);
    }
    return {};
}

// The value of each exported layout variable (a uint64_t in the JVM's memory).
std::optional<std::map<std::string, uint64_t>>
layout(const ReadMemory &read, const std::map<std::string, uint64_t> &exported, const std::vector<std::string> &names)
{
    std::map<std::string, uint64_t> out;
    for (const std::string &n : names) {
        const auto at = exported.find(n);
        if (at == exported.end())
            return std::nullopt;
        const std::optional<uint64_t> v = u64_at(read, at->second);
        if (!v)
            return std::nullopt;
        out[n] = *v;
    }
    return out;
}

bool is_flag_type(const std::string &type) { return type == hotspot::kFlagType || type == hotspot::kFlagTypeJdk8; }

// One entry of the VMStructs table: its type and field, and the field's
// offset (non-static) or address (static).
struct VmStructEntry {
    std::string type, field;
    bool is_static = false;
    uint64_t offset = 0, address = 0;
};

// The entries of the exported VMStructs table whose type keep accepts (only
// their field names are read), in order; none when the table is unreadable.
std::vector<VmStructEntry> vmstructs_entries(const ReadMemory &read, const std::map<std::string, uint64_t> &exported,
                                             const std::function<bool(const std::string &)> &keep)
{
    std::vector<VmStructEntry> out;
    using namespace hotspot;
    const auto s =
        layout(read, exported,
               {kVMStructs, kVMStructEntryArrayStride, kVMStructEntryTypeNameOffset, kVMStructEntryFieldNameOffset,
                kVMStructEntryIsStaticOffset, kVMStructEntryOffsetOffset, kVMStructEntryAddressOffset});
    if (!s || !s->at(kVMStructs) || !s->at(kVMStructEntryArrayStride))
        return out;
    for (uint64_t i = 0; i < kMaxVmStructEntries; i++) {
        const uint64_t e = s->at(kVMStructs) + i * s->at(kVMStructEntryArrayStride);
        const std::optional<uint64_t> field_ptr = u64_at(read, e + s->at(kVMStructEntryFieldNameOffset));
        if (!field_ptr || !*field_ptr)
            break;
        const std::optional<uint64_t> type_ptr = u64_at(read, e + s->at(kVMStructEntryTypeNameOffset));
        VmStructEntry entry;
        entry.type = type_ptr ? string_at(read, *type_ptr, kMaxNameBytes) : "";
        if (!keep(entry.type))
            continue;
        entry.field = string_at(read, *field_ptr, kMaxNameBytes);
        entry.is_static =
            read(e + s->at(kVMStructEntryIsStaticOffset), sizeof(int32_t)) != std::string(sizeof(int32_t), '\0');
        entry.offset = u64_at(read, e + s->at(kVMStructEntryOffsetOffset)).value_or(0);
        entry.address = u64_at(read, e + s->at(kVMStructEntryAddressOffset)).value_or(0);
        out.push_back(std::move(entry));
    }
    return out;
}

}  // namespace

std::map<std::string, uint64_t> flags_from_vmstructs(const ReadMemory &read,
                                                     const std::map<std::string, uint64_t> &exported,
                                                     const std::vector<std::string> &names)
{
    using namespace hotspot;
    std::map<std::string, uint64_t> found;
    const auto t =
        layout(read, exported, {kVMTypes, kVMTypeEntryArrayStride, kVMTypeEntryTypeNameOffset, kVMTypeEntrySizeOffset});
    if (!t || !t->at(kVMTypeEntryArrayStride))
        return found;
    // The flag type's fields: the table and its length (static), name and address (offsets).
    std::optional<uint64_t> table_var, count_var, name_off, addr_off, size;
    for (const VmStructEntry &e : vmstructs_entries(read, exported, is_flag_type)) {
        if (e.field == kFlagTableField)
            table_var = e.address;
        else if (e.field == kFlagCountField)
            count_var = e.address;
        else if (e.field == kFlagNameField)
            name_off = e.offset;
        else if (e.field == kFlagAddressField)
            addr_off = e.offset;
    }
    for (uint64_t i = 0; i < kMaxVmStructEntries && !size; i++) {
        const uint64_t e = t->at(kVMTypes) + i * t->at(kVMTypeEntryArrayStride);
        const std::optional<uint64_t> type_ptr = u64_at(read, e + t->at(kVMTypeEntryTypeNameOffset));
        if (!type_ptr || !*type_ptr)
            break;
        if (is_flag_type(string_at(read, *type_ptr, kMaxNameBytes)))
            size = u64_at(read, e + t->at(kVMTypeEntrySizeOffset));
    }
    if (!table_var || !count_var || !name_off || !addr_off || !size || !*size)
        return found;
    const std::optional<uint64_t> table = u64_at(read, *table_var);
    const std::optional<uint64_t> count = u64_at(read, *count_var);
    if (!table || !count)
        return found;
    for (uint64_t i = 0; i < *count && i < kMaxFlags && found.size() < names.size(); i++) {
        const uint64_t f = *table + i * *size;
        const std::optional<uint64_t> name_ptr = u64_at(read, f + *name_off);
        if (!name_ptr || !*name_ptr)
            continue;
        const std::string name = string_at(read, *name_ptr, kMaxNameBytes);
        for (const std::string &wanted : names)
            if (name == wanted)
                if (const std::optional<uint64_t> addr = u64_at(read, f + *addr_off))
                    found[name] = *addr;
    }
    return found;
}

std::map<std::string, uint64_t> fields_from_vmstructs(const ReadMemory &read,
                                                      const std::map<std::string, uint64_t> &exported,
                                                      const std::vector<std::string> &names)
{
    std::map<std::string, uint64_t> found;
    const auto wanted_type = [&names](const std::string &type) {
        return std::any_of(names.begin(), names.end(),
                           [&type](const std::string &n) { return n.rfind(type + "::", 0) == 0; });
    };
    for (const VmStructEntry &e : vmstructs_entries(read, exported, wanted_type)) {
        const std::string name = e.type + "::" + e.field;
        if (std::find(names.begin(), names.end(), name) != names.end())
            found[name] = e.is_static ? e.address : e.offset;
    }
    return found;
}

JvmMemory::JvmMemory(int pid, uint64_t bias, std::map<std::string, uint64_t> symbols)
    : pid_(pid), bias_(bias), symbols_(std::move(symbols))
{}

std::optional<uint64_t> JvmMemory::symbol(const std::string &name) const
{
    const auto it = symbols_.find(name);
    if (it == symbols_.end())
        return std::nullopt;
    return bias_ + it->second;
}

std::string JvmMemory::read(uint64_t addr, size_t len) const { return read_target_memory(pid_, addr, len); }

std::optional<uint8_t> JvmMemory::read_u8(uint64_t addr) const
{
    const std::string b = read(addr, 1);
    if (b.size() != 1)
        return std::nullopt;
    return static_cast<uint8_t>(b[0]);
}

std::optional<uint64_t> JvmMemory::read_u64(uint64_t addr) const
{
    return u64_at([this](uint64_t a, size_t n) { return read(a, n); }, addr);
}

std::string JvmMemory::read_string(uint64_t addr, size_t max) const
{
    return string_at([this](uint64_t a, size_t n) { return read(a, n); }, addr, max);
}

std::map<std::string, uint64_t> JvmMemory::exported() const
{
    std::map<std::string, uint64_t> out;
    for (const auto &[sym, value] : symbols_)
        if (sym.rfind(hotspot::kVMExportedPrefix, 0) == 0)
            out[sym] = bias_ + value;
    return out;
}

std::map<std::string, uint64_t> JvmMemory::fields(const std::vector<std::string> &names) const
{
    return fields_from_vmstructs([this](uint64_t a, size_t n) { return read(a, n); }, exported(), names);
}

std::optional<uint64_t> JvmMemory::flag(const std::string &name) const
{
    if (const std::optional<uint64_t> at = symbol(name))
        return at;
    if (!vmstructs_flags_)
        vmstructs_flags_ =
            flags_from_vmstructs([this](uint64_t a, size_t n) { return read(a, n); }, exported(), hotspot::kFlags);
    const auto it = vmstructs_flags_->find(name);
    if (it == vmstructs_flags_->end())
        return std::nullopt;
    return it->second;
}

}  // namespace jmt
