// Building CallTrees by hand for the tests of the call-path outputs.
#pragma once

#include <cstdint>
#include <string>

#include "model/paths.h"

namespace jmt_test {

// Times of one path node (ns, totals over its calls).
struct NodeTimes {
    uint64_t wall_incl = 0, wall_excl = 0, cpu_incl = 0, cpu_excl = 0;
};

// A node of method klass.method+sig on path id under parent (0: a root).
inline jmt::PathNode path_node(uint32_t id, uint32_t parent, const std::string &klass, const std::string &method,
                               const std::string &sig, uint64_t calls, const NodeTimes &t)
{
    jmt::PathNode n;
    n.id = id;
    n.parent = parent;
    n.klass = klass;
    n.method = method;
    n.signature = sig;
    n.stats.calls = calls;
    n.stats.wall_incl_ns = t.wall_incl;
    n.stats.wall_excl_ns = t.wall_excl;
    n.stats.cpu_incl_ns = t.cpu_incl;
    n.stats.cpu_excl_ns = t.cpu_excl;
    return n;
}

}  // namespace jmt_test
