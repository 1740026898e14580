// The one place that picks the output: table, JSON, CSV, folded stacks or the
// call tree on the report's stream, plus the flame graph and pprof files. It
// only formats: the profile's times are final (cost/correction.h's
// correct_profile has run) and the rows are the ones to show.
#pragma once

#include <cstdint>
#include <ostream>

#include "model/paths.h"
#include "model/profile.h"

namespace jmt {

enum class OutputKind { Table, Json, Csv, Folded, Tree };

struct OutputSpec {
    OutputKind kind = OutputKind::Table;
    size_t top = 20;                       // table rows (0: all)
    SortKey sort = SortKey::Excl;          // table and CSV order
    bool offcpu = false;                   // table: run-queue and blocked columns always
    PathMetric metric = PathMetric::Wall;  // folded stacks' value, flame graph's first metric
    double min_percent = 0.5;              // call tree: paths under this share left out
};

// Writes profile (and its call paths, tree) as spec says on out; flamegraph
// and pprof, when not null, also get the call paths.
void write_outputs(std::ostream &out, const OutputSpec &spec, const Profile &profile, const CallTree &tree,
                   std::ostream *flamegraph, std::ostream *pprof);

}  // namespace jmt
