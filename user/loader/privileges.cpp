#include "loader/privileges.h"

#include <linux/capability.h>
#include <unistd.h>

#include <cerrno>

#include "util/error.h"
#include "util/procfs.h"

namespace jmt {

void check_privileges()
{
    if (geteuid() == 0)
        return;
    const uint64_t caps = effective_capabilities(read_file("/proc/self/status"));
    auto has = [caps](int cap) { return (caps >> cap) & 1; };
    if (has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON)))
        return;
    throw Error("not enough privilege to load BPF programs (uid " + std::to_string(geteuid()) +
                    "): run jmethodtime as root (sudo), or give it CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE",
                EPERM);
}

}  // namespace jmt
