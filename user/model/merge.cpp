#include "model/merge.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace jmt {

namespace {

using MethodKey = std::tuple<std::string, std::string, std::string>;
using RowKey = std::tuple<std::string, std::string, std::string, uint64_t>;
// A path node's identity along its path: synthetic kind, class, method, signature.
using FrameKey = std::tuple<bool, bool, std::string, std::string, std::string>;

void add_bounds(TimeBounds &to, const TimeBounds &b)
{
    for (int i = 0; i < 2; i++) {
        to.wall_incl_ns[i] += b.wall_incl_ns[i];
        to.wall_excl_ns[i] += b.wall_excl_ns[i];
        to.cpu_incl_ns[i] += b.cpu_incl_ns[i];
        to.cpu_excl_ns[i] += b.cpu_excl_ns[i];
        to.wall_foreign_ns[i] += b.wall_foreign_ns[i];
        to.cpu_foreign_ns[i] += b.cpu_foreign_ns[i];
    }
    to.wider_than_correction = to.wider_than_correction || b.wider_than_correction;
}

void add_diagnostics(Diagnostics &to, const Diagnostics &d)
{
#define JMT_SUM_DIAG(name) to.name += d.name;
#define JMT_SUM_DIAG_KERNEL(NAME, name) JMT_SUM_DIAG(name)
#define JMT_SUM_DIAG_USER(name) JMT_SUM_DIAG(name)
    JMT_DIAGNOSTICS(JMT_SUM_DIAG_KERNEL, JMT_SUM_DIAG_USER)
#undef JMT_SUM_DIAG
#undef JMT_SUM_DIAG_KERNEL
#undef JMT_SUM_DIAG_USER
}

std::string join(const std::vector<std::string> &v)
{
    std::string s;
    for (const std::string &x : v)
        s += (s.empty() ? "" : ", ") + x;
    return s;
}

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string input_label(const MergeInput &input)
{
    std::string s;
    for (const ReportSource &src : input.profile.sources)
        s += (s.empty() ? "" : ", ") + source_text(src);
    return s.empty() ? input.file : s;
}

CallTree merge_trees(const std::vector<const CallTree *> &trees)
{
    CallTree out;
    std::map<std::pair<uint32_t, FrameKey>, size_t> index;  // (merged parent id, frame) -> node
    for (const CallTree *tree : trees) {
        if (!tree)
            continue;
        out.truncated_calls += tree->truncated_calls;
        const PathIndex paths(*tree);
        for (const PathNode &node : tree->nodes) {
            std::vector<const PathNode *> chain = paths.chain(node);
            uint32_t parent = 0;
            size_t at = 0;
            for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
                const PathNode &f = **it;
                FrameKey key{f.truncated, f.untraced, f.klass, f.method, f.signature};
                auto found = index.find({parent, key});
                if (found == index.end()) {
                    PathNode n = f;
                    n.id = static_cast<uint32_t>(out.nodes.size() + 1);
                    n.parent = parent;
                    n.stats = MethodStats{};
                    found = index.emplace(std::make_pair(parent, key), out.nodes.size()).first;
                    out.nodes.push_back(std::move(n));
                }
                at = found->second;
                parent = out.nodes[at].id;
            }
            if (!chain.empty())
                out.nodes[at].stats += node.stats;
        }
    }
    return out;
}

std::vector<MethodRow> sum_rows(const std::vector<MethodRow> &rows)
{
    std::vector<MethodRow> out;
    std::map<RowKey, size_t> index;
    for (const MethodRow &r : rows) {
        auto [it, added] = index.emplace(RowKey{r.klass, r.method, r.signature, row_thread(r)}, out.size());
        if (added) {
            out.push_back(r);
            continue;
        }
        MethodRow &to = out[it->second];
        to.stats += r.stats;
        add_bounds(to.bounds, r.bounds);
        to.probe_dominated = to.probe_dominated || r.probe_dominated;
        if (to.thread.empty())
            to.thread = r.thread;
    }
    return out;
}

std::vector<std::string> merge_differences(const std::vector<MergeInput> &inputs)
{
    std::vector<std::string> lines;
    auto check = [&](const std::string &what, auto value_of) {
        std::map<std::string, std::vector<std::string>> files_by_value;
        std::vector<std::string> order;
        for (const MergeInput &in : inputs) {
            const std::string v = value_of(in.profile);
            if (!files_by_value.count(v))
                order.push_back(v);
            files_by_value[v].push_back(in.file);
        }
        if (order.size() < 2)
            return;
        std::string line = "the reports were made with different " + what + ": ";
        for (size_t i = 0; i < order.size(); i++)
            line += (i ? "; " : "") + order[i] + " (" + join(files_by_value[order[i]]) + ")";
        lines.push_back(line);
    };
    check("filters", [](const Profile &p) {
        std::string s;
        auto add = [&s](const char *name, const std::vector<std::string> &v) {
            if (!v.empty())
                s += (s.empty() ? "" : "; ") + std::string(name) + " " + join(v);
        };
        add("package", p.packages);
        add("class", p.class_globs);
        add("method", p.method_globs);
        return s.empty() ? std::string("all methods") : s;
    });
    // Counts add up across machines; times per call also compare the machines. Reports
    // that do not name theirs (written before "arch") agree with any.
    std::map<std::string, std::vector<std::string>> files_by_arch;
    for (const MergeInput &in : inputs) {
        const std::string a = architectures(in.profile.sources);
        if (!a.empty())
            files_by_arch[a].push_back(in.file);
    }
    if (files_by_arch.size() > 1) {
        std::string line = "the reports come from different architectures (their times per call also compare the "
                           "machines): ";
        bool first = true;
        for (const auto &[arch, files] : files_by_arch) {
            line += (first ? "" : "; ") + arch + " (" + join(files) + ")";
            first = false;
        }
        lines.push_back(line);
    }
    check("probe-cost modes",
          [](const Profile &p) { return std::string(p.corrected ? "times corrected" : "times as measured (--raw)"); });
    check("--foreign settings",
          [](const Profile &p) { return std::string(p.foreign ? "--foreign" : "without --foreign"); });
    check("row splits", [](const Profile &p) { return std::string(p.per_thread ? "--per-thread" : "not per thread"); });
    return lines;
}

Profile merge_profiles(const std::vector<MergeInput> &inputs)
{
    Profile out;
    if (inputs.empty())
        return out;
    const Profile &first = inputs.front().profile;
    out.packages = first.packages;
    out.class_globs = first.class_globs;
    out.method_globs = first.method_globs;
    out.corrected = first.corrected;
    out.foreign = first.foreign;
    bool cpu_known = true, runq_known = true;
    std::vector<MethodRow> rows;
    for (const MergeInput &in : inputs) {
        const Profile &p = in.profile;
        out.per_thread = out.per_thread || p.per_thread;
        out.latency = out.latency || p.latency;
        out.duration_ns = std::max(out.duration_ns, p.duration_ns);
        rows.insert(rows.end(), p.methods.begin(), p.methods.end());
        add_diagnostics(out.diag, p.diag);
        out.overhead.events += p.overhead.events;
        out.overhead.traced_events += p.overhead.traced_events;
        out.overhead.jvm_cpu_ns += p.overhead.jvm_cpu_ns;
        cpu_known = cpu_known && p.overhead.jvm_cpu_ns > 0;
        runq_known = runq_known && p.overhead.jvm_runq_ns.has_value();
        if (runq_known)
            out.overhead.jvm_runq_ns = out.overhead.jvm_runq_ns.value_or(0) + *p.overhead.jvm_runq_ns;
        out.sources.insert(out.sources.end(), p.sources.begin(), p.sources.end());
        // Each host's slowest calls, tagged by their source (a merge's already are).
        out.slower_than_ns =
            out.slower_than_ns ? std::min(out.slower_than_ns, p.slower_than_ns ? p.slower_than_ns : out.slower_than_ns)
                               : p.slower_than_ns;
        for (SlowCall call : p.slow_calls) {
            if (call.host.empty() && p.sources.size() == 1)
                call.host = source_text(p.sources.front());
            out.slow_calls.push_back(std::move(call));
        }
    }
    keep_slowest(out.slow_calls, out.slow_calls.size(), out.diag.slow_calls_dropped);
    if (!cpu_known)
        out.overhead.jvm_cpu_ns = 0;
    if (!runq_known)
        out.overhead.jvm_runq_ns.reset();
    out.methods = sum_rows(rows);
    return out;
}

std::vector<Outlier> find_outliers(const std::vector<MergeInput> &inputs, const OutlierOptions &opts)
{
    // Per method, per input: calls and inclusive elapsed time, threads summed.
    std::map<MethodKey, std::map<size_t, std::pair<uint64_t, uint64_t>>> per_method;
    for (size_t i = 0; i < inputs.size(); i++)
        for (const MethodRow &r : inputs[i].profile.methods) {
            auto &v = per_method[MethodKey{r.klass, r.method, r.signature}][i];
            v.first += r.stats.calls;
            v.second += r.stats.wall_incl_ns;
        }
    std::vector<Outlier> out;
    for (const auto &[key, by_input] : per_method) {
        std::vector<std::pair<size_t, double>> compared;
        for (const auto &[input, v] : by_input)
            if (v.first >= std::max<uint64_t>(opts.min_calls, 1))
                compared.emplace_back(input, static_cast<double>(v.second) / static_cast<double>(v.first));
        if (compared.size() < std::max<size_t>(opts.min_sources, 2))
            continue;
        std::vector<double> times;
        for (const auto &c : compared)
            times.push_back(c.second);
        const double median = median_of(times);
        if (median <= 0)
            continue;
        for (const auto &[input, t] : compared) {
            const double factor = t / median;
            if (factor < opts.factor && factor > 1.0 / opts.factor)
                continue;
            Outlier o;
            std::tie(o.klass, o.method, o.signature) = key;
            o.input = input;
            o.calls = by_input.at(input).first;
            o.per_call_ns = t;
            o.median_ns = median;
            o.factor = factor;
            o.compared = compared.size();
            out.push_back(std::move(o));
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const Outlier &a, const Outlier &b) {
        const double fa = std::fabs(std::log(std::max(a.factor, 1e-12))),
                     fb = std::fabs(std::log(std::max(b.factor, 1e-12)));
        if (fa != fb)
            return fa > fb;
        return std::tie(a.klass, a.method, a.signature, a.input) < std::tie(b.klass, b.method, b.signature, b.input);
    });
    return out;
}

}  // namespace jmt
