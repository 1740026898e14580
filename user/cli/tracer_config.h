// The tracer's configuration a trace's options and JVMs give.
#pragma once

#include <vector>

#include "cli/options.h"
#include "loader/tracer.h"
#include "jvm/jvm.h"

namespace jmt {

// The tracer's configuration for targets (the first is the main one) under options o:
// filters, outputs' needs, the probes' argument registers, and the attach plan of several JVMs.
// latency_cost: what the kernel takes out of each call's histogram time per probe event.
TracerConfig tracer_config(const Options &o, const std::vector<JvmTarget> &targets, const ProbeCost &latency_cost);

}  // namespace jmt
