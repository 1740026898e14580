// --slower-than: the calls the return program sent through the slow_calls ring
// buffer, consumed on a thread of their own and kept, the slowest first, up
// to a cap.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "jmethodtime.h"

struct bpf_map;
struct ring_buffer;

namespace jmt {

class SlowCallReader {
public:
    // ring: the loaded slow_calls map; keeps at most cap calls between takes.
    // Throws jmt::Error when the ring buffer cannot be read.
    SlowCallReader(const bpf_map *ring, size_t cap);
    ~SlowCallReader();
    SlowCallReader(const SlowCallReader &) = delete;
    SlowCallReader &operator=(const SlowCallReader &) = delete;

    struct Taken {
        std::vector<jmt_slow_call> calls;  // the slowest (histogram time), slowest first
        uint64_t dropped = 0;              // received past the cap, the faster ones let go
    };
    // What arrived since the last take (the ring buffer read to its end first).
    Taken take();

private:
    static int on_record(void *self, void *data, size_t size);
    void keep(const jmt_slow_call &call);
    void run();

    size_t cap_;
    ring_buffer *ring_ = nullptr;
    std::mutex ring_mutex_;            // held while ring_ is read (polled or consumed); before mutex_ when both
    std::mutex mutex_;                 // heap_ and dropped_
    std::vector<jmt_slow_call> heap_;  // a min-heap by latency_ns: the fastest kept on top
    uint64_t dropped_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace jmt
