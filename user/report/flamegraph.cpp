#include "report/flamegraph.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "flamegraph_html.h"  // generated: kFlamegraphHtml, the template with flamegraph.js inlined

namespace jmt {

const char kFlamegraphDataBegin[] = "<script type=\"application/json\" id=\"jmt-flamegraph-data\">";
const char kFlamegraphDataEnd[] = "</script>";

namespace {

using nlohmann::json;

struct Node {
    const PathNode *path = nullptr;  // nullptr: the root "all"
    std::string label;
    std::vector<size_t> children;  // indexes into the node vector
};

json values_of(const std::string &name, const MethodStats &s)
{
    return json{{"name", name},
                {"calls", s.calls},
                {"wall_incl", s.wall_incl_ns},
                {"wall_excl", s.wall_excl_ns},
                {"cpu_incl", s.cpu_incl_ns},
                {"cpu_excl", s.cpu_excl_ns},
                {"runq_incl", s.runq_incl_ns},
                {"runq_excl", s.runq_excl_ns},
                {"blocked_incl", blocked_incl_ns(s)},
                {"blocked_excl", blocked_excl_ns(s)}};
}

json to_json(const std::vector<Node> &nodes, size_t at)
{
    const Node &node = nodes[at];
    json out;
    if (node.path) {
        out = values_of(node.label, node.path->stats);
    } else {
        // The root: the outermost frames' totals; nothing of its own.
        MethodStats sum;
        for (size_t c : node.children) {
            sum.calls += nodes[c].path->stats.calls;
            sum.wall_incl_ns += nodes[c].path->stats.wall_incl_ns;
            sum.cpu_incl_ns += nodes[c].path->stats.cpu_incl_ns;
            sum.runq_incl_ns += nodes[c].path->stats.runq_incl_ns;
        }
        out = values_of(node.label, sum);
    }
    json children = json::array();
    for (size_t c : node.children)
        children.push_back(to_json(nodes, c));
    out["children"] = std::move(children);
    return out;
}

// The tree as nested JSON from a root "all". A node whose parent is not an earlier node
// (a malformed tree) hangs from the root, so the nesting is finite whatever the ids.
json tree_json(const CallTree &tree)
{
    std::vector<Node> nodes(1);
    nodes[0].label = "all";
    std::unordered_map<uint32_t, size_t> by_id;
    for (const PathNode &p : tree.nodes) {
        Node n;
        n.path = &p;
        n.label = frame_label(p);
        size_t parent = 0;
        if (p.parent) {
            auto it = by_id.find(p.parent);
            if (it != by_id.end())
                parent = it->second;
        }
        nodes.push_back(std::move(n));
        nodes[parent].children.push_back(nodes.size() - 1);
        by_id[p.id] = nodes.size() - 1;
    }
    for (Node &n : nodes)
        std::sort(n.children.begin(), n.children.end(), [&nodes](size_t a, size_t b) {
            const Node &x = nodes[a], &y = nodes[b];
            return x.label != y.label ? x.label < y.label : x.path->id < y.path->id;
        });
    return to_json(nodes, 0);
}

// Each method's distribution by its frames' label (rows of one method, per thread or per JVM, summed).
json latency_json(const std::vector<MethodRow> &methods)
{
    std::map<std::string, Latency> by_label;
    for (const MethodRow &m : methods) {
        if (m.stats.latency.empty())
            continue;
        PathNode frame;
        frame.klass = m.klass;
        frame.method = m.method;
        frame.signature = m.signature;
        by_label[frame_label(frame)] += m.stats.latency;
    }
    json out = json::object();
    for (const auto &[label, l] : by_label) {
        const LatencySummary s = summarize(l);
        json buckets = json::array();
        for (const LatencyBucket &b : l.buckets())
            buckets.push_back({b.low_ns, b.high_ns, b.calls});
        out[label] = {{"calls", l.calls()}, {"p50", s.p50_ns}, {"p90", s.p90_ns}, {"p99", s.p99_ns},
                      {"p999", s.p999_ns},  {"min", s.min_ns}, {"max", s.max_ns}, {"buckets", std::move(buckets)}};
    }
    return out;
}

// JSON that can sit inside <script>: '<', '>' and '&' only occur in strings, where \uXXXX
// means the same character.
std::string script_safe(const std::string &json_text)
{
    std::string out;
    out.reserve(json_text.size());
    for (char c : json_text) {
        switch (c) {
        case '<': out += "\\u003c"; break;
        case '>': out += "\\u003e"; break;
        case '&': out += "\\u0026"; break;
        default: out += c;
        }
    }
    return out;
}

const char *metric_name(PathMetric metric)
{
    switch (metric) {
    case PathMetric::Calls: return "calls";
    case PathMetric::Wall: return "wall";
    case PathMetric::Cpu: return "cpu";
    case PathMetric::Runq: return "runq";
    case PathMetric::Blocked: return "blocked";
    }
    return "wall";
}

}  // namespace

std::string html_escape(const std::string &text)
{
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

void write_flamegraph_html(std::ostream &out, const CallTree &tree, const std::string &title, PathMetric metric,
                           const std::vector<MethodRow> &methods)
{
    // Names come from the JVM (modified UTF-8): invalid bytes become U+FFFD instead of throwing.
    const std::string data = script_safe(tree_json(tree).dump(-1, ' ', false, json::error_handler_t::replace));
    const std::string latency = script_safe(latency_json(methods).dump(-1, ' ', false, json::error_handler_t::replace));
    const std::string safe_title = html_escape(title);
    struct Placeholder {
        const char *text;
        const std::string *value;
    };
    const std::string metric_value = metric_name(metric);
    const Placeholder placeholders[] = {{"@JMT_TITLE@", &safe_title},
                                        {"@JMT_METRIC@", &metric_value},
                                        {"/*@JMT_DATA@*/", &data},
                                        {"/*@JMT_LATENCY@*/", &latency}};

    // kFlamegraphHtml with each placeholder replaced; the inlined script has none (checked at build time).
    const char *at = kFlamegraphHtml;
    for (;;) {
        const char *next = nullptr;
        const Placeholder *which = nullptr;
        for (const Placeholder &p : placeholders) {
            const char *found = std::strstr(at, p.text);
            if (found && (!next || found < next)) {
                next = found;
                which = &p;
            }
        }
        if (!next) {
            out << at;
            break;
        }
        out.write(at, next - at);
        out << *which->value;
        at = next + std::strlen(which->text);
    }
}

}  // namespace jmt
