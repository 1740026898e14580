#include "target/vthread_layout.h"

#include <unistd.h>

#include <cstring>

#include "target/hotspot_flags.h"
#include "target/jvm.h"
#include "util/procfs.h"

namespace jmt {

namespace {

constexpr const char *kVthreadField = "JavaThread::_vthread";
constexpr const char *kContEntryField = "JavaThread::_cont_entry";
constexpr const char *kThreadObjField = "JavaThread::_threadObj";
constexpr const char *kTidOffsetSymbol = "_ZN16java_lang_Thread11_tid_offsetE";
// HotSpot's pointers to the freeze, freeze_preempt and thaw it resolved for
// its GC at start-up (continuationFreezeThaw.cpp, file-local statics).
constexpr const char *kFreezeEntrySymbol = "_ZL12freeze_entry";
constexpr const char *kFreezePreemptEntrySymbol = "_ZL20freeze_preempt_entry";
constexpr const char *kThawEntrySymbol = "_ZL10thaw_entry";

VthreadLayout unsupported(const std::string &why)
{
    VthreadLayout l;
    l.state = VthreadLayout::State::Unsupported;
    l.why = why;
    return l;
}

}  // namespace

VthreadLayout read_vthread_layout(int pid, const std::map<std::string, uint64_t> &symbols, uint64_t first_load_vaddr)
{
    if (!symbols.count(kTidOffsetSymbol))
        return unsupported("its libjvm.so has no symbol table (.symtab) naming java_lang_Thread::_tid_offset");
    const LibjvmMapping m = find_libjvm(read_file("/proc/" + std::to_string(pid) + "/maps"));
    if (!m.found)
        return {};
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t bias = m.start - (first_load_vaddr & ~(page - 1));  // the address of the file's vaddr 0
    const JvmMemory memory(pid, bias, symbols);
    // java.lang.Thread's offsets are computed as the JVM starts, after libjvm's
    // static data (the VMStructs table) is initialised: one read while pending.
    const std::string tid = memory.read(*memory.symbol(kTidOffsetSymbol), sizeof(int32_t));
    int32_t tid_offset = 0;
    if (tid.size() == sizeof(tid_offset))
        memcpy(&tid_offset, tid.data(), sizeof(tid_offset));
    if (tid_offset <= 0)
        return {};
    const std::map<std::string, uint64_t> fields = memory.fields({kVthreadField, kContEntryField, kThreadObjField});
    if (!fields.count(kThreadObjField) || fields.at(kThreadObjField) == 0)
        return unsupported("its VMStructs table could not be read");
    if (!fields.count(kContEntryField))
        return unsupported("its VMStructs do not name JavaThread::_cont_entry (JDK 21 to 23)");
    if (!fields.count(kVthreadField))
        return unsupported("its VMStructs do not name JavaThread::_vthread");
    if (const std::optional<uint64_t> zgc = memory.flag("UseZGC"))
        if (memory.read_u8(*zgc).value_or(0))
            return unsupported("it runs ZGC, whose references carry colour bits the kernel program does not strip");
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
    l.cont_entry_offset = fields.at(kContEntryField);
    l.tid_offset = static_cast<uint64_t>(tid_offset);
    return l;
}

}  // namespace jmt
