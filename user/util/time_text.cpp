#include "util/time_text.h"

#include <cstdio>
#include <ctime>

namespace jmt {

std::string format_utc(uint64_t unix_ns)
{
    constexpr uint64_t kNsPerS = 1000 * 1000 * 1000, kNsPerMs = 1000 * 1000, kMsPerS = 1000;
    const time_t secs = static_cast<time_t>(unix_ns / kNsPerS);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char buf[48];
    const size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof(buf) - n, ".%03uZ", static_cast<unsigned>(unix_ns / kNsPerMs % kMsPerS));
    return buf;
}

}  // namespace jmt
