#include "report/folded.h"

#include <map>
#include <string>
#include <utility>

#include "model/diff.h"

namespace jmt {

void write_folded(std::ostream &out, const CallTree &tree, PathMetric metric)
{
    const PathIndex index(tree);
    for (const PathNode &node : tree.nodes) {
        const uint64_t value = exclusive_value(node, metric);
        if (value == 0)
            continue;
        const std::vector<const PathNode *> chain = index.chain(node);  // node first
        for (auto it = chain.rbegin(); it != chain.rend(); ++it)
            out << (it == chain.rbegin() ? "" : ";") << frame_label(**it);
        out << ' ' << value << '\n';
    }
}

void write_diff_folded(std::ostream &out, const CallTree &base, const CallTree &now, PathMetric metric)
{
    const std::map<std::string, uint64_t> b = folded_values(base, metric), n = folded_values(now, metric);
    std::map<std::string, std::pair<uint64_t, uint64_t>> all;
    for (const auto &[stack, v] : b)
        all[stack].first = v;
    for (const auto &[stack, v] : n)
        all[stack].second = v;
    for (const auto &[stack, v] : all)
        out << stack << " " << v.first << " " << v.second << "\n";
}

}  // namespace jmt
