#include "model/source.h"

#include <set>

namespace jmt {

std::string source_text(const ReportSource &s)
{
    return (s.hostname.empty() ? std::string("?") : s.hostname) + " (pid " + std::to_string(s.pid) + ")";
}

std::string architectures(const std::vector<ReportSource> &sources)
{
    std::set<std::string> seen;
    for (const ReportSource &s : sources)
        if (!s.arch.empty())
            seen.insert(s.arch);
    std::string out;
    for (const std::string &a : seen)
        out += (out.empty() ? "" : ", ") + a;
    return out;
}

}  // namespace jmt
