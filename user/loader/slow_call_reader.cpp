#include "loader/slow_call_reader.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/quiet_thread.h"

namespace jmt {

namespace {

bool faster(const jmt_slow_call &a, const jmt_slow_call &b) { return a.latency_ns > b.latency_ns; }

constexpr int kPollMs = 100;

}  // namespace

SlowCallReader::SlowCallReader(const bpf_map *ring, size_t cap) : cap_(cap)
{
    ring_ = ring_buffer__new(bpf_map__fd(ring), &SlowCallReader::on_record, this, nullptr);
    if (!ring_) {
        const int err = errno;
        throw Error(std::string("cannot read the slow calls' ring buffer: ") + strerror(err), err);
    }
    thread_ = start_quiet_thread([this] { run(); });
}

SlowCallReader::~SlowCallReader()
{
    stop_ = true;
    if (thread_.joinable())
        thread_.join();
    ring_buffer__free(ring_);
}

void SlowCallReader::run()
{
    while (!stop_) {
        std::lock_guard<std::mutex> lock(ring_mutex_);  // libbpf's ring_buffer: one reader at a time
        ring_buffer__poll(ring_, kPollMs);
    }
}

int SlowCallReader::on_record(void *self, void *data, size_t size)
{
    if (size < sizeof(jmt_slow_call))
        return 0;
    jmt_slow_call call;
    memcpy(&call, data, sizeof call);
    static_cast<SlowCallReader *>(self)->keep(call);
    return 0;
}

void SlowCallReader::keep(const jmt_slow_call &call)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (cap_ == 0) {
        dropped_++;
        return;
    }
    if (heap_.size() < cap_) {
        heap_.push_back(call);
        std::push_heap(heap_.begin(), heap_.end(), faster);
        return;
    }
    dropped_++;
    if (call.latency_ns <= heap_.front().latency_ns)
        return;
    std::pop_heap(heap_.begin(), heap_.end(), faster);
    heap_.back() = call;
    std::push_heap(heap_.begin(), heap_.end(), faster);
}

SlowCallReader::Taken SlowCallReader::take()
{
    {
        std::lock_guard<std::mutex> ring_lock(ring_mutex_);
        ring_buffer__consume(ring_);
    }
    Taken out;
    std::lock_guard<std::mutex> lock(mutex_);
    out.calls.swap(heap_);
    out.dropped = dropped_;
    dropped_ = 0;
    std::sort(out.calls.begin(), out.calls.end(),
              [](const jmt_slow_call &a, const jmt_slow_call &b) { return a.latency_ns > b.latency_ns; });
    return out;
}

}  // namespace jmt
