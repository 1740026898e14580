// Collapsed stacks, the text FlameGraph's scripts, speedscope and inferno read.
#pragma once

#include <ostream>

#include "model/paths.h"

namespace jmt {

// One line "label;label;label value\n" per path with a non-zero exclusive
// value of metric, so a flame graph's frame width is its inclusive total.
void write_folded(std::ostream &out, const CallTree &tree, PathMetric metric);

// FlameGraph's difffolded.pl format: "stack BASE NEW" per line, every stack of
// either tree, sorted.
void write_diff_folded(std::ostream &out, const CallTree &base, const CallTree &now, PathMetric metric);

}  // namespace jmt
