// The report's header facts in a few lines for stderr, when the report itself
// goes to a file or a pipe: the terminal then still says what was traced.
#pragma once

#include <string>
#include <vector>

#include "model/profile.h"

namespace jmt {

// Lines (no newlines) from the profile as reported (probe cost decided, rows
// filtered): what was traced and for how long (traced_text); the probe events
// and the trap share (overhead_text), when there were events; the methods and
// calls, or why there are none (nothing_traced_text); the non-zero diagnostic
// counters in one line.
std::vector<std::string> summary_lines(const Profile &profile);

// Whether the summary is wanted: the report goes to a file (-o) or standard
// output is not a terminal.
bool summary_wanted(bool report_to_file, bool stdout_is_terminal);

}  // namespace jmt
