// jmethodtime diff --flamegraph: the new report's call paths as an SVG flame
// graph, each frame coloured by its time per call against the base report's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/diff.h"
#include "model/merge.h"
#include "report/merge_report.h"
#include "report/flamegraph.h"
#include "report/report.h"

namespace jmt {

namespace {

uint64_t inclusive_value(const PathNode &n, PathMetric metric)
{
    switch (metric) {
    case PathMetric::Calls: return n.stats.calls;
    case PathMetric::Wall: return n.stats.wall_incl_ns;
    case PathMetric::Cpu: return n.stats.cpu_incl_ns;
    case PathMetric::Runq: return n.stats.runq_incl_ns;
    case PathMetric::Blocked: return blocked_incl_ns(n.stats);
    }
    return 0;
}

// Every node of tree by its path of frame labels from the root.
std::map<std::string, const PathNode *> nodes_by_path(const CallTree &tree)
{
    std::map<std::string, const PathNode *> by_path;
    const PathIndex index(tree);
    for (const PathNode &n : tree.nodes) {
        std::string key;
        for (const PathNode *p : index.chain(n))
            key = frame_label(*p) + "\n" + key;
        by_path[key] = &n;
    }
    return by_path;
}

// A frame's colour against the same path in the base report, and the words for its tooltip.
struct DiffShade {
    std::string fill = "#b04ad0", change = "only in the new report", base_text = "-";
};

DiffShade shade_of(double now_per_call, const PathNode *base)
{
    DiffShade d;
    if (!base || base->stats.calls == 0)
        return d;
    const double base_pc = per_call(base->stats.wall_incl_ns, base->stats.calls);
    const double ratio = base_pc > 0 ? now_per_call / base_pc : 1;
    const double strength = std::min(1.0, std::fabs(std::log2(std::max(ratio, 1e-9))));
    const int shade = static_cast<int>(std::lround(255 - 200 * (std::fabs(ratio - 1) < 0.05 ? 0 : strength)));
    char buf[32];
    snprintf(buf, sizeof buf, ratio >= 1 ? "#ff%02x%02x" : "#%02x%02xff", shade, shade);
    d.fill = buf;
    snprintf(buf, sizeof buf, "%+.1f%%", (ratio - 1) * 100);
    d.change = buf;
    d.base_text = std::to_string(base->stats.calls) + " calls, " +
                  format_duration(static_cast<uint64_t>(std::llround(base_pc))) + "/call";
    return d;
}

}  // namespace

void write_diff_flamegraph_html(std::ostream &out, const CallTree &base, const CallTree &now, const std::string &title,
                                PathMetric metric)
{
    // Both trees on one key per path (labels from the root), so base's node of a path of now is found.
    const CallTree merged_now = merge_trees({&now});
    const CallTree merged_base = merge_trees({&base});
    const std::map<std::string, const PathNode *> base_by_path = nodes_by_path(merged_base);
    std::unordered_map<uint32_t, std::vector<const PathNode *>> children;
    uint64_t total = 0;
    for (const PathNode &n : merged_now.nodes) {
        children[n.parent].push_back(&n);
        if (n.parent == 0)
            total += inclusive_value(n, metric);
    }
    constexpr double width = 1200, row = 17;
    struct Frame {
        double x, w;
        size_t depth;
        const PathNode *node;
        std::string key;
    };
    std::vector<Frame> frames;
    size_t max_depth = 0;
    std::function<void(uint32_t, double, size_t, const std::string &)> lay =
        [&](uint32_t parent, double x, size_t depth, const std::string &prefix) {
            auto it = children.find(parent);
            if (it == children.end())
                return;
            std::vector<const PathNode *> kids = it->second;
            std::sort(kids.begin(), kids.end(),
                      [](const PathNode *a, const PathNode *b) { return frame_label(*a) < frame_label(*b); });
            for (const PathNode *k : kids) {
                const double w = total ? width * static_cast<double>(inclusive_value(*k, metric)) / total : 0;
                const std::string key = prefix + frame_label(*k) + "\n";
                if (w >= 0.3) {
                    frames.push_back({x, w, depth, k, key});
                    max_depth = std::max(max_depth, depth);
                    if (k->id > parent)
                        lay(k->id, x, depth + 1, key);
                }
                x += w;
            }
        };
    lay(0, 0, 0, "");
    const double height = (static_cast<double>(max_depth) + 1) * row + 40;
    out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(title)
        << "</title><style>body{font-family:sans-serif}text{font-size:11px;pointer-events:none}"
           "rect:hover{stroke:#000}</style></head><body>\n<h2>"
        << html_escape(title) << "</h2>\n<p>Width: the new report's inclusive "
        << (metric == PathMetric::Calls ? "calls"
            : metric == PathMetric::Cpu ? "on-CPU time"
                                        : "elapsed time")
        << ". Colour: the frame's inclusive elapsed time per call against the same call path in the base report: "
           "<span style=\"color:#d22\">red slower</span>, <span style=\"color:#22d\">blue faster</span>, "
           "<span style=\"color:#a3c\">purple only in the new report</span>, white within 5%. Hover a frame for its "
           "numbers.</p>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\">\n";
    for (const Frame &f : frames) {
        const PathNode &n = *f.node;
        const auto b = base_by_path.find(f.key);
        const double now_pc = per_call(n.stats.wall_incl_ns, n.stats.calls);
        const DiffShade shade = shade_of(now_pc, b == base_by_path.end() ? nullptr : b->second);
        const std::string &fill = shade.fill, &change = shade.change, &base_text = shade.base_text;
        const double y = height - 20 - (static_cast<double>(f.depth) + 1) * row;
        const std::string label = frame_label(n);
        out << "<g><title>" << html_escape(label) << "\nnew: " << n.stats.calls << " calls, "
            << format_duration(static_cast<uint64_t>(std::llround(now_pc))) << "/call\nbase: " << base_text
            << "\nchange per call: " << change << "</title><rect x=\"" << f.x << "\" y=\"" << y << "\" width=\"" << f.w
            << "\" height=\"" << row - 1 << "\" fill=\"" << fill << "\"/>";
        const size_t chars = static_cast<size_t>(f.w / 6.5);
        if (chars >= 3)
            out << "<text x=\"" << f.x + 2 << "\" y=\"" << y + 12 << "\">"
                << html_escape(label.size() > chars ? label.substr(0, chars - 2) + ".." : label) << "</text>";
        out << "</g>\n";
    }
    out << "</svg>\n</body></html>\n";
}

}  // namespace jmt
