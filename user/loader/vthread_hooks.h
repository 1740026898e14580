// Virtual threads (JDK 21+): the uprobes on each traced libjvm's freeze and
// thaw functions (bpf/vthreads.bpf.h), and the layout every traced JVM's
// hooks read, given to the programs once the JVM has initialised it.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <thread>
#include <vector>

#include "loader/programs.h"
#include "jvm/hotspot_flags.h"
#include "jvm/libjvm_file.h"
#include "jvm/vthread_layout.h"

namespace jmt {

// A traced JVM and its libjvm as read from here.
struct VthreadTarget {
    int pid = 0;
    std::string libjvm;
};

// Each target libjvm as read once: its continuation functions, which the hooks attach to
// (none for a JDK before 21, a stripped .symtab or an unreadable file), and its symbols.
using HooksByLibjvm = std::map<std::string, LibjvmInfo>;
HooksByLibjvm find_hooks(const std::vector<VthreadTarget> &targets);
// Whether any libjvm of hooks has them.
bool any_hooks(const HooksByLibjvm &hooks);

class VthreadHooks {
public:
    // Hooks every target's JVM once its layout is read (pid -1 per libjvm
    // when whole): at once where it can be, otherwise polled for every poll_ms
    // on a thread that blocks every signal. A JVM whose layout is unsupported
    // gets no hook, so its unmounts and mounts do not trap.
    VthreadHooks(jmethodtime_bpf *skel, std::vector<VthreadTarget> targets, HooksByLibjvm hooks, bool whole,
                 unsigned poll_ms = 2);
    ~VthreadHooks();
    VthreadHooks(const VthreadHooks &) = delete;
    VthreadHooks &operator=(const VthreadHooks &) = delete;

    // "" when every JVM's virtual threads are followed; otherwise why one's are not.
    std::string not_followed() const;

private:
    // Reads the layouts still pending, and hooks the JVMs whose layout is
    // ready; true when none is pending.
    bool resolve();
    // Attaches target i's hooks: the freeze, freeze_preempt and thaw its
    // layout names (HotSpot runs no other instantiation), each once per
    // libjvm and pid (-1: every process). False when an attach failed: then
    // none of them stays, and the JVM is not followed, with the reason.
    bool attach(size_t i);

    jmethodtime_bpf *skel_;
    std::vector<VthreadTarget> targets_;
    std::vector<VthreadLayout> layouts_;  // by target index
    std::vector<LibjvmInfo> libjvms_;     // by target index: its libjvm's symbols and functions
    // By target index: its libjvm's memory, from the first poll that finds libjvm mapped.
    std::vector<std::shared_ptr<const JvmMemory>> memories_;
    bool whole_;  // hooks attach for every process (pid -1)
    // A hooked function: libjvm, pid (-1: every process), file offset.
    struct Site {
        std::string libjvm;
        int pid;
        uint64_t file_offset;
        bool operator<(const Site &o) const
        {
            return std::tie(libjvm, pid, file_offset) < std::tie(o.libjvm, o.pid, o.file_offset);
        }
    };
    std::set<Site> attached_;
    std::vector<LinkPtr> links_;
    mutable std::mutex mutex_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace jmt
