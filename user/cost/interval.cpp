#include "cost/interval.h"

#include <utility>

#include "cost/evidence.h"
#include "cost/overhead.h"

namespace jmt {

void IntervalTotals::next(Profile &p, std::vector<MethodRow> rows, const std::vector<uint64_t> &gap_hist,
                          const OverheadTotals &totals)
{
    p.methods = rows_since(rows, previous_rows_);
    p.gap_hist = gaps_since(gap_hist, previous_gaps_);
    p.overhead = overhead_since(totals, start_);
    start_ = totals;
    previous_rows_ = std::move(rows);
    previous_gaps_ = gap_hist;
}

}  // namespace jmt
