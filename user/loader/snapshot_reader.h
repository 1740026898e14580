// What the loaded programs have counted, read from their maps into rows:
// the per-method totals, the per-thread rows, the call paths, the counters
// and the gaps. Reads only: the Tracer loads and attaches, and owns what this
// reads (tracer.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jmethodtime.h"
#include "loader/programs.h"
#include "loader/totals_chunks.h"
#include "model/paths.h"
#include "model/profile.h"

namespace jmt {

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

// Cheap counters for a progress line and --max-overhead: probe events seen
// (no CPU reading), methods traced so far, the diagnostic counters
// (truncated_names stays 0: it is counted when names are read).
struct TraceProgress {
    OverheadTotals events;
    uint64_t methods = 0;
    Diagnostics diag;
    std::vector<uint64_t> gap_hist;  // as Snapshot::gap_hist
};

// Where the reader reads: the programs' maps and globals and the totals'
// chunks (per method, per call path and per --per-thread row; null when the
// programs keep none), all owned by the Tracer and outliving the reader.
struct SnapshotSources {
    ProgramMaps maps;
    ProgramGlobals globals;
    const TotalsChunks *methods = nullptr, *paths = nullptr, *rows = nullptr;
    int pid = 0;  // the JVM whose memory holds names the kernel cut short (with one JVM)
};

class SnapshotReader {
public:
    explicit SnapshotReader(const SnapshotSources &sources) : src_(sources), pause_ms_(test_snapshot_pause_ms()) {}

    // Totals since attach (virtual_threads_not_followed left unset).
    Snapshot snapshot() const;
    TraceProgress progress() const;
    // Totals per call path since attach (call paths on), parents before children.
    CallTree call_tree() const;
    // A call the return program recorded (--slower-than), named, its times as
    // its histogram's (the probe events' cost out of elapsed and on-CPU time).
    SlowCall slow_call(const jmt_slow_call &raw) const;

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
    // The thread's current name (/proc: JVM threads rename themselves), or the
    // comm the kernel recorded when it first ran a traced method (it has
    // exited), or "".
    std::string thread_name(int pid, uint32_t tid) const;

    SnapshotSources src_;
    uint32_t pause_ms_ = 0;  // test_snapshot_pause_ms()
    mutable std::unordered_map<uint32_t, MethodNames> names_;
};

}  // namespace jmt
