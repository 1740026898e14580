// jmt_flamegraph_sample OUT.html [calls|wall|cpu]: writes the flame graph page of a known
// tree, the seed's A/B/C flow as jmethodtime traces it (demo.abc.FixedWork, N = 5000 calls of
// a(); per call a 66 us inclusive / 21 us exclusive, b 20/10, c 5/5; on-CPU 96% of elapsed):
//   a        N calls     a;b    2N calls     a;b;c  4N calls     a;c    N calls
// The page is what tests/flamegraph/screenshot.sh renders in a browser, and docs/flamegraph.png.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>

#include "../common/path_fixture.h"
#include "model/paths.h"
#include "report/flamegraph.h"

namespace {

constexpr uint64_t kN = 5000;
constexpr uint64_t kUs = 1000;

jmt::PathNode node(uint32_t id, uint32_t parent, const char *method, uint64_t calls, uint64_t incl_us_per_call,
                   uint64_t excl_us_per_call)
{
    const uint64_t incl = calls * incl_us_per_call * kUs, excl = calls * excl_us_per_call * kUs;
    return jmt_test::path_node(id, parent, "demo/abc/FixedWork", method, "()V", calls,
                               {incl, excl, incl / 100 * 96, excl / 100 * 96});
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        std::cerr << "usage: jmt_flamegraph_sample OUT.html [calls|wall|cpu]\n";
        return 2;
    }
    jmt::PathMetric metric = jmt::PathMetric::Wall;
    if (argc == 3) {
        const std::string m = argv[2];
        if (m == "calls")
            metric = jmt::PathMetric::Calls;
        else if (m == "cpu")
            metric = jmt::PathMetric::Cpu;
        else if (m != "wall") {
            std::cerr << "jmt_flamegraph_sample: unknown metric " << m << "\n";
            return 2;
        }
    }
    jmt::CallTree tree;
    tree.nodes.push_back(node(2, 0, "a", kN, 66, 21));
    tree.nodes.push_back(node(3, 2, "b", 2 * kN, 20, 10));
    tree.nodes.push_back(node(4, 3, "c", 4 * kN, 5, 5));
    tree.nodes.push_back(node(5, 2, "c", kN, 5, 5));
    std::ofstream out(argv[1]);
    jmt::write_flamegraph_html(out, tree, "jmethodtime pid 4242: package demo/abc, 1.20 s", metric);
    out.close();
    if (!out) {
        std::cerr << "jmt_flamegraph_sample: cannot write " << argv[1] << "\n";
        return 1;
    }
    return 0;
}
