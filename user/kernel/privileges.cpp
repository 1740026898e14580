#include "kernel/privileges.h"

#include <unistd.h>

#include <cerrno>

#include "util/error.h"
#include "util/procfs.h"

namespace jmt {

void check_privileges()
{
    if (geteuid() == 0)
        return;
    constexpr int kCapSysAdmin = 21, kCapPerfmon = 38, kCapBpf = 39;
    const uint64_t caps = effective_capabilities(read_file("/proc/self/status"));
    auto has = [caps](int cap) { return (caps >> cap) & 1; };
    if (has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon)))
        return;
    throw Error("not enough privilege to load BPF programs (uid " + std::to_string(geteuid()) +
                    "): run jmethodtime as root (sudo), or give it CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE",
                EPERM);
}

}  // namespace jmt
