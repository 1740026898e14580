#include "model/paths.h"

#include <algorithm>
#include <unordered_map>

namespace jmt {

std::string frame_label(const PathNode &node);

namespace {

// One field type of a JVM descriptor at pos, as Java source names it
// ("int", "String", "byte[]"); pos moves past it. Empty on a malformed descriptor.
std::string java_type(const std::string &desc, size_t &pos)
{
    size_t dims = 0;
    while (pos < desc.size() && desc[pos] == '[') {
        dims++;
        pos++;
    }
    if (pos >= desc.size())
        return {};
    std::string name;
    switch (desc[pos]) {
    case 'B': name = "byte"; break;
    case 'C': name = "char"; break;
    case 'D': name = "double"; break;
    case 'F': name = "float"; break;
    case 'I': name = "int"; break;
    case 'J': name = "long"; break;
    case 'S': name = "short"; break;
    case 'Z': name = "boolean"; break;
    case 'V': name = "void"; break;
    case 'L': {
        size_t end = desc.find(';', pos);
        if (end == std::string::npos)
            return {};
        std::string cls = desc.substr(pos + 1, end - pos - 1);
        size_t slash = cls.rfind('/');
        name = slash == std::string::npos ? cls : cls.substr(slash + 1);
        pos = end;
        break;
    }
    default: return {};
    }
    pos++;
    for (size_t i = 0; i < dims; i++)
        name += "[]";
    return name;
}

// "(int, String)" from "(ILjava/lang/String;)V"; the descriptor itself, ';'
// made ',', when it cannot be parsed.
std::string java_parameters(const std::string &desc)
{
    auto raw = [&desc] {
        std::string s = desc;
        for (char &c : s)
            if (c == ';')
                c = ',';
        return s;
    };
    if (desc.empty() || desc[0] != '(')
        return raw();
    std::string out = "(";
    size_t pos = 1;
    while (pos < desc.size() && desc[pos] != ')') {
        std::string type = java_type(desc, pos);
        if (type.empty())
            return raw();
        out += (out.size() > 1 ? ", " : "") + type;
    }
    if (pos >= desc.size())
        return raw();
    return out + ")";
}

}  // namespace

PathIndex::PathIndex(const CallTree &tree)
{
    for (const PathNode &n : tree.nodes)
        by_id_.emplace(n.id, &n);
}

std::vector<const PathNode *> PathIndex::chain(const PathNode &node) const
{
    std::vector<const PathNode *> out;
    const PathNode *at = &node;
    for (size_t hops = 0; at && hops <= by_id_.size(); hops++) {
        out.push_back(at);
        auto parent = at->parent ? by_id_.find(at->parent) : by_id_.end();
        at = parent == by_id_.end() ? nullptr : parent->second;
    }
    return out;
}

std::string frame_label(const PathNode &node)
{
    if (node.truncated)
        return "[truncated]";
    if (node.untraced)
        return "[untraced callees]";
    std::string cls = node.klass;
    for (char &c : cls)
        if (c == '/')
            c = '.';
        else if (c == ';')
            c = ',';
    std::string method = node.method;
    for (char &c : method)
        if (c == ';')
            c = ',';
    return cls + "." + method + java_parameters(node.signature);
}

uint64_t exclusive_value(const PathNode &node, PathMetric metric)
{
    switch (metric) {
    case PathMetric::Calls: return node.stats.calls;
    case PathMetric::Wall: return node.stats.wall_excl_ns;
    case PathMetric::Cpu: return node.stats.cpu_excl_ns;
    case PathMetric::Runq: return node.stats.runq_excl_ns;
    case PathMetric::Blocked: return blocked_excl_ns(node.stats);
    }
    return 0;
}

CallTree with_untraced_nodes(const CallTree &tree)
{
    CallTree out = tree;
    uint32_t next_id = 0;
    for (const PathNode &n : tree.nodes)
        next_id = std::max(next_id, n.id);
    const size_t count = out.nodes.size();  // the new nodes are appended: index, not iterators
    for (size_t i = 0; i < count; i++) {
        const uint32_t parent = out.nodes[i].id;
        MethodStats &s = out.nodes[i].stats;
        if (s.wall_foreign_ns == 0 && s.cpu_foreign_ns == 0)
            continue;
        PathNode child;
        child.id = ++next_id;
        child.parent = parent;
        child.untraced = true;
        child.stats.wall_incl_ns = child.stats.wall_excl_ns = s.wall_foreign_ns;
        child.stats.cpu_incl_ns = child.stats.cpu_excl_ns = s.cpu_foreign_ns;
        child.stats.events_incl = child.stats.events_excl = s.events_foreign;
        child.stats.traced_incl = child.stats.traced_excl = s.traced_foreign;
        s.wall_excl_ns -= std::min(s.wall_excl_ns, s.wall_foreign_ns);
        s.cpu_excl_ns -= std::min(s.cpu_excl_ns, s.cpu_foreign_ns);
        s.events_excl -= std::min(s.events_excl, s.events_foreign);
        s.traced_excl -= std::min(s.traced_excl, s.traced_foreign);
        s.wall_foreign_ns = s.cpu_foreign_ns = s.events_foreign = s.traced_foreign = 0;
        out.nodes.push_back(std::move(child));  // after its parent; s is not used after this
    }
    return out;
}

}  // namespace jmt
