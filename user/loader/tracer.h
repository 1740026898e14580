// Tracer lifecycle: open -> set rodata -> load -> attach -> snapshot -> detach.
// RAII: destroying the Tracer detaches every probe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jmethodtime.h"
#include "model/paths.h"
#include "loader/programs.h"
#include "loader/totals_chunks.h"
#include "loader/vthread_hooks.h"
#include "model/profile.h"

namespace jmt {

// Several JVMs: one libjvm file and the traced JVMs that map it. whole: the
// probes attach once for every process that maps it (pid -1) and the programs
// keep the traced pids' events; otherwise once per pid.
struct TracedLibjvm {
    std::string path;  // usable from here
    std::vector<int> pids;
    bool whole = false;
};

struct TracerConfig {
    ProgramConfig programs;             // programs.pid (and other_pids) are the JVMs
    std::string libjvm;                 // programs.pid's, path usable from here
    std::vector<TracedLibjvm> libjvms;  // several JVMs: where to attach (empty: libjvm for programs.pid)
};

struct Snapshot {
    // calls > 0. With per_thread: one row per (thread, method), tid and thread
    // set; plus, when the per-thread table filled up (diag.thread_rows_full),
    // one row per method with tid 0 and thread kUnsplitThread holding the calls
    // not split by thread, so the rows still sum to the totals.
    std::vector<MethodRow> methods;
    Diagnostics diag;
    // Gaps between consecutive clocked probe events of a thread, all CPUs
    // (JMT_GAP_BUCKETS buckets, bpf/gaps.h): the JVM's own cost per event.
    std::vector<uint64_t> gap_hist;
    // Kernel memory (bytes) of this process's BPF maps and programs (bpf_memory_bytes).
    uint64_t kernel_memory_bytes = 0;
    // Method ids handed out: one per method seen traced, again after its class unloaded.
    uint32_t method_ids = 0;
    // Names of the first methods --package rejected, and --class/--method
    // ("org/x/Foo", or "org/x/Foo.bar" when the method name was read).
    std::vector<std::string> rejected_by_package, rejected_by_globs;
    // JDK 21+: "" when the JVMs' virtual threads are followed across unmounts,
    // else why not; nullopt when no traced libjvm has the hooks' functions.
    std::optional<std::string> virtual_threads_not_followed;
};

// The thread name of the rows of calls not split by thread (tid 0).
extern const char *const kUnsplitThread;

class Tracer {
public:
    // Loads and attaches; throws jmt::Error naming the cause and the fix.
    explicit Tracer(const TracerConfig &config);
    ~Tracer();
    Tracer(const Tracer &) = delete;
    Tracer &operator=(const Tracer &) = delete;

    // Totals since attach, read from the kernel maps.
    Snapshot snapshot() const;

    // Cheap counters for a progress line and --max-overhead: probe events seen
    // (no CPU reading), methods traced so far, the diagnostic counters
    // (truncated_names stays 0: it is counted when names are read).
    struct Progress {
        OverheadTotals events;
        uint64_t methods = 0;
        Diagnostics diag;
    };
    Progress progress() const;

    // Totals per call path since attach (call_paths on), parents before children.
    CallTree call_tree() const;

private:
    // Names of one method id, resolved once: ids are never reused while the
    // programs are loaded, and snapshot() runs every interval with -i.
    struct MethodNames {
        std::string klass, method, signature;
        int pid = 0;             // its JVM, with several (0: one JVM)
        uint64_t truncated = 0;  // of the three, names left truncated
    };
    // The names of id, or nullptr when the kernel stored none.
    const MethodNames *method_names(uint32_t id) const;
    // The per-CPU record summed over the CPUs, from one read of it: the
    // diagnostic counters (enum jmt_counter) and the gap histogram (bpf/gaps.h).
    struct CpuTotals {
        std::array<uint64_t, JMT_CNT_NR> counters{};
        std::vector<uint64_t> gap_hist = std::vector<uint64_t>(JMT_GAP_BUCKETS, 0);
    };
    CpuTotals cpu_totals() const;
    // Sets row's names to id's (or "[unknown method #id]"); adds its truncated names.
    void set_names(MethodRow &row, uint32_t id, uint64_t &truncated) const;
    // The kernel's examples of rejected methods into snap.
    void rejected_examples(Snapshot &snap) const;
    // --per-thread rows, from row_ids and the rows' totals; totals are the
    // all-thread totals of the same snapshot, per method id.
    void add_thread_rows(Snapshot &snap, const std::vector<std::pair<uint32_t, MethodStats>> &totals) const;

    TracerConfig config_;
    SkeletonPtr skel_;
    // Declared after skel_ and before links_: the links go first, then the
    // grower stops, then the chunks close, then the programs unload.
    std::unique_ptr<TotalsChunks> method_totals_, path_totals_, row_totals_;
    std::unique_ptr<TotalsGrower> grower_;
    std::vector<LinkPtr> links_;
    std::unique_ptr<VthreadHooks> vthread_hooks_;  // JDK 21+ with hooks found
    mutable std::unordered_map<uint32_t, MethodNames> names_;
};

}  // namespace jmt
