// jmt_flamegraph_sample OUT.html [calls|wall|cpu]: writes the flame graph page of a known
// tree, the DTrace example's A/B/C flow as jmethodtime traces it (demo.abc.FixedWork, N = 5000 calls of
// a(); per call a 66 us inclusive / 21 us exclusive, b 20/10, c 5/5; on-CPU 96% of elapsed):
//   a        N calls     a;b    2N calls     a;b;c  4N calls     a;c    N calls
// The page is what tests/flamegraph/screenshot.sh renders in a browser, and docs/flamegraph.png.
//
// jmt_flamegraph_sample --frames N OUT.html: the page of a made-up tree of N call paths
// (deterministic: 8 packages, up to 24 deep, exclusive values spread over four decades), for
// tests/flamegraph/loadtime.sh, which times the page in a browser with many frames.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "../common/path_fixture.h"
#include "model/latency.h"
#include "model/paths.h"
#include "model/profile.h"
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

// A made-up tree of n paths: each new path hangs under one of the recent ones (so paths grow
// deep) or, now and then, under any earlier one or the root; times and calls from a fixed LCG.
jmt::CallTree synthetic_tree(uint32_t n)
{
    static const char *const kPackages[] = {"org/postgresql/jdbc", "org/postgresql/core", "java/util",
                                            "java/lang",           "com/example/app",     "com/example/dao",
                                            "io/netty/buffer",     "jdk/internal/misc"};
    static const char *const kClasses[] = {"PgResultSet",  "QueryExecutor", "HashMap", "StringBuilder",
                                           "OrderService", "Repository",    "ByteBuf", "Unsafe"};
    static const char *const kMethods[] = {"get",  "put",   "execute", "read",     "write", "apply",
                                           "next", "close", "append",  "toString", "parse", "handle"};
    uint64_t state = 0x2545f4914f6cdd1dULL;
    auto rnd = [&state](uint64_t bound) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (state >> 33) % bound;
    };
    jmt::CallTree tree;
    std::vector<uint32_t> depth(n + 2, 0);
    std::vector<uint64_t> excl(n + 2, 0), calls(n + 2, 0);
    std::vector<uint32_t> parent(n + 2, 0);
    for (uint32_t id = 2; id < n + 2; id++) {
        uint32_t p = 0;
        const uint64_t r = rnd(100);
        if (id > 2 && r < 85)
            p = id - 1 - static_cast<uint32_t>(rnd(std::min<uint64_t>(id - 2, 6)));
        else if (id > 2 && r < 98)
            p = 2 + static_cast<uint32_t>(rnd(id - 2));
        if (p && depth[p] >= 23)
            p = parent[p];
        parent[id] = p;
        depth[id] = p ? depth[p] + 1 : 0;
        static const uint64_t kScale[] = {1, 10, 100, 1000};
        calls[id] = 1 + rnd(50);
        excl[id] = calls[id] * (200 + rnd(2000)) * kScale[rnd(4)];
    }
    std::vector<uint64_t> incl(excl);
    for (uint32_t id = n + 1; id >= 2; id--)
        if (parent[id])
            incl[parent[id]] += incl[id];
    for (uint32_t id = 2; id < n + 2; id++) {
        const size_t pkg = rnd(8);
        const std::string klass = std::string(kPackages[pkg]) + "/" + kClasses[(pkg + rnd(3)) % 8];
        tree.nodes.push_back(jmt_test::path_node(id, parent[id], klass, kMethods[rnd(12)], rnd(2) ? "()V" : "(I)V",
                                                 calls[id],
                                                 {incl[id], excl[id], incl[id] / 10 * 7, excl[id] / 10 * 7}));
    }
    return tree;
}

// The kernel bucket holding ns: its low edge.
uint64_t bucket_low(uint64_t ns)
{
    uint32_t i = 0;
    while (i + 1 < JMT_LAT_BUCKETS && jmt::latency_bucket_low_ns(i + 1) <= ns)
        i++;
    return jmt::latency_bucket_low_ns(i);
}

// c()'s 25,000 calls (both paths) as two per-thread rows whose histograms the page sums:
// 24,500 near 5 us, 400 near 50 us, 100 near 2 ms. Nearest rank: p50 and p90 in 5 us's
// bucket, p99 (rank 24,750) in 50 us's, p99.9 (rank 24,975) and max at 2 ms.
std::vector<jmt::MethodRow> methods_of_c()
{
    std::vector<jmt::MethodRow> rows(2);
    for (jmt::MethodRow &r : rows) {
        r.klass = "demo/abc/FixedWork";
        r.method = "c";
        r.signature = "()V";
    }
    rows[0].tid = 11;
    rows[1].tid = 12;
    rows[0].stats.latency.add_bucket(bucket_low(5 * kUs), 12'000);
    rows[1].stats.latency.add_bucket(bucket_low(5 * kUs), 12'500);
    rows[1].stats.latency.add_bucket(bucket_low(50 * kUs), 400);
    rows[1].stats.latency.add_bucket(bucket_low(2000 * kUs), 100);
    rows[0].stats.latency.set_extremes(5 * kUs, 5 * kUs);
    rows[1].stats.latency.set_extremes(5 * kUs, 2000 * kUs);
    return rows;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc == 4 && std::string(argv[1]) == "--frames") {
        const long n = std::atol(argv[2]);
        if (n < 1 || n > 10000000) {
            std::cerr << "jmt_flamegraph_sample: --frames takes 1..10000000\n";
            return 2;
        }
        std::ofstream out(argv[3]);
        jmt::write_flamegraph_html(out, synthetic_tree(static_cast<uint32_t>(n)),
                                   "jmethodtime: " + std::to_string(n) + " made-up call paths");
        out.close();
        return out ? 0 : 1;
    }
    if (argc < 2 || argc > 3) {
        std::cerr << "usage: jmt_flamegraph_sample OUT.html [calls|wall|cpu] | --frames N OUT.html\n";
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
    jmt::write_flamegraph_html(out, tree, "jmethodtime pid 4242: package demo/abc, 1.20 s", metric, methods_of_c());
    out.close();
    if (!out) {
        std::cerr << "jmt_flamegraph_sample: cannot write " << argv[1] << "\n";
        return 1;
    }
    return 0;
}
