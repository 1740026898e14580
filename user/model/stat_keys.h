// The per-method values a report carries, by their key (JSON key, CSV column),
// written once for the JSON writer and reader and the CSV writer: the fields
// of the kernel's record (JMT_METHOD_STATS, checked below at compile time) and
// the blocked times derived from them. Times in ns.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/profile.h"

namespace jmt {

struct StatKey {
    const char *key;
    uint64_t MethodStats::*field;              // nullptr: derived, never read back
    uint64_t (*derived)(const MethodStats &);  // the derived value (field == nullptr)
    bool foreign;                              // --foreign only
    bool path;                                 // a call path carries it too (JSON "paths")
};

// In the CSV's order: the --foreign keys come last.
inline constexpr StatKey kStatKeys[] = {
    {"calls", &MethodStats::calls, nullptr, false, true},
    {"wall_incl_ns", &MethodStats::wall_incl_ns, nullptr, false, true},
    {"wall_excl_ns", &MethodStats::wall_excl_ns, nullptr, false, true},
    {"cpu_incl_ns", &MethodStats::cpu_incl_ns, nullptr, false, true},
    {"cpu_excl_ns", &MethodStats::cpu_excl_ns, nullptr, false, true},
    {"runq_incl_ns", &MethodStats::runq_incl_ns, nullptr, false, true},
    {"runq_excl_ns", &MethodStats::runq_excl_ns, nullptr, false, true},
    {"blocked_incl_ns", nullptr, blocked_incl_ns, false, false},
    {"blocked_excl_ns", nullptr, blocked_excl_ns, false, false},
    {"unreturned", &MethodStats::unreturned, nullptr, false, false},
    {"events_incl", &MethodStats::events_incl, nullptr, false, false},
    {"events_excl", &MethodStats::events_excl, nullptr, false, false},
    {"traced_events_incl", &MethodStats::traced_incl, nullptr, false, false},
    {"traced_events_excl", &MethodStats::traced_excl, nullptr, false, false},
    {"pinned", &MethodStats::pinned, nullptr, false, false},
    {"pinned_ns", &MethodStats::pinned_ns, nullptr, false, false},
    {"pinned_monitor", &MethodStats::pinned_monitor, nullptr, false, false},
    {"wall_foreign_ns", &MethodStats::wall_foreign_ns, nullptr, true, false},
    {"cpu_foreign_ns", &MethodStats::cpu_foreign_ns, nullptr, true, false},
    {"events_foreign", &MethodStats::events_foreign, nullptr, true, false},
    {"traced_events_foreign", &MethodStats::traced_foreign, nullptr, true, false},
};

// The contract with the kernel's record, kept by the build: every field of
// JMT_METHOD_STATS has exactly one key here, and no key reads anything else.
constexpr int keys_reading(uint64_t MethodStats::*field)
{
    int n = 0;
    for (const StatKey &k : kStatKeys)
        n += k.field == field;
    return n;
}

constexpr int fields_keyed()
{
    int n = 0;
    for (const StatKey &k : kStatKeys)
        n += k.field != nullptr;
    return n;
}

#define JMT_ONE_KEY(name)                                                                                              \
    static_assert(keys_reading(&MethodStats::name) == 1, "kStatKeys: one key for MethodStats::" #name);
JMT_METHOD_STATS(JMT_ONE_KEY, JMT_ONE_KEY, JMT_ONE_KEY)
#undef JMT_ONE_KEY
#define JMT_COUNT_FIELD(name) +1
static_assert(fields_keyed() == 0 JMT_METHOD_STATS(JMT_COUNT_FIELD, JMT_COUNT_FIELD, JMT_COUNT_FIELD),
              "kStatKeys: a key per field of JMT_METHOD_STATS, and no other field");
#undef JMT_COUNT_FIELD

inline uint64_t stat_value(const MethodStats &s, const StatKey &k) { return k.field ? s.*k.field : k.derived(s); }

// The corrected times that carry bounds ([lo, hi] in ns, TimeBounds), by their
// key: a method's JSON "bounds" and the CSV's <key>_lo and <key>_hi columns, in
// the CSV's order (the --foreign keys last). Each is a key of kStatKeys.
struct BoundKey {
    const char *key;
    uint64_t (TimeBounds::*field)[2];
    bool foreign;  // --foreign only
};

inline constexpr BoundKey kBoundKeys[] = {
    {"wall_incl_ns", &TimeBounds::wall_incl_ns, false},      {"wall_excl_ns", &TimeBounds::wall_excl_ns, false},
    {"cpu_incl_ns", &TimeBounds::cpu_incl_ns, false},        {"cpu_excl_ns", &TimeBounds::cpu_excl_ns, false},
    {"wall_foreign_ns", &TimeBounds::wall_foreign_ns, true}, {"cpu_foreign_ns", &TimeBounds::cpu_foreign_ns, true},
};

constexpr bool same_key(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

constexpr bool bound_keys_are_stat_keys()
{
    for (const BoundKey &b : kBoundKeys) {
        bool found = false;
        for (const StatKey &k : kStatKeys)
            found = found || (same_key(b.key, k.key) && b.foreign == k.foreign);
        if (!found)
            return false;
    }
    return true;
}
static_assert(bound_keys_are_stat_keys(), "kBoundKeys: each a key of kStatKeys, --foreign alike");

}  // namespace jmt
