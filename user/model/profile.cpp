#include "model/profile.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>

namespace jmt {

std::string qualified_name(const MethodRow &r) { return r.klass + "." + r.method + r.signature; }

double cpu_per_io_call(const JvmWork &work)
{
    return work.io_calls ? static_cast<double>(work.cpu_ns) / static_cast<double>(work.io_calls) : 0;
}

MethodStats &MethodStats::operator+=(const MethodStats &o)
{
#define JMT_PLUS(name) name += o.name;
    JMT_METHOD_STATS(JMT_PLUS, JMT_PLUS, JMT_PLUS)
#undef JMT_PLUS
    latency += o.latency;
    return *this;
}

MethodStats &MethodStats::operator-=(const MethodStats &o)
{
    auto minus = [](uint64_t &a, uint64_t b) { a = a > b ? a - b : 0; };
#define JMT_MINUS(name) minus(name, o.name);
    JMT_METHOD_STATS(JMT_MINUS, JMT_MINUS, JMT_MINUS)
#undef JMT_MINUS
    latency -= o.latency;
    return *this;
}

uint64_t blocked_incl_ns(const MethodStats &s)
{
    const uint64_t on_or_waiting = s.cpu_incl_ns + s.runq_incl_ns;
    return s.wall_incl_ns > on_or_waiting ? s.wall_incl_ns - on_or_waiting : 0;
}

uint64_t blocked_excl_ns(const MethodStats &s)
{
    const uint64_t on_or_waiting = s.cpu_excl_ns + s.runq_excl_ns;
    return s.wall_excl_ns > on_or_waiting ? s.wall_excl_ns - on_or_waiting : 0;
}

OverheadTotals event_totals(uint64_t entries, uint64_t returns, uint64_t traced_calls)
{
    OverheadTotals t;
    t.events = entries + returns;
    t.traced_events = 2 * traced_calls;
    return t;
}

namespace {

uint64_t sort_value(const MethodStats &s, SortKey key)
{
    switch (key) {
    case SortKey::Calls: return s.calls;
    case SortKey::Incl: return s.wall_incl_ns;
    case SortKey::Excl: return s.wall_excl_ns;
    case SortKey::CpuIncl: return s.cpu_incl_ns;
    case SortKey::CpuExcl: return s.cpu_excl_ns;
    case SortKey::Foreign: return s.wall_foreign_ns;
    case SortKey::RunqIncl: return s.runq_incl_ns;
    case SortKey::RunqExcl: return s.runq_excl_ns;
    case SortKey::BlockedIncl: return blocked_incl_ns(s);
    case SortKey::BlockedExcl: return blocked_excl_ns(s);
    }
    return 0;
}

// The identity of a row: its method (overloads, same class and name, are
// distinct), its thread (0 when rows are not split by thread) and its JVM (0 when
// rows are not split by JVM).
using RowKey = std::tuple<std::string, std::string, std::string, uint64_t, int>;
RowKey row_key(const MethodRow &r) { return RowKey{r.klass, r.method, r.signature, row_thread(r), r.pid}; }

}  // namespace

uint64_t row_thread(const MethodRow &r) { return r.vthread ? (r.vthread | 1ULL << 63) : r.tid; }

bool per_thread_rows(const std::vector<MethodRow> &rows)
{
    return std::any_of(rows.begin(), rows.end(), [](const MethodRow &r) { return row_thread(r) != 0; });
}

bool per_jvm_rows(const std::vector<MethodRow> &rows)
{
    return std::any_of(rows.begin(), rows.end(), [](const MethodRow &r) { return r.pid != 0; });
}

bool per_thread_profile(const Profile &profile) { return profile.per_thread || per_thread_rows(profile.methods); }

// Total order for distinct (name, tid); rows equal in key, name and tid keep their input order.
std::vector<MethodRow> sorted_rows(const std::vector<MethodRow> &rows, SortKey key)
{
    std::vector<MethodRow> out = rows;
    std::stable_sort(out.begin(), out.end(), [key](const MethodRow &a, const MethodRow &b) {
        uint64_t va = sort_value(a.stats, key), vb = sort_value(b.stats, key);
        if (va != vb)
            return va > vb;
        return row_key(a) < row_key(b);
    });
    return out;
}

// Output order is first-seen order of each (class, method, signature, tid);
// each output row's stats are the sum of all its input rows.
std::vector<MethodRow> merge_rows(const std::vector<MethodRow> &rows)
{
    std::vector<MethodRow> out;
    std::map<RowKey, size_t> index;
    for (const auto &r : rows) {
        auto it = index.find(row_key(r));
        if (it == index.end()) {
            index.emplace(row_key(r), out.size());
            out.push_back(r);
        } else {
            out[it->second].stats += r.stats;
        }
    }
    return out;
}

std::vector<MethodRow> jvm_rows(std::vector<MethodRow> rows, bool per_jvm)
{
    if (per_jvm)
        return rows;
    for (MethodRow &r : rows)
        r.pid = 0;
    return merge_rows(rows);
}

std::vector<MethodRow> rows_since(const std::vector<MethodRow> &now, const std::vector<MethodRow> &before)
{
    std::map<RowKey, const MethodStats *> earlier;
    for (const MethodRow &r : before)
        earlier.emplace(row_key(r), &r.stats);
    std::vector<MethodRow> out;
    for (const MethodRow &r : now) {
        MethodRow delta = r;
        auto it = earlier.find(row_key(r));
        if (it != earlier.end())
            delta.stats -= *it->second;
        if (delta.stats.calls > 0)
            out.push_back(std::move(delta));
    }
    return out;
}

std::vector<MethodRow> rows_with_min_calls(const std::vector<MethodRow> &rows, uint64_t min_calls)
{
    std::vector<MethodRow> out;
    std::copy_if(rows.begin(), rows.end(), std::back_inserter(out),
                 [&](const MethodRow &r) { return r.stats.calls >= min_calls; });
    return out;
}

}  // namespace jmt
