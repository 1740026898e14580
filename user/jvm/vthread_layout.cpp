#include "jvm/vthread_layout.h"

#include <unistd.h>

#include <cstring>
#include <vector>

#include "jvm/elf_file.h"
#include "jvm/hotspot_flags.h"
#include "jvm/jvm.h"
#include "util/procfs.h"

namespace jmt {

namespace {

constexpr const char *kVthreadField = "JavaThread::_vthread";
constexpr const char *kContEntryField = "JavaThread::_cont_entry";
constexpr const char *kThreadObjField = "JavaThread::_threadObj";
constexpr const char *kStackBaseField = "JavaThread::_stack_base";
constexpr const char *kStackSizeField = "JavaThread::_stack_size";
// JDK 21 to 23 do not name _cont_entry; javaThread.hpp places it after
// _is_method_handle_return (int), _jni_active_critical (int),
// _pending_jni_exception_check_fn (char*), _depth_first_number,
// _popframe_condition and _frames_to_pop_failed_realloc (ints) and 4 bytes of
// padding, followed by _cont_fastpath (intptr_t*), _cont_fastpath_thread_state
// (int, padded to 8) and _held_monitor_count (int64_t).
constexpr const char *kMethodHandleReturnField = "JavaThread::_is_method_handle_return";
constexpr uint64_t kContEntryAfterMethodHandleReturn = 32;
constexpr const char *kThreadListField = "ThreadsSMRSupport::_java_thread_list";
constexpr const char *kListLengthField = "ThreadsList::_length";
constexpr const char *kListThreadsField = "ThreadsList::_threads";
constexpr uint32_t kMaxCheckedThreads = 256;  // enough to tell; bounded per poll
constexpr int64_t kMaxHeldMonitors = 1 << 20;
constexpr const char *kTidOffsetSymbol = "_ZN16java_lang_Thread11_tid_offsetE";
// HotSpot's pointers to the freeze, freeze_preempt and thaw it resolved for
// its GC at start-up (continuationFreezeThaw.cpp, file-local statics).
constexpr const char *kFreezeEntrySymbol = "_ZL12freeze_entry";
constexpr const char *kFreezePreemptEntrySymbol = "_ZL20freeze_preempt_entry";
constexpr const char *kThawEntrySymbol = "_ZL10thaw_entry";
// Generational ZGC (zAddress.hpp): 4 remapped bits from bit 12 of a coloured
// pointer, one set; ZPointerLoadShift is the current good one's + 1.
constexpr uint64_t kZPointerRemappedShift = 12;
constexpr const char *kZPointerLoadShiftSymbol = "ZPointerLoadShift";
constexpr const char *kZPointerLoadGoodMaskSymbol = "ZPointerLoadGoodMask";

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
    for (const char *f : {kThreadListField, kListLengthField, kListThreadsField, kStackBaseField, kStackSizeField})
        if (!fields.count(f))
            return std::string("its VMStructs do not name ") + f + ", to check where _cont_entry lies";
    const std::optional<uint64_t> list = memory.read_u64(fields.at(kThreadListField));
    const std::string len = list ? memory.read(*list + fields.at(kListLengthField), sizeof(uint32_t)) : "";
    const std::optional<uint64_t> threads = list ? memory.read_u64(*list + fields.at(kListThreadsField)) : std::nullopt;
    if (!list || !*list || len.size() != sizeof(uint32_t) || !threads)
        return "its thread list could not be read";
    uint32_t n = 0;
    memcpy(&n, len.data(), sizeof(n));
    bool some_fastpath_state = false;
    for (uint32_t i = 0; i < n && i < kMaxCheckedThreads; i++) {
        const std::optional<uint64_t> jt = memory.read_u64(*threads + 8ULL * i);
        if (!jt || !*jt)
            continue;
        const std::optional<uint64_t> base = memory.read_u64(*jt + fields.at(kStackBaseField));
        const std::optional<uint64_t> size = memory.read_u64(*jt + fields.at(kStackSizeField));
        const std::optional<uint64_t> entry = memory.read_u64(*jt + entry_offset);
        const std::optional<uint64_t> fastpath = memory.read_u64(*jt + entry_offset + 8);
        const std::string state = memory.read(*jt + entry_offset + 16, sizeof(int32_t));
        const std::optional<int64_t> held = read_i64(memory, *jt + entry_offset + 24);
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
    if (fields.count(kContEntryField))
        return fields.at(kContEntryField);
    if (!fields.count(kMethodHandleReturnField)) {
        why = "its VMStructs name neither JavaThread::_cont_entry nor the field JDK 21 to 23 keep before it";
        return std::nullopt;
    }
    const uint64_t offset = fields.at(kMethodHandleReturnField) + kContEntryAfterMethodHandleReturn;
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
    const std::optional<uint64_t> zgc = memory.flag("UseZGC");
    if (!zgc || !memory.read_u8(*zgc).value_or(0))
        return 0;
    const std::optional<uint64_t> generational = memory.flag("ZGenerational");  // JDK 21 to 23
    if (generational && !memory.read_u8(*generational).value_or(0))
        return 0;
    const std::optional<uint64_t> shift_at = memory.symbol(kZPointerLoadShiftSymbol);
    const std::optional<uint64_t> good_at = memory.symbol(kZPointerLoadGoodMaskSymbol);
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

VthreadLayout read_vthread_layout(int pid, const std::map<std::string, uint64_t> &symbols, uint64_t first_load_vaddr)
{
    if (!symbols.count(kTidOffsetSymbol))
        return unsupported("its libjvm.so has no symbol table (.symtab) naming java_lang_Thread::_tid_offset");
    const LibjvmMapping m = find_libjvm(read_file("/proc/" + std::to_string(pid) + "/maps"));
    if (!m.found)
        return {};
    const uint64_t bias = load_bias(m.start, first_load_vaddr);  // the address of the file's vaddr 0
    const JvmMemory memory(pid, bias, symbols);
    // java.lang.Thread's offsets are computed as the JVM starts, after libjvm's
    // static data (the VMStructs table) is initialised: one read while pending.
    const std::string tid = memory.read(*memory.symbol(kTidOffsetSymbol), sizeof(int32_t));
    int32_t tid_offset = 0;
    if (tid.size() == sizeof(tid_offset))
        memcpy(&tid_offset, tid.data(), sizeof(tid_offset));
    if (tid_offset <= 0)
        return {};
    const std::map<std::string, uint64_t> fields =
        memory.fields({kVthreadField, kContEntryField, kThreadObjField, kStackBaseField, kStackSizeField,
                       kMethodHandleReturnField, kThreadListField, kListLengthField, kListThreadsField});
    if (!fields.count(kThreadObjField) || fields.at(kThreadObjField) == 0) {
        // Seen once in about 30 launches of a JDK 21 from a root (a read of the table that
        // came up short): pending, asked again, the reason kept should it never be read.
        VthreadLayout l;
        l.why = "its VMStructs table could not be read";
        return l;
    }
    if (!fields.count(kVthreadField) || !fields.count(kStackBaseField) || !fields.count(kStackSizeField))
        return unsupported("its VMStructs do not name JavaThread::_vthread and the thread's stack");
    std::string why;
    const std::optional<uint64_t> entry_offset = cont_entry_offset(memory, fields, why);
    if (!entry_offset && fields.count(kMethodHandleReturnField)) {
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
    if (!symbols.count(kFreezeEntrySymbol) || !symbols.count(kThawEntrySymbol))
        return unsupported("its libjvm.so's symbol table does not name the continuations' freeze and thaw entries");
    // The entries' addresses in the JVM, less the bias: addresses in the file's image.
    auto entry = [&](const char *name) -> uint64_t {
        const std::optional<uint64_t> at = memory.symbol(name);
        const uint64_t fn = at ? memory.read_u64(*at).value_or(0) : 0;
        return fn > bias ? fn - bias : 0;
    };
    VthreadLayout l;
    l.freeze_vaddr = entry(kFreezeEntrySymbol);
    l.thaw_vaddr = entry(kThawEntrySymbol);
    l.freeze_preempt_vaddr = entry(kFreezePreemptEntrySymbol);
    if (!l.freeze_vaddr || !l.thaw_vaddr)
        return {};
    l.state = VthreadLayout::State::Ready;
    l.vthread_offset = fields.at(kVthreadField);
    l.cont_entry_offset = *entry_offset;
    l.cont_entry_derived = !fields.count(kContEntryField);
    l.stack_base_offset = fields.at(kStackBaseField);
    l.stack_size_offset = fields.at(kStackSizeField);
    l.zpointer_remapped_shift = remapped_shift;
    l.tid_offset = static_cast<uint64_t>(tid_offset);
    return l;
}

}  // namespace jmt
