#include "model/latency.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace jmt {

uint64_t latency_bucket_low_ns(uint32_t index)
{
    if (index == 0)
        return 0;
    if (index >= JMT_LAT_BUCKETS - 1)
        return uint64_t{1} << JMT_LAT_MAX_SHIFT;
    const uint32_t octave = JMT_LAT_MIN_SHIFT + ((index - 1) >> JMT_LAT_SUB_BITS);
    const uint64_t sub = (index - 1) & ((1u << JMT_LAT_SUB_BITS) - 1);
    return ((uint64_t{1} << JMT_LAT_SUB_BITS) + sub) << (octave - JMT_LAT_SUB_BITS);
}

uint64_t latency_bucket_high_ns(uint32_t index)
{
    return index >= JMT_LAT_BUCKETS - 1 ? std::numeric_limits<uint64_t>::max() : latency_bucket_low_ns(index + 1);
}

void Latency::add_kernel(const jmt_latency &k)
{
    uint64_t added = 0;
    for (uint32_t i = 0; i < JMT_LAT_BUCKETS; i++)
        if (k.buckets[i]) {
            counts_[i] += k.buckets[i];
            added += k.buckets[i];
        }
    if (added == 0)
        return;
    const bool had = calls_ > 0;
    calls_ += added;
    if (k.min_plus_1_ns) {
        const uint64_t least = k.min_plus_1_ns - 1;
        min_ns_ = had ? std::min(min_ns_, least) : least;
    }
    max_ns_ = std::max<uint64_t>(max_ns_, k.max_ns);
}

bool Latency::add_bucket(uint64_t low_ns, uint64_t calls)
{
    const uint32_t index = jmt_lat_bucket(low_ns);
    if (latency_bucket_low_ns(index) != low_ns)
        return false;
    if (calls) {
        counts_[index] += calls;
        calls_ += calls;
    }
    return true;
}

void Latency::set_extremes(uint64_t min_ns, uint64_t max_ns)
{
    min_ns_ = min_ns;
    max_ns_ = max_ns;
    bound_extremes();
}

Latency &Latency::operator+=(const Latency &o)
{
    if (o.empty())
        return *this;
    for (const auto &[i, n] : o.counts_)
        counts_[i] += n;
    min_ns_ = calls_ ? std::min(min_ns_, o.min_ns_) : o.min_ns_;
    max_ns_ = std::max(max_ns_, o.max_ns_);
    calls_ += o.calls_;
    return *this;
}

Latency &Latency::operator-=(const Latency &o)
{
    for (const auto &[i, n] : o.counts_) {
        auto it = counts_.find(i);
        if (it == counts_.end())
            continue;
        const uint64_t taken = std::min(it->second, n);
        calls_ -= taken;
        it->second -= taken;
        if (it->second == 0)
            counts_.erase(it);
    }
    bound_extremes();
    return *this;
}

void Latency::bound_extremes()
{
    if (counts_.empty()) {
        min_ns_ = max_ns_ = 0;
        return;
    }
    const uint32_t lo = counts_.begin()->first, hi = counts_.rbegin()->first;
    min_ns_ = std::clamp(min_ns_, latency_bucket_low_ns(lo), latency_bucket_high_ns(lo) - 1);
    max_ns_ = std::clamp(max_ns_, latency_bucket_low_ns(hi), latency_bucket_high_ns(hi) - 1);
}

namespace {

uint64_t less_at_least_0(uint64_t ns, int64_t shift_ns)
{
    if (shift_ns >= 0)
        return ns > static_cast<uint64_t>(shift_ns) ? ns - static_cast<uint64_t>(shift_ns) : 0;
    return ns + static_cast<uint64_t>(-shift_ns);
}

uint64_t middle_ns(uint32_t index)
{
    if (index >= JMT_LAT_BUCKETS - 1)
        return latency_bucket_low_ns(index);
    return (latency_bucket_low_ns(index) + latency_bucket_high_ns(index)) / 2;
}

}  // namespace

Latency Latency::shifted(int64_t shift_ns) const
{
    if (shift_ns == 0 || empty())
        return *this;
    Latency out;
    for (const auto &[i, n] : counts_)
        out.counts_[jmt_lat_bucket(less_at_least_0(middle_ns(i), shift_ns))] += n;
    out.calls_ = calls_;
    out.set_extremes(less_at_least_0(min_ns_, shift_ns), less_at_least_0(max_ns_, shift_ns));
    return out;
}

uint64_t Latency::percentile_ns(double q) const
{
    if (calls_ == 0)
        return 0;
    const double exact = std::ceil(q * static_cast<double>(calls_));
    const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(exact), 1, calls_);
    // The first and last ranks are the extremes, known exactly.
    if (rank == calls_)
        return max_ns_;
    if (rank == 1)
        return min_ns_;
    uint64_t seen = 0;
    for (const auto &[i, n] : counts_) {
        seen += n;
        if (seen >= rank)
            return std::clamp(middle_ns(i), min_ns_, max_ns_);
    }
    return max_ns_;
}

std::vector<LatencyBucket> Latency::buckets() const
{
    std::vector<LatencyBucket> out;
    for (const auto &[i, n] : counts_)
        out.push_back({latency_bucket_low_ns(i), latency_bucket_high_ns(i), n});
    return out;
}

LatencySummary summarize(const Latency &l)
{
    LatencySummary s;
    s.p50_ns = l.percentile_ns(0.50);
    s.p90_ns = l.percentile_ns(0.90);
    s.p99_ns = l.percentile_ns(0.99);
    s.p999_ns = l.percentile_ns(0.999);
    s.min_ns = l.min_ns();
    s.max_ns = l.max_ns();
    return s;
}

}  // namespace jmt
