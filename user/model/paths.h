// Call paths of traced methods, aggregated in the kernel: the model every
// call-path output (folded stacks, call tree, pprof, HTML flame graph) reads.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/profile.h"

namespace jmt {

// One call path: the traced frames from a thread's outermost traced frame
// down to this node's method, with the totals of that last frame on this
// path only. Inclusive times here are each frame's full time, recursion
// included (A;A is its own path), so a node's inclusive time is its own
// calls' time; exclusive = inclusive - the inclusive time of its children.
struct PathNode {
    uint32_t id = 0;         // path id (> 0); ids are unique within a CallTree
    uint32_t parent = 0;     // the parent path's id; 0 for a root (outermost traced frame)
    std::string klass;       // JVM form: org/postgresql/jdbc/PgResultSet
    std::string method;      // getString
    std::string signature;   // (I)Ljava/lang/String;
    bool truncated = false;  // the "[truncated]" node: calls beyond the kernel's path table
    bool untraced = false;   // an "[untraced callees]" node: see with_untraced_nodes
    MethodStats stats;       // calls and times of the last frame on this path (corrected or raw)
};

// Every path seen, parents before their children.
struct CallTree {
    std::vector<PathNode> nodes;
    uint64_t truncated_calls = 0;  // calls counted under the "[truncated]" node
};

// The nodes of a tree by path id, for walking from a node to its root.
class PathIndex {
public:
    explicit PathIndex(const CallTree &tree);
    // node, its parent, ..., its root: at most as many nodes as the tree has,
    // so a malformed parent chain (a cycle, a missing parent) ends.
    std::vector<const PathNode *> chain(const PathNode &node) const;

private:
    std::unordered_map<uint32_t, const PathNode *> by_id_;
};

// Runq: run-queue wait; Blocked: blocked time (model/profile.h).
enum class PathMetric { Calls, Wall, Cpu, Runq, Blocked };

// "org.postgresql.jdbc.PgResultSet.getString(int)": the dotted class, the
// method and its parameter types as Java source spells them (simple class
// names, "[]" for arrays). Never contains ';'. The truncated node is "[truncated]",
// an untraced-callees node "[untraced callees]".
std::string frame_label(const PathNode &node);

// --foreign: tree with, under each node that spent time in untraced callees,
// a child "[untraced callees]" holding that time (0 calls; its times are its
// parent's foreign values, which leave the parent's exclusive times), so
// flame graphs, pprof, folded stacks and the call tree draw "the method's own
// code" and "what it called outside the traced code" apart. Inclusive times
// are unchanged; the new nodes' ids follow the tree's largest.
CallTree with_untraced_nodes(const CallTree &tree);

// The exclusive value of a node for metric: its calls (Calls), its
// exclusive elapsed ns (Wall), on-CPU ns (Cpu), run-queue ns (Runq) or blocked ns (Blocked).
uint64_t exclusive_value(const PathNode &node, PathMetric metric);

}  // namespace jmt
