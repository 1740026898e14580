// jmethodtime_compat.bpf.o (bpf/compat.bpf.h): the programs for kernels without bpf_loop, with
// the same programs, maps and globals as jmethodtime.bpf.o, so jmethodtime.skel.h opens either.
#pragma once

#include <cstddef>

namespace jmt {

// The compat object's ELF image, embedded in the binary; *size its bytes.
const void *compat_object_bytes(size_t *size);

}  // namespace jmt
