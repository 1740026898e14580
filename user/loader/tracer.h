// Tracer lifecycle: open -> set rodata -> load -> attach, then snapshots read
// by its SnapshotReader (snapshot_reader.h) -> detach. RAII: destroying the
// Tracer detaches every probe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loader/programs.h"
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

private:
    SkeletonPtr skel_;
    // Declared after skel_ and before links_: the links go first, then the
    // grower stops, then the chunks close, then the programs unload.
    std::unique_ptr<TotalsChunks> method_totals_, path_totals_, row_totals_;
    std::unique_ptr<TotalsGrower> grower_;
    std::vector<LinkPtr> links_;
    std::unique_ptr<VthreadHooks> vthread_hooks_;  // JDK 21+ with hooks found
    std::unique_ptr<SnapshotReader> reader_;
};

}  // namespace jmt
