// Latency distributions of a method's calls: the kernel's log-linear histogram
// (struct jmt_latency, bpf/jmethodtime.h), sparse, and its percentiles.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "jmethodtime.h"

namespace jmt {

// [low_ns, high_ns) of kernel bucket index (high_ns: UINT64_MAX for the last).
uint64_t latency_bucket_low_ns(uint32_t index);
uint64_t latency_bucket_high_ns(uint32_t index);

struct LatencyBucket {
    uint64_t low_ns = 0, high_ns = 0, calls = 0;
};

// Calls by bucket; min_ns and max_ns are the extremes of the calls counted
// (ns), exact as the kernel saw them, or bounded by their buckets after -=.
class Latency {
public:
    void add_kernel(const jmt_latency &k);
    // A bucket of an earlier report (low_ns a kernel bucket's low edge); false when it is not one.
    bool add_bucket(uint64_t low_ns, uint64_t calls);
    void set_extremes(uint64_t min_ns, uint64_t max_ns);

    Latency &operator+=(const Latency &o);
    // o: an earlier histogram of the same calls (an interval's calls: the
    // extremes then bounded by the buckets left).
    Latency &operator-=(const Latency &o);

    // Every call moved shift_ns shorter (the probe cost the kernel took out
    // at its start-up rate, less the trace's final cost), bucket by bucket
    // from each bucket's middle, at least 0.
    Latency shifted(int64_t shift_ns) const;

    bool empty() const { return calls_ == 0; }
    uint64_t calls() const { return calls_; }
    uint64_t min_ns() const { return min_ns_; }
    uint64_t max_ns() const { return max_ns_; }
    // The nearest-rank q-quantile (0 < q <= 1): the middle of the bucket of the
    // call of rank ceil(q * calls), within [min_ns, max_ns] (the extremes for
    // the first and last ranks); 0 when empty.
    uint64_t percentile_ns(double q) const;
    std::vector<LatencyBucket> buckets() const;

private:
    void bound_extremes();

    std::map<uint32_t, uint64_t> counts_;  // kernel bucket index -> calls, none 0
    uint64_t calls_ = 0;
    uint64_t min_ns_ = 0, max_ns_ = 0;
};

// The percentiles every output shows.
struct LatencySummary {
    uint64_t p50_ns = 0, p90_ns = 0, p99_ns = 0, p999_ns = 0, min_ns = 0, max_ns = 0;
};
LatencySummary summarize(const Latency &l);

}  // namespace jmt
