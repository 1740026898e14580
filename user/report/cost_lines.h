// The table header's lines on the probes' cost: what was taken out of the
// times and what it rests on, and the range each time's ± holds.
#pragma once

#include <ostream>

#include "model/profile.h"

namespace jmt {

// "Times exclude the probes' own cost: ..." (or that --raw kept it) and
// "Per probe event ... to ...", each ending in a newline.
void write_probe_cost(std::ostream &out, const Profile &profile);

}  // namespace jmt
