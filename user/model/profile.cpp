#include "model/profile.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>

namespace jmt {

std::string qualified_name(const MethodRow &r)
{
    return r.klass + "." + r.method + r.signature;
}

MethodStats &MethodStats::operator+=(const MethodStats &o)
{
#define JMT_PLUS(name) name += o.name;
    JMT_METHOD_STATS(JMT_PLUS, JMT_PLUS, JMT_PLUS)
#undef JMT_PLUS
    return *this;
}

MethodStats &MethodStats::operator-=(const MethodStats &o)
{
    auto minus = [](uint64_t &a, uint64_t b) { a = a > b ? a - b : 0; };
#define JMT_MINUS(name) minus(name, o.name);
    JMT_METHOD_STATS(JMT_MINUS, JMT_MINUS, JMT_MINUS)
#undef JMT_MINUS
    return *this;
}

namespace {

// ns the events inside a frame (traced of them traced) added to it.
uint64_t events_cost_ns(uint64_t events, uint64_t traced, const ProbeCost &cost)
{
    const uint64_t rejected = events > traced ? events - traced : 0;
    return traced * cost.traced_event_ns + rejected * cost.rejected_event_ns;
}

}  // namespace

MethodStats without_probe_cost(const MethodStats &stats, const ProbeCost &cost)
{
    auto minus = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
    const uint64_t incl = events_cost_ns(stats.events_incl, stats.traced_incl, cost);
    const uint64_t excl = events_cost_ns(stats.events_excl, stats.traced_excl, cost);
    MethodStats out = stats;
    out.wall_incl_ns = minus(stats.wall_incl_ns, incl);
    out.cpu_incl_ns = minus(stats.cpu_incl_ns, incl);
    out.wall_excl_ns = minus(stats.wall_excl_ns, excl);
    out.cpu_excl_ns = minus(stats.cpu_excl_ns, excl);
    // Within the corrected exclusive times, as the measured ones are.
    const uint64_t foreign = events_cost_ns(stats.events_foreign, stats.traced_foreign, cost);
    out.wall_foreign_ns = std::min(minus(stats.wall_foreign_ns, foreign), out.wall_excl_ns);
    out.cpu_foreign_ns = std::min(minus(stats.cpu_foreign_ns, foreign), out.cpu_excl_ns);
    return out;
}

namespace {

// Both costs times scale, rounded down (so a row that fits the scale fits the cost).
ProbeCost scaled_cost(const ProbeCost &cost, double scale)
{
    return {static_cast<uint64_t>(static_cast<double>(cost.traced_event_ns) * scale),
            static_cast<uint64_t>(static_cast<double>(cost.rejected_event_ns) * scale)};
}

// ns per call of a one-event leaf row (see CostBound), or nullopt.
std::optional<double> leaf_ns(const MethodStats &s)
{
    if (s.calls < kMinLeafCalls || s.events_incl != s.calls || s.events_excl != s.calls ||
        s.traced_excl != s.calls)
        return std::nullopt;
    return static_cast<double>(std::min(s.wall_excl_ns, s.cpu_excl_ns)) / static_cast<double>(s.calls);
}

}  // namespace

CostBound bounded_probe_cost(const std::vector<MethodRow> &rows, const ProbeCost &calibrated)
{
    CostBound bound;
    bound.cost = calibrated;
    if (calibrated.traced_event_ns == 0)
        return bound;
    size_t leaves = 0;
    double cheapest = 0;
    const MethodRow *cheapest_row = nullptr;
    for (const MethodRow &r : rows) {
        const std::optional<double> ns = leaf_ns(r.stats);
        if (!ns)
            continue;
        leaves++;
        if (!cheapest_row || *ns < cheapest) {
            cheapest = *ns;
            cheapest_row = &r;
        }
    }
    const double leaf_scale = cheapest / static_cast<double>(calibrated.traced_event_ns);
    if (leaves >= kMinLeafRows && leaf_scale <= kMaxLeafFactor && leaf_scale >= 1 / kMaxLeafFactor) {
        bound.scale = leaf_scale;
        bound.source = CostSource::Leaves;
        bound.method = qualified_name(*cheapest_row);
    }
    const double base = bound.scale;  // the scale the rows are checked at
    const ProbeCost scaled = scaled_cost(calibrated, base);
    for (const MethodRow &r : rows) {
        const MethodStats &s = r.stats;
        if (s.events_excl < kMinBoundEvents)
            continue;
        const uint64_t cost = events_cost_ns(s.events_excl, s.traced_excl, scaled);
        const uint64_t measured = std::min(s.wall_excl_ns, s.cpu_excl_ns);
        if (cost == 0 || measured >= cost)
            continue;
        const double scale = static_cast<double>(measured) / static_cast<double>(cost) * base;
        if (scale < bound.scale) {
            bound.scale = scale;
            bound.source = CostSource::Bounded;
            bound.method = qualified_name(r);
        }
    }
    // Rounded down: every row that set or passed the bound still fits it.
    bound.cost = scaled_cost(calibrated, bound.scale);
    return bound;
}

namespace {

double interquartile_mean(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t cut = v.size() >= 4 ? v.size() / 4 : 0;
    double sum = 0;
    for (size_t i = cut; i < v.size() - cut; i++)
        sum += v[i];
    return sum / static_cast<double>(v.size() - 2 * cut);
}

}  // namespace

CostEstimate estimate_probe_cost(const std::vector<CostSample> &samples, uint64_t from_ns, uint64_t to_ns)
{
    std::vector<double> traced, rejected;
    auto take = [&](bool window_only) {
        traced.clear();
        rejected.clear();
        for (const CostSample &s : samples) {
            if (window_only && (s.at_ns < from_ns || s.at_ns > to_ns))
                continue;
            traced.push_back(s.traced_event_ns);
            rejected.push_back(s.rejected_event_ns);
        }
    };
    take(true);
    if (traced.size() < kMinWindowSamples)
        take(false);
    CostEstimate e;
    e.samples = traced.size();
    if (traced.empty())
        return e;
    auto whole_ns = [](double ns) { return static_cast<uint64_t>(std::llround(std::max(0.0, ns))); };
    e.cost.traced_event_ns = whole_ns(interquartile_mean(traced));
    e.cost.rejected_event_ns = whole_ns(interquartile_mean(rejected));
    return e;
}

OverheadTotals event_totals(uint64_t entries, uint64_t returns, uint64_t traced_calls)
{
    OverheadTotals t;
    t.events = entries + returns;
    t.traced_events = 2 * traced_calls;
    return t;
}

Overhead overhead_since(const OverheadTotals &now, const OverheadTotals &then)
{
    Overhead o;
    o.events = now.events - then.events;
    o.traced_events = now.traced_events - then.traced_events;
    if (now.jvm_cpu_ns && then.jvm_cpu_ns && *now.jvm_cpu_ns >= *then.jvm_cpu_ns)
        o.jvm_cpu_ns = *now.jvm_cpu_ns - *then.jvm_cpu_ns;
    return o;
}

uint64_t overhead_ns(const Overhead &overhead, const ProbeCost &cost)
{
    const uint64_t traced = std::min(overhead.traced_events, overhead.events);
    return traced * cost.traced_event_ns + (overhead.events - traced) * cost.rejected_event_ns;
}

std::optional<double> trap_share(const Overhead &overhead, const ProbeCost &cost)
{
    const uint64_t trap_ns = overhead_ns(overhead, cost);
    if (overhead.jvm_cpu_ns == 0 || trap_ns == 0)
        return std::nullopt;
    return static_cast<double>(trap_ns) / static_cast<double>(overhead.jvm_cpu_ns);
}

bool probe_dominated(const MethodStats &raw, const ProbeCost &cost)
{
    const uint64_t incl = events_cost_ns(raw.events_incl, raw.traced_incl, cost);
    using wide = unsigned __int128;  // ns sums can exceed 2^64 / 4
    // Against the smaller of elapsed and on-CPU time: each trap is on-CPU time, and a
    // thread waiting for a CPU (or the network) stretches only the elapsed time.
    const uint64_t measured = std::min(raw.wall_incl_ns, raw.cpu_incl_ns);
    return incl > 0 && static_cast<wide>(incl) * 2 > static_cast<wide>(measured);
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
    }
    return 0;
}

// The identity of a row: its method (overloads, same class and name, are
// distinct) and its thread (0 when rows are not split by thread).
using RowKey = std::tuple<std::string, std::string, std::string, uint32_t>;
auto row_key(const MethodRow &r) { return std::tie(r.klass, r.method, r.signature, r.tid); }

}  // namespace

bool per_thread_rows(const std::vector<MethodRow> &rows)
{
    return std::any_of(rows.begin(), rows.end(), [](const MethodRow &r) { return r.tid != 0; });
}

bool per_thread_profile(const Profile &profile)
{
    return profile.per_thread || per_thread_rows(profile.methods);
}

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

ProbeCost likely_cost(const CostRange &range)
{
    return {range.lo.traced_event_ns + (range.hi.traced_event_ns - range.lo.traced_event_ns) / 10,
            range.lo.rejected_event_ns + (range.hi.rejected_event_ns - range.lo.rejected_event_ns) / 10};
}

ProbeCost trap_cost(const Profile &profile)
{
    return profile.corrected ? profile.probe_cost : likely_cost(profile.cost_range);
}

}  // namespace jmt
