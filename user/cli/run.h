// The whole job: preflight, attach, wait for the end, report. Returns the exit code.
#pragma once

#include "cli/options.h"

namespace jmt {

int run(const Options &options);

}  // namespace jmt
