// Reading per-CPU maps: one key's value on every possible CPU.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstddef>
#include <cstdint>
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

// key's values (T, one per possible CPU) of the per-CPU map fd into per_cpu;
// false when the key has no entry.
template <typename T>
bool read_percpu(int fd, uint32_t key, std::vector<T> &per_cpu)
{
    per_cpu.resize(possible_cpus());
    return bpf_map_lookup_elem(fd, &key, per_cpu.data()) == 0;
}

}  // namespace jmt
