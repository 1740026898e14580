// Two reports compared method by method and path by path: jmethodtime diff.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/paths.h"
#include "model/profile.h"

namespace jmt {

// One method before (base) and after (now); threads summed. A side is empty
// when the method has no calls in that report.
struct DiffRow {
    std::string klass, method, signature;
    std::optional<MethodStats> base, now;
    // now's exclusive elapsed time per call over base's, minus 1 (0.25: 25% slower);
    // +inf for a method only in now, -1 for one only in base.
    double change = 0;
    // Both sides' p99 at least kP99MovedBuckets buckets apart (farther than the
    // histograms' resolution), each over kP99MinCalls calls.
    bool p99_moved = false;
};

constexpr uint64_t kP99MinCalls = 100;
constexpr uint32_t kP99MovedBuckets = 2;

// ns per call, 0 without calls.
double per_call(uint64_t total_ns, uint64_t calls);

// Every method of either report, sorted by how far its exclusive elapsed time
// per call moved (|log(now/base)|, a method in one report only first), then by
// class, method and signature.
std::vector<DiffRow> diff_methods(const std::vector<MethodRow> &base, const std::vector<MethodRow> &now);

// A line naming both reports' architectures when they differ (counts compare
// across machines, times per call compare the machines too); empty when they
// agree or one is unknown.
std::string architecture_difference(const Profile &base, const Profile &now, const std::string &base_file,
                                    const std::string &new_file);

// "a;b;c" -> exclusive value of metric per path (the values write_folded prints, zeros left out).
std::map<std::string, uint64_t> folded_values(const CallTree &tree, PathMetric metric);

}  // namespace jmt
