// The JVMs one trace follows: -p's one, or every JVM --match finds; and their
// CPU time, summed.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "jvm/jvm.h"

namespace jmt {

// -p PID's JVM, or the JVMs --match REGEX finds in all_jvms (at most JMT_MAX_TARGETS),
// examined. A JVM --match found that cannot be traced (probes off, no probes)
// is left out with one line on warn; when none is left, the first one's
// problem is thrown as jmt::Error.
std::vector<JvmTarget> find_targets(int pid, const std::string &match, const std::vector<JvmTarget> &all_jvms,
                                    std::ostream &warn);

// The targets' pids, in their order.
std::vector<int> target_pids(const std::vector<JvmTarget> &targets);

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
