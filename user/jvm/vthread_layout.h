// What the virtual-thread hooks read in a running JVM (bpf/vthreads.bpf.h):
// JavaThread's field offsets from HotSpot's VMStructs and java.lang.Thread's
// tid offset, all set while the JVM initialises.
#pragma once

#include <cstdint>
#include <string>

#include "jvm/hotspot_flags.h"

namespace jmt {

struct VthreadLayout {
    enum class State { Pending, Ready, Unsupported };
    State state = State::Pending;
    uint64_t vthread_offset = 0;     // JavaThread::_vthread (bytes)
    uint64_t cont_entry_offset = 0;  // JavaThread::_cont_entry (bytes)
    uint64_t tid_offset = 0;         // java.lang.Thread's tid field (bytes into the object)
    uint64_t stack_base_offset = 0;  // Thread::_stack_base (bytes)
    uint64_t stack_size_offset = 0;  // Thread::_stack_size (bytes)
    // Generational ZGC: ZPointerRemappedShift (its coloured pointers' remapped
    // bits start there); 0 where references are addresses.
    uint64_t zpointer_remapped_shift = 0;
    bool cont_entry_derived = false;  // JDK 21 to 23: placed from its neighbours, checked on the JVM's threads
    // The instantiations of freeze<Config>, Config::freeze_preempt (JDK 24+;
    // 0 before) and thaw<Config> this JVM chose for its GC and oop size, as
    // addresses in its libjvm file's image (ContinuationHooks' vaddr): the only
    // ones it runs.
    uint64_t freeze_vaddr = 0, freeze_preempt_vaddr = 0, thaw_vaddr = 0;
    std::string why;  // Unsupported: what is missing, for the report's header;
                      // Pending: what disagreed last, if anything
};

// The layout of the JVM whose libjvm memory reads, now: Pending while it is not
// initialised (continuations' entries included) or while its threads disagree with
// the layout (a moment while they start, or for good: why says so), Unsupported
// when it lacks a part.
VthreadLayout read_vthread_layout(const JvmMemory &memory);

}  // namespace jmt
