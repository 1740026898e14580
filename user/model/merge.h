// One report over many sources (hosts, JVMs): jmethodtime merge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/paths.h"
#include "model/profile.h"

namespace jmt {

// One report to merge: its file (for messages), its profile and its call paths, when it has them.
struct MergeInput {
    std::string file;
    Profile profile;
    std::optional<CallTree> tree;
};

// Call trees summed path by path (a path is its frames' class, method and
// signature from the root): ids from 1, parents before children.
CallTree merge_trees(const std::vector<const CallTree *> &trees);

// Rows with equal (class, method, signature, tid) summed: stats, bounds (the
// bounds of a sum are the sums of the bounds) and probe_dominated (any).
std::vector<MethodRow> sum_rows(const std::vector<MethodRow> &rows);

// What differs between the inputs' settings, one line per setting, naming each
// file's value: the filter (packages, classes, methods), the times (corrected
// or --raw) and --foreign. Empty when they agree.
std::vector<std::string> merge_differences(const std::vector<MergeInput> &inputs);

// Every input summed: methods (sum_rows), diagnostics, probe events, the JVMs'
// CPU time (0 when one is unknown); sources, every input's in order; filter,
// times and foreign from the first input; duration_ns the longest trace; pid 0.
// The probe cost is each source's own, taken out (or not) where it was traced,
// so the merged profile's is 0.
Profile merge_profiles(const std::vector<MergeInput> &inputs);

// One input's rows of one method (threads summed), for the outlier view.
struct OutlierOptions {
    double factor = 2.0;       // flag per-call times over factor x or under 1/factor x the fleet's median
    uint64_t min_calls = 100;  // sources with fewer calls of the method are left out of the comparison
    size_t min_sources = 3;    // the median needs at least this many sources with min_calls calls
};

struct Outlier {
    std::string klass, method, signature;
    size_t input = 0;  // index in the inputs
    uint64_t calls = 0;
    double per_call_ns = 0;  // this source's inclusive elapsed time per call
    double median_ns = 0;    // the median of every compared source's
    double factor = 0;       // per_call_ns / median_ns
    size_t compared = 0;     // sources compared
};

// For each method, the inputs whose inclusive elapsed time per call is at
// least opts.factor times the median over the inputs with opts.min_calls calls
// or more, or at most 1/opts.factor of it (at least opts.min_sources inputs
// compared). Sorted by how far (|log factor|) descending, then by method and input.
std::vector<Outlier> find_outliers(const std::vector<MergeInput> &inputs, const OutlierOptions &opts);

// "host17 (pid 4242)", or the sources of a merged input joined by ", ".
std::string input_label(const MergeInput &input);

}  // namespace jmt
