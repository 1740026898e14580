#include "jvm/vthread_layout.h"

#include <unistd.h>

#include <cstring>
#include <vector>

#include "jvm/hotspot_flags.h"
#include "jvm/hotspot_symbols.h"

namespace jmt {

namespace {

using namespace hotspot;

constexpr uint32_t kMaxCheckedThreads = 256;  // enough to tell; bounded per poll
constexpr int64_t kMaxHeldMonitors = 1 << 20;

VthreadLayout unsupported(const std::string &why)
{
    VthreadLayout l;
    l.state = VthreadLayout::State::Unsupported;
    l.why = why;
    return l;
}

std::optional<int64_t> read_i64(const JvmMemory &memory, uint64_t addr)
{
    const std::optional<uint64_t> v = memory.read_u64(addr);
    return v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt;
}

// Where the continuation entry of JDK 21 to 23 was placed, checked on every
// JavaThread of the JVM: _cont_entry and _cont_fastpath are null or inside the
// thread's stack, _cont_fastpath_thread_state is 0 or 1 (1 on some thread),
// _held_monitor_count is a count. "" when they agree, else what did not.
std::string check_derived_entry(const JvmMemory &memory, const std::map<std::string, uint64_t> &fields,
                                uint64_t entry_offset)
{
    for (const char *f :
         {kJavaThreadList, kThreadsListLength, kThreadsListThreads, kJavaThreadStackBase, kJavaThreadStackSize})
        if (!fields.count(f))
            return std::string("its VMStructs do not name ") + f + ", to check where _cont_entry lies";
    const std::optional<uint64_t> list = memory.read_u64(fields.at(kJavaThreadList));
    const std::string len = list ? memory.read(*list + fields.at(kThreadsListLength), sizeof(uint32_t)) : "";
    const std::optional<uint64_t> threads =
        list ? memory.read_u64(*list + fields.at(kThreadsListThreads)) : std::nullopt;
    if (!list || !*list || len.size() != sizeof(uint32_t) || !threads)
        return "its thread list could not be read";
    uint32_t n = 0;
    memcpy(&n, len.data(), sizeof(n));
    bool some_fastpath_state = false;
    for (uint32_t i = 0; i < n && i < kMaxCheckedThreads; i++) {
        const std::optional<uint64_t> jt = memory.read_u64(*threads + 8ULL * i);
        if (!jt || !*jt)
            continue;
        const std::optional<uint64_t> base = memory.read_u64(*jt + fields.at(kJavaThreadStackBase));
        const std::optional<uint64_t> size = memory.read_u64(*jt + fields.at(kJavaThreadStackSize));
        const std::optional<uint64_t> entry = memory.read_u64(*jt + entry_offset);
        const std::optional<uint64_t> fastpath = memory.read_u64(*jt + entry_offset + kContFastpathAfterContEntry);
        const std::string state = memory.read(*jt + entry_offset + kFastpathStateAfterContEntry, sizeof(int32_t));
        const std::optional<int64_t> held = read_i64(memory, *jt + entry_offset + kHeldMonitorsAfterContEntry);
        if (!base || !size || !entry || !fastpath || state.size() != sizeof(int32_t) || !held)
            return "a thread of its thread list could not be read";
        auto in_stack = [&](uint64_t p) { return p == 0 || (p < *base && p >= *base - *size); };
        int32_t s = 0;
        memcpy(&s, state.data(), sizeof(s));
        if (!in_stack(*entry) || !in_stack(*fastpath) || (s != 0 && s != 1) || *held < 0 || *held > kMaxHeldMonitors)
            return "its threads do not hold a continuation entry where JDK 21 to 23 keep it (thread " +
                   std::to_string(i) + " of " + std::to_string(n) + ": entry " + std::to_string(*entry) +
                   ", fast path " + std::to_string(*fastpath) + ", state " + std::to_string(s) + ", monitors " +
                   std::to_string(*held) + ")";
        some_fastpath_state |= s == 1;
    }
    return some_fastpath_state ? ""
                               : "its threads do not hold a continuation entry where JDK 21 to 23 keep it (no "
                                 "thread's fast-path state is set)";
}

// The continuation entry's offset: VMStructs' (JDK 24+), else placed after its
// neighbour and checked on the JVM's threads. why: set when neither.
std::optional<uint64_t> cont_entry_offset(const JvmMemory &memory, const std::map<std::string, uint64_t> &fields,
                                          std::string &why)
{
    if (fields.count(kJavaThreadContEntry))
        return fields.at(kJavaThreadContEntry);
    if (!fields.count(kJavaThreadMethodHandleReturn)) {
        why = "its VMStructs name neither JavaThread::_cont_entry nor the field JDK 21 to 23 keep before it";
        return std::nullopt;
    }
    const uint64_t offset = fields.at(kJavaThreadMethodHandleReturn) + kContEntryAfterMethodHandleReturn;
    why = check_derived_entry(memory, fields, offset);
    if (!why.empty())
        return std::nullopt;
    return offset;
}

// ZGC's references: generational ones are coloured pointers, whose remapped
// bits must sit where this reader takes them off (the JVM's current load
// shift says where its good one is); the JDK 21 mode's references are
// addresses in one of the heap's views, each mapped. why: set when unreadable.
uint64_t zpointer_remapped_shift(const JvmMemory &memory, std::string &why)
{
    const std::optional<uint64_t> zgc = memory.flag(kUseZGC);
    if (!zgc || !memory.read_u8(*zgc).value_or(0))
        return 0;
    const std::optional<uint64_t> generational = memory.flag(kZGenerational);  // JDK 21 to 23
    if (generational && !memory.read_u8(*generational).value_or(0))
        return 0;
    const std::optional<uint64_t> shift_at = memory.symbol(kZPointerLoadShift);
    const std::optional<uint64_t> good_at = memory.symbol(kZPointerLoadGoodMask);
    const uint64_t shift = shift_at ? memory.read_u64(*shift_at).value_or(0) : 0;
    const uint64_t good = good_at ? memory.read_u64(*good_at).value_or(0) : 0;
    if (shift < kZPointerRemappedShift + 1 || shift > kZPointerRemappedShift + 4 || !(good & (1ULL << (shift - 1)))) {
        why = "it runs generational ZGC with a pointer colouring jmethodtime does not know (load shift " +
              std::to_string(shift) + ")";
        return 0;
    }
    return kZPointerRemappedShift;
}

}  // namespace

VthreadLayout read_vthread_layout(const JvmMemory &memory)
{
    if (!memory.symbol(kThreadTidOffset))
        return unsupported("its libjvm.so has no symbol table (.symtab) naming java_lang_Thread::_tid_offset");
    // java.lang.Thread's offsets are computed as the JVM starts, after libjvm's
    // static data (the VMStructs table) is initialised: one read while pending.
    const std::string tid = memory.read(*memory.symbol(kThreadTidOffset), sizeof(int32_t));
    int32_t tid_offset = 0;
    if (tid.size() == sizeof(tid_offset))
        memcpy(&tid_offset, tid.data(), sizeof(tid_offset));
    if (tid_offset <= 0)
        return {};
    const std::map<std::string, uint64_t> fields = memory.fields(
        {kJavaThreadVthread, kJavaThreadContEntry, kJavaThreadThreadObj, kJavaThreadStackBase, kJavaThreadStackSize,
         kJavaThreadMethodHandleReturn, kJavaThreadList, kThreadsListLength, kThreadsListThreads});
    if (!fields.count(kJavaThreadThreadObj) || fields.at(kJavaThreadThreadObj) == 0) {
        // A read of the table that came up short: pending, the reason kept should it never be read.
        VthreadLayout l;
        l.why = "its VMStructs table could not be read";
        return l;
    }
    if (!fields.count(kJavaThreadVthread) || !fields.count(kJavaThreadStackBase) || !fields.count(kJavaThreadStackSize))
        return unsupported("its VMStructs do not name JavaThread::_vthread and the thread's stack");
    std::string why;
    const std::optional<uint64_t> entry_offset = cont_entry_offset(memory, fields, why);
    if (!entry_offset && fields.count(kJavaThreadMethodHandleReturn)) {
        // Threads starting or ending while the list is read can disagree for a moment:
        // pending, asked again, with the reason kept for a layout that never settles.
        VthreadLayout l;
        l.why = why;
        return l;
    }
    if (!entry_offset)
        return unsupported(why);
    const uint64_t remapped_shift = zpointer_remapped_shift(memory, why);
    if (!why.empty())
        return unsupported(why);
    if (!memory.symbol(kFreezeEntry) || !memory.symbol(kThawEntry))
        return unsupported("its libjvm.so's symbol table does not name the continuations' freeze and thaw entries");
    // The entries' addresses in the JVM, less the bias: addresses in the file's image.
    auto entry = [&](const char *name) -> uint64_t {
        const std::optional<uint64_t> at = memory.symbol(name);
        const uint64_t fn = at ? memory.read_u64(*at).value_or(0) : 0;
        return fn > memory.bias() ? fn - memory.bias() : 0;
    };
    VthreadLayout l;
    l.freeze_vaddr = entry(kFreezeEntry);
    l.thaw_vaddr = entry(kThawEntry);
    l.freeze_preempt_vaddr = entry(kFreezePreemptEntry);
    if (!l.freeze_vaddr || !l.thaw_vaddr)
        return {};
    l.state = VthreadLayout::State::Ready;
    l.vthread_offset = fields.at(kJavaThreadVthread);
    l.cont_entry_offset = *entry_offset;
    l.cont_entry_derived = !fields.count(kJavaThreadContEntry);
    l.stack_base_offset = fields.at(kJavaThreadStackBase);
    l.stack_size_offset = fields.at(kJavaThreadStackSize);
    l.zpointer_remapped_shift = remapped_shift;
    l.tid_offset = static_cast<uint64_t>(tid_offset);
    return l;
}

}  // namespace jmt
