#include "model/slow_calls.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "util/error.h"

namespace jmt {

void keep_slowest(std::vector<SlowCall> &calls, size_t kept, uint64_t &dropped)
{
    std::stable_sort(calls.begin(), calls.end(),
                     [](const SlowCall &a, const SlowCall &b) { return a.wall_ns > b.wall_ns; });
    if (calls.size() > kept) {
        dropped += calls.size() - kept;
        calls.resize(kept);
    }
}

uint64_t parse_duration_ns(const std::string &text)
{
    const char *begin = text.c_str();
    char *end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    const std::string unit(end ? end : "");
    double scale = 0;
    if (unit.empty() || unit == "ms")
        scale = 1e6;
    else if (unit == "s")
        scale = 1e9;
    else if (unit == "us")
        scale = 1e3;
    else if (unit == "ns")
        scale = 1;
    const double ns = value * scale;
    if (end == begin || errno || scale == 0 || !std::isfinite(ns) || ns < 1 || ns > 1e18)
        throw Error("'" + text + "' is not a duration such as 20ms, 500us, 1.5s or 800ns", EINVAL);
    return static_cast<uint64_t>(std::llround(ns));
}

}  // namespace jmt
