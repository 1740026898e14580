// A report's interval (the whole trace, or each -i interval): what the kernel's
// running totals hold since the previous interval.
#pragma once

#include <cstdint>
#include <vector>

#include "model/profile.h"

namespace jmt {

class IntervalTotals {
public:
    // The first interval starts at these totals (its rows and gaps from none).
    void start(const OverheadTotals &totals) { start_ = totals; }
    // p's methods, gap histogram and overhead for the interval from the previous
    // call (or the trace's start) to these totals, which start the next one.
    void next(Profile &p, std::vector<MethodRow> rows, const std::vector<uint64_t> &gap_hist,
              const OverheadTotals &totals);

private:
    OverheadTotals start_;
    std::vector<MethodRow> previous_rows_;
    std::vector<uint64_t> previous_gaps_;
};

}  // namespace jmt
