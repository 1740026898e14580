#include "cli/option_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "jmethodtime.h"

namespace jmt {

namespace {

constexpr double kU64Max = static_cast<double>(std::numeric_limits<uint64_t>::max());

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Digits, an optional point with digits, an optional exponent: what strtod
// reads of a plain decimal number, and nothing else ("inf", "0x1p3", " 5", "+5", "5x" are not).
bool plain_decimal(const std::string &s, bool integer)
{
    size_t i = 0, digits = 0;
    while (i < s.size() && is_digit(s[i]))
        i++, digits++;
    if (integer)
        return digits > 0 && i == s.size();
    if (i < s.size() && s[i] == '.') {
        i++;
        while (i < s.size() && is_digit(s[i]))
            i++, digits++;
    }
    if (digits == 0)
        return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t exp_digits = 0;
        while (i < s.size() && is_digit(s[i]))
            i++, exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == s.size();
}

}  // namespace

const NumberRule kPidRule{"--pid", "a process id (a positive integer up to 4194303)", true, 1, 4194303};
const NumberRule kDurationRule{"--duration",
                               "a number of seconds above 0 and at most 1e9 (without -d the trace runs until "
                               "Ctrl-C, SIGTERM or the JVM's exit)",
                               false,
                               0,
                               1e9,
                               true};
const NumberRule kIntervalRule{"--interval", "a number of seconds from 0.1 to 1e9", false, 0.1, 1e9};
const NumberRule kTopRule{"--top", "a number of rows (an integer, 0 for all)", true, 0, kU64Max};
const NumberRule kMaxOverheadRule{"--max-overhead", "a percentage from 1 to 100", false, 1, 100};
const NumberRule kMinPercentRule{"--min-percent", "a percentage from 0 to 100", false, 0, 100};
const NumberRule kMaxPathsRule{"--max-paths", "a number of call paths (an integer from 1 to 65534)", true, 1,
                               JMT_MAX_PATHS - 2};
const NumberRule kMinCallsRule{"--min-calls", "a number of calls (an integer, 0 for every method)", true, 0, kU64Max};
const NumberRule kSettleRule = {"--settle", "a number of seconds from 0 to 3600", false, 0, 3600};
const NumberRule kSlowCallsRule{"--slow-calls", "a number of calls (an integer from 0 to 100000)", true, 0, 100000};

std::string bad_value_message(const NumberRule &rule, const std::string &value)
{
    return std::string(rule.option) + ": '" + value + "' is not " + rule.expects;
}

double checked_number(const NumberRule &rule, const std::string &value)
{
    if (rule.integer)
        return static_cast<double>(checked_integer(rule, value));
    if (!plain_decimal(value, false))
        throw std::invalid_argument(bad_value_message(rule, value));
    errno = 0;
    const double v = std::strtod(value.c_str(), nullptr);
    // ERANGE: overflow to HUGE_VAL, or an underflow that is below every rule's bounds anyway.
    if (errno == ERANGE || !std::isfinite(v) || v < rule.min || v > rule.max || (rule.min_exclusive && v == rule.min))
        throw std::invalid_argument(bad_value_message(rule, value));
    return v;
}

uint64_t checked_integer(const NumberRule &rule, const std::string &value)
{
    if (!rule.integer || !plain_decimal(value, true))
        throw std::invalid_argument(bad_value_message(rule, value));
    errno = 0;
    const unsigned long long v = std::strtoull(value.c_str(), nullptr, 10);
    if (errno == ERANGE || static_cast<double>(v) < rule.min || (rule.max<kU64Max &&static_cast<double>(v)> rule.max) ||
        (rule.min_exclusive && static_cast<double>(v) == rule.min))
        throw std::invalid_argument(bad_value_message(rule, value));
    return v;
}

}  // namespace jmt
