// Reading the programs' maps as the types bpf/jmethodtime.h declares them with:
// every read of a map in user space goes through one MapReader<K, V>, whose key
// and value sizes are checked against the map's own when it comes from a
// bpf_map (map_reader), so a reader of the wrong type fails at load, not with
// garbage.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace jmt {

// Possible CPUs: the value count of a per-CPU map lookup; throws when unknown.
inline size_t possible_cpus()
{
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0)
        throw Error("cannot count the possible CPUs", -ncpu);
    return static_cast<size_t>(ncpu);
}

template <typename K, typename V>
class MapReader {
public:
    MapReader() = default;
    // A map known by its fd only (an inner map of an array of maps); -1: none.
    explicit MapReader(int fd) : fd_(fd) {}

    int fd() const { return fd_; }

    // key's value; false when the key has no entry (or there is no map).
    bool lookup(const K &key, V &value) const { return fd_ >= 0 && bpf_map_lookup_elem(fd_, &key, &value) == 0; }

    // A per-CPU map's value of key on every possible CPU (V is 8-byte aligned
    // in size, as the kernel lays per-CPU values out); false without an entry.
    bool lookup_per_cpu(const K &key, std::vector<V> &per_cpu) const
    {
        static_assert(sizeof(V) % 8 == 0, "a per-CPU value is read in 8-byte slots");
        per_cpu.resize(possible_cpus());
        return fd_ >= 0 && bpf_map_lookup_elem(fd_, &key, per_cpu.data()) == 0;
    }

    // Every entry of a hash map: in batches of kBatch (one system call each),
    // or key by key where the kernel refuses batches. An entry added or
    // deleted meanwhile may be missed; what was read stays.
    std::vector<std::pair<K, V>> entries() const
    {
        std::vector<std::pair<K, V>> out;
        if (fd_ < 0)
            return out;
        constexpr uint32_t kBatch = 4096;
        std::vector<K> keys(kBatch);
        std::vector<V> values(kBatch);
        K in_batch{}, out_batch{};  // the kernel's position token (at most a key's size)
        for (bool first = true;; first = false) {
            uint32_t count = kBatch;
            const int err = bpf_map_lookup_batch(fd_, first ? nullptr : &in_batch, &out_batch, keys.data(),
                                                 values.data(), &count, nullptr);
            const int e = err ? errno : 0;
            if (err && e != ENOENT) {
                if (first && (e == EINVAL || e == ENOTSUP || e == EOPNOTSUPP))
                    return entries_key_by_key();
                break;  // a bucket changed under the batch
            }
            for (uint32_t i = 0; i < count && i < kBatch; i++)
                out.emplace_back(keys[i], values[i]);
            if (err)  // ENOENT: the last batch
                break;
            in_batch = out_batch;
        }
        return out;
    }

private:
    std::vector<std::pair<K, V>> entries_key_by_key() const
    {
        std::vector<std::pair<K, V>> out;
        K key{}, next{};
        bool have = false;
        while (bpf_map_get_next_key(fd_, have ? &key : nullptr, &next) == 0) {
            key = next;
            have = true;
            V value{};
            if (bpf_map_lookup_elem(fd_, &key, &value) == 0)
                out.emplace_back(key, value);
        }
        return out;
    }

    int fd_ = -1;
};

// The reader of a loaded map; throws jmt::Error when K or V is not the size
// the map was declared with (a build problem: the ABI header and the programs
// disagree).
template <typename K, typename V>
MapReader<K, V> map_reader(const bpf_map *map)
{
    if (bpf_map__key_size(map) != sizeof(K) || bpf_map__value_size(map) != sizeof(V))
        throw Error(std::string("the BPF map ") + bpf_map__name(map) + " has keys of " +
                    std::to_string(bpf_map__key_size(map)) + " bytes and values of " +
                    std::to_string(bpf_map__value_size(map)) + ", its reader " + std::to_string(sizeof(K)) + " and " +
                    std::to_string(sizeof(V)) + ": rebuild jmethodtime");
    return MapReader<K, V>(bpf_map__fd(map));
}

}  // namespace jmt
