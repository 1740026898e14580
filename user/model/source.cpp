#include "model/source.h"

namespace jmt {

std::string source_text(const ReportSource &s)
{
    return (s.hostname.empty() ? std::string("?") : s.hostname) + " (pid " + std::to_string(s.pid) + ")";
}

}  // namespace jmt
