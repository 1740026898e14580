// Wall-clock times as text.
#pragma once

#include <cstdint>
#include <string>

namespace jmt {

// "2026-11-21T20:51:03.123Z": ns since the epoch as UTC, millisecond precision.
std::string format_utc(uint64_t unix_ns);

}  // namespace jmt
