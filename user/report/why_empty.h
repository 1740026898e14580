// Why a report has no rows: from the kernel's counts of methods seen and of
// the methods each filter stage rejected (--package, then --class, then
// --method; they combine with AND), the stage that removed everything, with
// examples of names it saw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/profile.h"

namespace jmt {

struct NothingTraced {
    // The option that removed every method: "--package", "--class",
    // "--method", "--class and --method"; empty when no filter did.
    std::string filter;
    std::string reason;                 // one line, what to do included
    uint64_t methods_seen = 0;          // methods met (first sights) during the trace
    uint64_t rejected_classes = 0;      // classes --package let through that --class/--method rejected
    std::vector<std::string> examples;  // names the removing filter saw ("org/x/Foo", "org/x/Foo.bar")
};

// Why profile (a whole trace's report, not an interval's) has no rows;
// nullopt when it has rows, or is an interval's.
std::optional<NothingTraced> why_nothing_traced(const Profile &profile);

}  // namespace jmt
