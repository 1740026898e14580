#include "model/diff.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <tuple>

namespace jmt {

double per_call(uint64_t total_ns, uint64_t calls)
{
    return calls ? static_cast<double>(total_ns) / static_cast<double>(calls) : 0.0;
}

namespace {

using MethodKey = std::tuple<std::string, std::string, std::string>;

double distance(const DiffRow &r)
{
    if (!r.base || !r.now)
        return std::numeric_limits<double>::infinity();
    return std::fabs(std::log1p(std::max(r.change, -1.0 + 1e-12)));
}

}  // namespace

std::vector<DiffRow> diff_methods(const std::vector<MethodRow> &base, const std::vector<MethodRow> &now)
{
    std::map<MethodKey, DiffRow> rows;
    auto add = [&rows](const std::vector<MethodRow> &side, bool is_base) {
        for (const MethodRow &r : side) {
            if (r.stats.calls == 0)
                continue;
            DiffRow &d = rows[MethodKey{r.klass, r.method, r.signature}];
            d.klass = r.klass;
            d.method = r.method;
            d.signature = r.signature;
            std::optional<MethodStats> &s = is_base ? d.base : d.now;
            if (!s)
                s = MethodStats{};
            *s += r.stats;
        }
    };
    add(base, true);
    add(now, false);
    std::vector<DiffRow> out;
    for (auto &[key, d] : rows) {
        if (d.base && d.now) {
            const double b = per_call(d.base->wall_excl_ns, d.base->calls);
            const double n = per_call(d.now->wall_excl_ns, d.now->calls);
            d.change = b > 0 ? n / b - 1 : (n > 0 ? std::numeric_limits<double>::infinity() : 0);
        } else {
            d.change = d.now ? std::numeric_limits<double>::infinity() : -1;
        }
        if (d.base && d.now && d.base->latency.calls() >= kP99MinCalls && d.now->latency.calls() >= kP99MinCalls) {
            const uint32_t b = jmt_lat_bucket(d.base->latency.percentile_ns(0.99));
            const uint32_t n = jmt_lat_bucket(d.now->latency.percentile_ns(0.99));
            d.p99_moved = (b > n ? b - n : n - b) >= kP99MovedBuckets;
        }
        out.push_back(std::move(d));
    }
    std::stable_sort(out.begin(), out.end(), [](const DiffRow &a, const DiffRow &b) {
        const double da = distance(a), db = distance(b);
        if (da != db)
            return da > db;
        return std::tie(a.klass, a.method, a.signature) < std::tie(b.klass, b.method, b.signature);
    });
    return out;
}

std::map<std::string, uint64_t> folded_values(const CallTree &tree, PathMetric metric)
{
    std::map<std::string, uint64_t> out;
    const PathIndex index(tree);
    for (const PathNode &node : tree.nodes) {
        const uint64_t v = exclusive_value(node, metric);
        if (v == 0)
            continue;
        std::string stack;
        const std::vector<const PathNode *> chain = index.chain(node);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it)
            stack += (stack.empty() ? "" : ";") + frame_label(**it);
        out[stack] += v;
    }
    return out;
}

std::string architecture_difference(const Profile &base, const Profile &now, const std::string &base_file,
                                    const std::string &new_file)
{
    const std::string a = architectures(base.sources), b = architectures(now.sources);
    if (a.empty() || b.empty() || a == b)
        return "";
    return base_file + " comes from " + a + " and " + new_file + " from " + b +
           ": counts compare, times per call compare the machines too";
}

}  // namespace jmt
