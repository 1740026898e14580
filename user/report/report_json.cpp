#include "report/report_json.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "model/stat_keys.h"
#include "util/error.h"

namespace jmt {

using nlohmann::json;

json source_json(const ReportSource &s, uint64_t duration_ns)
{
    return {{"hostname", s.hostname},
            {"pid", s.pid},
            {"main_class", s.main_class},
            {"command", s.command},
            {"jdk_version", s.jdk_version},
            {"kernel", s.kernel},
            {"arch", s.arch},
            {"start_time", s.start_time},
            {"duration_ns", s.duration_ns ? s.duration_ns : duration_ns}};
}

namespace {

// The value at key; nullopt when it is missing or null.
template <typename T>
std::optional<T> optional_of(const json &j, const char *key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return std::nullopt;
    return it->get<T>();
}

template <typename T>
T value_or(const json &j, const char *key, T fallback)
{
    return optional_of<T>(j, key).value_or(std::move(fallback));
}

std::string jvm_frame(const PathNode &n)
{
    if (n.truncated || n.untraced)
        return frame_label(n);
    return n.klass + "." + n.method + n.signature;
}

// "org/x/Y.get(I)V" -> class, method, signature; "[truncated]" and "[untraced callees]" are synthetic.
PathNode node_of_jvm_frame(const std::string &f)
{
    PathNode n;
    if (f == "[truncated]") {
        n.truncated = true;
        return n;
    }
    if (f == "[untraced callees]") {
        n.untraced = true;
        return n;
    }
    const size_t paren = f.find('(');
    const size_t dot = f.rfind('.', paren == std::string::npos ? std::string::npos : paren);
    if (dot == std::string::npos) {
        n.method = f.substr(0, paren);
    } else {
        n.klass = f.substr(0, dot);
        n.method = f.substr(dot + 1, paren == std::string::npos ? std::string::npos : paren - dot - 1);
    }
    if (paren != std::string::npos)
        n.signature = f.substr(paren);
    return n;
}

void bounds_from_json(const json &j, TimeBounds &b)
{
    for (const BoundKey &k : kBoundKeys) {
        auto it = j.find(k.key);
        if (it != j.end() && it->is_array() && it->size() == 2) {
            (b.*k.field)[0] = (*it)[0].get<uint64_t>();
            (b.*k.field)[1] = (*it)[1].get<uint64_t>();
        }
    }
    b.wider_than_correction = value_or<bool>(j, "wider_than_correction", false);
}

CostSource cost_source_of(const std::string &name)
{
    if (name == "gaps")
        return CostSource::Gaps;
    if (name == "paid")
        return CostSource::Paid;
    if (name == "windows")
        return CostSource::Windows;
    return CostSource::Calibrated;
}

}  // namespace

ReportSource source_from_json(const json &j)
{
    ReportSource s;
    s.hostname = value_or<std::string>(j, "hostname", "");
    s.pid = value_or<int>(j, "pid", 0);
    s.main_class = value_or<std::string>(j, "main_class", "");
    s.command = value_or<std::string>(j, "command", "");
    s.jdk_version = value_or<std::string>(j, "jdk_version", "");
    s.kernel = value_or<std::string>(j, "kernel", "");
    s.arch = value_or<std::string>(j, "arch", "");
    s.start_time = value_or<std::string>(j, "start_time", "");
    s.duration_ns = value_or<uint64_t>(j, "duration_ns", 0);
    return s;
}

json latency_json(const Latency &l)
{
    const LatencySummary p = summarize(l);
    json buckets = json::array();
    for (const LatencyBucket &b : l.buckets())
        buckets.push_back(
            json::array({b.low_ns, b.high_ns == UINT64_MAX ? std::max(p.max_ns, b.low_ns) + 1 : b.high_ns, b.calls}));
    return {{"p50_ns", p.p50_ns}, {"p90_ns", p.p90_ns}, {"p99_ns", p.p99_ns},           {"p999_ns", p.p999_ns},
            {"min_ns", p.min_ns}, {"max_ns", p.max_ns}, {"buckets", std::move(buckets)}};
}

json stats_json(const MethodStats &s, bool foreign, bool paths_only)
{
    json j = json::object();
    for (const StatKey &k : kStatKeys)
        if ((foreign || !k.foreign) && (k.path || !paths_only))
            j[k.key] = stat_value(s, k);
    if (!paths_only && !s.latency.empty())
        j["latency"] = latency_json(s.latency);
    return j;
}

MethodStats stats_from_json(const json &j)
{
    MethodStats s;
    for (const StatKey &k : kStatKeys)
        if (k.field)
            s.*k.field = value_or<uint64_t>(j, k.key, 0);
    const auto latency = j.find("latency");
    if (latency != j.end() && latency->is_object()) {
        for (const json &b : latency->value("buckets", json::array()))
            if (!b.is_array() || b.size() != 3 || !s.latency.add_bucket(b[0].get<uint64_t>(), b[2].get<uint64_t>()))
                throw Error("a latency bucket that is not [lower_ns, upper_ns, calls] at a histogram's bucket edge: " +
                                b.dump(),
                            EINVAL);
        s.latency.set_extremes(value_or<uint64_t>(*latency, "min_ns", 0), value_or<uint64_t>(*latency, "max_ns", 0));
    }
    return s;
}

json slow_calls_json(const std::vector<SlowCall> &calls)
{
    json out = json::array();
    for (const SlowCall &c : calls) {
        json j = {{"class", c.klass},
                  {"method", c.method},
                  {"signature", c.signature},
                  {"thread_id", c.tid},
                  {"thread_name", c.thread},
                  {"vthread", c.vthread},
                  {"start_unix_ns", c.start_unix_ns},
                  {"wall_ns", c.wall_ns},
                  {"cpu_ns", c.cpu_ns},
                  {"runq_ns", c.runq_ns},
                  {"blocked_ns", c.blocked_ns},
                  {"path", c.path},
                  {"path_cut", c.path_cut}};
        if (c.pid)
            j["pid"] = c.pid;
        if (!c.host.empty())
            j["host"] = c.host;
        out.push_back(std::move(j));
    }
    return out;
}

std::vector<SlowCall> slow_calls_from_json(const json &j)
{
    std::vector<SlowCall> out;
    for (const json &c : j) {
        SlowCall s;
        s.klass = value_or<std::string>(c, "class", "");
        s.method = value_or<std::string>(c, "method", "");
        s.signature = value_or<std::string>(c, "signature", "");
        s.tid = value_or<uint32_t>(c, "thread_id", 0);
        s.thread = value_or<std::string>(c, "thread_name", "");
        s.vthread = value_or<uint64_t>(c, "vthread", 0);
        s.pid = value_or<int>(c, "pid", 0);
        s.host = value_or<std::string>(c, "host", "");
        s.start_unix_ns = value_or<uint64_t>(c, "start_unix_ns", 0);
        s.wall_ns = value_or<uint64_t>(c, "wall_ns", 0);
        s.cpu_ns = value_or<uint64_t>(c, "cpu_ns", 0);
        s.runq_ns = value_or<uint64_t>(c, "runq_ns", 0);
        s.blocked_ns = value_or<uint64_t>(c, "blocked_ns", 0);
        s.path = value_or<std::vector<std::string>>(c, "path", {});
        s.path_cut = value_or<uint32_t>(c, "path_cut", 0);
        out.push_back(std::move(s));
    }
    return out;
}

json paths_json(const CallTree &tree)
{
    json out = json::array();
    const PathIndex index(tree);
    for (const PathNode &node : tree.nodes) {
        json frames = json::array(), jvm_frames = json::array();
        std::vector<const PathNode *> chain = index.chain(node);
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            frames.push_back(frame_label(**it));
            jvm_frames.push_back(jvm_frame(**it));
        }
        json path = stats_json(node.stats, false, true);
        path["frames"] = std::move(frames);
        path["jvm_frames"] = std::move(jvm_frames);
        out.push_back(std::move(path));
    }
    return out;
}

CallTree paths_from_json(const json &paths)
{
    CallTree tree;
    std::map<std::vector<std::string>, size_t> by_path;  // jvm frames -> index in tree.nodes
    for (const json &p : paths) {
        const json &frames = p.contains("jvm_frames") ? p.at("jvm_frames") : p.at("frames");
        std::vector<std::string> key;
        uint32_t parent = 0;
        size_t at = 0;
        for (const json &f : frames) {
            key.push_back(f.get<std::string>());
            auto it = by_path.find(key);
            if (it == by_path.end()) {
                PathNode n = node_of_jvm_frame(key.back());
                n.id = static_cast<uint32_t>(tree.nodes.size() + 1);
                n.parent = parent;
                it = by_path.emplace(key, tree.nodes.size()).first;
                tree.nodes.push_back(std::move(n));
            }
            at = it->second;
            parent = tree.nodes[at].id;
        }
        if (key.empty())
            continue;
        MethodStats s = stats_from_json(p);
        tree.nodes[at].stats += s;
        if (tree.nodes[at].truncated)
            tree.truncated_calls += s.calls;
    }
    return tree;
}

namespace {

// The checks that make a document a report this version reads; throws naming file.
void check_report(const json &d, const std::string &file)
{
    if (!d.is_object() || !d.contains("methods") || !d.at("methods").is_array())
        throw Error(file + " is not a jmethodtime report: no \"methods\" list (write it with jmethodtime --json)");
    if (!d.contains("schema_version"))
        throw Error(file + " has no schema_version: not a jmethodtime report, or one from a version before "
                           "schema 1 (trace again with this jmethodtime --json)");
    if (!d.at("schema_version").is_number_integer() || d.at("schema_version").get<int64_t>() != kReportSchemaVersion)
        throw Error(file + " has schema_version " + d.at("schema_version").dump() + ", this jmethodtime reads " +
                    std::to_string(kReportSchemaVersion) + ": use the jmethodtime version that wrote it");
}

// probe_cost and overhead: what the probes cost, as the report says.
void cost_from_json(const json &d, Profile &p)
{
    if (d.contains("probe_cost")) {
        const json &c = d.at("probe_cost");
        p.probe_cost.traced_event_ns = value_or<uint64_t>(c, "traced_event_ns", 0);
        p.probe_cost.rejected_event_ns = value_or<uint64_t>(c, "rejected_event_ns", 0);
        p.calibrated_cost.traced_event_ns = value_or<uint64_t>(c, "calibrated_traced_event_ns", 0);
        p.calibrated_cost.rejected_event_ns = value_or<uint64_t>(c, "calibrated_rejected_event_ns", 0);
        p.cost_samples = value_or<size_t>(c, "calibration_samples", 0);
        p.cost_source = cost_source_of(value_or<std::string>(c, "source", ""));
    }
    if (d.contains("overhead")) {
        const json &o = d.at("overhead");
        p.overhead.events = value_or<uint64_t>(o, "events", 0);
        p.overhead.traced_events = value_or<uint64_t>(o, "traced_events", 0);
        p.overhead.jvm_cpu_ns = value_or<uint64_t>(o, "jvm_cpu_ns", 0);
        p.overhead.jvm_cpu_early = value_or<bool>(o, "jvm_cpu_early", false);
        p.overhead.jvm_runq_ns = optional_of<uint64_t>(o, "jvm_runq_ns");
        p.overhead.trap_ns = value_or<uint64_t>(o, "trap_ns", 0);
        p.overhead.trap_share = optional_of<double>(o, "share");
        p.overhead.runq_share = optional_of<double>(o, "runq_share");
        p.overhead.saturated = value_or<bool>(o, "saturated", false);
    }
}

MethodRow method_from_json(const json &m)
{
    MethodRow row;
    row.klass = value_or<std::string>(m, "class", "");
    row.method = value_or<std::string>(m, "method", "");
    row.signature = value_or<std::string>(m, "signature", "");
    row.probe_dominated = value_or<bool>(m, "probe_dominated", false);
    row.tid = value_or<uint32_t>(m, "tid", 0);
    row.vthread = value_or<uint64_t>(m, "vthread", 0);
    row.pid = value_or<int>(m, "pid", 0);
    row.thread = value_or<std::string>(m, "thread", "");
    row.stats = stats_from_json(m);
    if (m.contains("bounds"))
        bounds_from_json(m.at("bounds"), row.bounds);
    return row;
}

void diagnostics_from_json(const json &g, Diagnostics &diag)
{
#define JMT_READ_DIAG(name) diag.name = value_or<uint64_t>(g, #name, 0);
#define JMT_READ_DIAG_KERNEL(NAME, name) JMT_READ_DIAG(name)
#define JMT_READ_DIAG_USER(name) JMT_READ_DIAG(name)
    JMT_DIAGNOSTICS(JMT_READ_DIAG_KERNEL, JMT_READ_DIAG_USER)
#undef JMT_READ_DIAG
#undef JMT_READ_DIAG_KERNEL
#undef JMT_READ_DIAG_USER
}

// Where the report's traces ran: its sources, or its pid at least.
void sources_from_json(const json &d, Profile &p)
{
    if (d.contains("source"))
        p.sources.push_back(source_from_json(d.at("source")));
    if (d.contains("sources"))
        for (const json &s : d.at("sources"))
            p.sources.push_back(source_from_json(s));
    if (p.sources.empty()) {
        ReportSource s;
        s.pid = p.pid;
        s.duration_ns = p.duration_ns;
        p.sources.push_back(s);
    }
}

}  // namespace

LoadedReport parse_report(const std::string &text, const std::string &file)
{
    LoadedReport r;
    r.file = file;
    try {
        r.doc = json::parse(text);
    } catch (const json::exception &) {
        throw Error(file + " is not a jmethodtime report: not one JSON document (write it with jmethodtime --json)");
    }
    const json &d = r.doc;
    check_report(d, file);
    try {
        Profile &p = r.profile;
        p.pid = value_or<int>(d, "pid", 0);
        p.duration_ns = value_or<uint64_t>(d, "duration_ns", 0);
        p.packages = value_or<std::vector<std::string>>(d, "packages", {});
        p.class_globs = value_or<std::vector<std::string>>(d, "class_globs", {});
        p.method_globs = value_or<std::vector<std::string>>(d, "method_globs", {});
        p.corrected = value_or<std::string>(d, "times", "raw") == "corrected";
        p.foreign = value_or<bool>(d, "foreign", false);
        cost_from_json(d, p);
        for (const json &m : d.at("methods")) {
            p.methods.push_back(method_from_json(m));
            p.per_thread = p.per_thread || m.contains("tid");
            p.latency = p.latency || m.contains("latency");
        }
        p.slower_than_ns = value_or<uint64_t>(d, "slower_than_ns", 0);
        if (d.contains("slow_calls"))
            p.slow_calls = slow_calls_from_json(d.at("slow_calls"));
        if (d.contains("diagnostics"))
            diagnostics_from_json(d.at("diagnostics"), p.diag);
        sources_from_json(d, p);
        if (d.contains("paths"))
            r.tree = paths_from_json(d.at("paths"));
    } catch (const json::exception &e) {
        throw Error(file + " is not a jmethodtime report: " + e.what());
    }
    return r;
}

LoadedReport read_report(const std::string &file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw Error("cannot read " + file + ": " + strerror(errno), errno);
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_report(ss.str(), file);
}

}  // namespace jmt
