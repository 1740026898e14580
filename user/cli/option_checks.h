// Strict checks of the numeric option values: each bad value gets one line
// naming the option, the value and what is expected.
#pragma once

#include <cstdint>
#include <string>

namespace jmt {

// What one numeric option accepts. The value is a plain decimal number: no
// sign, no spaces, no suffix ("5x"), no "inf" or "nan", no hex.
struct NumberRule {
    const char *option;   // "--pid", for the message
    const char *expects;  // "a process id (a whole number from 1 to 4194304)"
    bool integer;         // digits only, no point or exponent
    double min;           // inclusive bounds
    double max;
    bool min_exclusive = false;  // min itself is not allowed (a positive duration)
};

// The rules of jmethodtime's numeric options.
extern const NumberRule kPidRule;          // -p,--pid
extern const NumberRule kDurationRule;     // -d,--duration
extern const NumberRule kIntervalRule;     // -i,--interval
extern const NumberRule kTopRule;          // --top
extern const NumberRule kMaxOverheadRule;  // --max-overhead
extern const NumberRule kMinPercentRule;   // --min-percent
extern const NumberRule kMaxPathsRule;     // --max-paths
extern const NumberRule kMinCallsRule;     // --min-calls
extern const NumberRule kSettleRule;       // --settle
extern const NumberRule kSlowCallsRule;    // --slow-calls

// "--pid: 'abc' is not a process id (a whole number from 1 to 4194304)": the
// one line (without "jmethodtime: " and newline) for a bad value.
std::string bad_value_message(const NumberRule &rule, const std::string &value);

// The value, checked against rule; throws std::invalid_argument with
// bad_value_message otherwise.
double checked_number(const NumberRule &rule, const std::string &value);
// Integer rules only: the exact value (no rounding through double above 2^53).
uint64_t checked_integer(const NumberRule &rule, const std::string &value);

}  // namespace jmt
