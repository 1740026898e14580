// Cost of one probe event as the traced thread feels it, measured on the
// running kernel with the tool's own programs, so it can be taken out of the
// frames' times.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "profile.h"

namespace jmt {

// Fires the tool's own jmethodtime:method__entry/method__return probes (the
// same 7-argument layout as HotSpot's) under a private instance of the same
// programs, on this thread, and times them against the bare probe site:
// the median over batches, for events of a traced method and of a method the
// package filter rejects. Throws jmt::Error when the programs cannot load or
// attach.
ProbeCost calibrate_probe_cost(bool verbose);

}  // namespace jmt
