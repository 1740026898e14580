// Tracer lifecycle: open -> set rodata -> load -> attach, then snapshots read
// by its SnapshotReader (snapshot_reader.h) -> detach. RAII: destroying the
// Tracer detaches every probe.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loader/programs.h"
#include "loader/slow_call_reader.h"
#include "loader/snapshot_reader.h"
#include "loader/totals_chunks.h"
#include "loader/vthread_hooks.h"
#include "model/paths.h"

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
    size_t slow_calls_kept = 100;       // --slow-calls: with programs.slower_than_ns, kept per report
};

class Tracer {
public:
    // Loads and attaches; throws jmt::Error naming the cause and the fix.
    explicit Tracer(const TracerConfig &config);
    ~Tracer();
    Tracer(const Tracer &) = delete;
    Tracer &operator=(const Tracer &) = delete;

    // Totals since attach, read from the kernel maps.
    Snapshot snapshot() const;
    TraceProgress progress() const { return reader_->progress(); }
    // Totals per call path since attach (call_paths on), parents before children.
    CallTree call_tree() const { return reader_->call_tree(); }

    // Whether the method probes can be detached one at a time: one JVM, its
    // own attachment (cost/probe_windows.h's windows after a trace).
    bool can_switch_method_probes() const { return window_pid_ > 0; }
    // The one JVM's method__entry and method__return probes attached or not
    // (each attached again in the order a trace attaches them); throws
    // jmt::Error when one cannot be attached again. The programs' frames no
    // longer match the JVM's once a probe was off: read no totals after.
    void set_method_probes(bool entry, bool ret);
    // Every JVM's method__return, then method__entry probe detached, each
    // detach waiting for the programs under way: no frame closes after it, so
    // totals read then are one cut of the trace. set_method_probes attaches
    // the one JVM's again.
    void detach_method_probes();
    // The entry and return programs' run time so far (ns), with the kernel's
    // run-time statistics on (0 without).
    std::pair<uint64_t, uint64_t> method_program_ns() const;
    // --slower-than: the calls recorded since the last take, the slowest kept, named.
    std::vector<SlowCall> take_slow_calls(uint64_t &dropped);

private:
    SkeletonPtr skel_;
    // Declared after skel_ and before links_: the links go first, then the
    // grower stops, then the chunks close, then the programs unload.
    std::unique_ptr<TotalsChunks> method_totals_, path_totals_, row_totals_;
    std::unique_ptr<TotalsGrower> grower_;
    std::vector<ProbeLinks> links_;
    // One JVM attached by pid: its libjvm, and where links_ holds its method probes.
    int window_pid_ = 0;
    std::string window_libjvm_;
    size_t return_link_ = 0, entry_link_ = 0;
    std::vector<size_t> method_links_;             // every JVM's method__return, then method__entry, in links_
    std::unique_ptr<VthreadHooks> vthread_hooks_;  // JDK 21+ with hooks found
    std::unique_ptr<SnapshotReader> reader_;
    std::unique_ptr<SlowCallReader> slow_calls_;  // --slower-than
};

}  // namespace jmt
