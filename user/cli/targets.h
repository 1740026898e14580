// The JVMs one trace follows: -p's one, or every JVM --match finds; how the
// probes attach to their libjvms; and their CPU time, summed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/options.h"
#include "kernel/tracer.h"
#include "target/jvm.h"

namespace jmt {

// -p PID's JVM, or the JVMs --match REGEX finds in all_jvms (at most JMT_MAX_TARGETS),
// examined. A JVM --match found that cannot be traced (probes off, no probes)
// is left out with one line on warn; when none is left, the first one's
// problem is thrown as jmt::Error.
std::vector<JvmTarget> find_targets(int pid, const std::string &match, const std::vector<JvmTarget> &all_jvms,
                                    std::ostream &warn);

// Where several JVMs' probes attach: their libjvms, grouped by file (device
// and inode). A group attaches once for every process that maps it (whole)
// when every JVM of all_jvms with the probes on that maps the same file is a
// target, so no other JVM pays traps; otherwise once per pid.
std::vector<TracedLibjvm> attach_plan(const std::vector<JvmTarget> &targets, const std::vector<JvmTarget> &all_jvms);

// The tracer's configuration for targets (the first is the main one) under options o:
// filters, outputs' needs, the probes' argument registers, and the attach plan of several JVMs.
TracerConfig tracer_config(const Options &o, const std::vector<JvmTarget> &targets);

// "pid 12 (java), pid 34 (java)".
std::string targets_text(const std::vector<JvmTarget> &targets);

// The traced JVMs' CPU time (ns, every thread): each JVM's latest reading,
// summed; a JVM that is gone keeps its last one.
class JvmsCpu {
public:
    explicit JvmsCpu(std::vector<int> pids) : pids_(std::move(pids)), last_(pids_.size()) {}
    // Reads every JVM now; the sum (nullopt before any JVM was read). fresh:
    // every JVM was read now (false: some total ends at an earlier reading).
    std::optional<uint64_t> read(bool *fresh = nullptr);
    // The sum of the latest readings, without reading.
    std::optional<uint64_t> last() const;

private:
    std::vector<int> pids_;
    std::vector<std::optional<uint64_t>> last_;
};

}  // namespace jmt
