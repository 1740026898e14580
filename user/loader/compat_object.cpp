// The compat BPF object's ELF bytes (bpf/compat.bpf.h), in a translation unit of their own: its
// skeleton header's types have other names than jmethodtime.skel.h's, which opens the bytes.
#include "loader/compat_object.h"

#include "jmethodtime.h"  // the types of the skeleton's globals
#include "jmethodtime_compat.skel.h"

namespace jmt {

const void *compat_object_bytes(size_t *size) { return jmethodtime_compat_bpf__elf_bytes(size); }

}  // namespace jmt
