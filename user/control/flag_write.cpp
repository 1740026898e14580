#include "control/flag_write.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "util/error.h"
#include "util/process_handle.h"
#include "util/procfs.h"

namespace jmt {

namespace {

bool is_libjvm(const MapsEntry &e)
{
    static const std::string name = "/libjvm.so";
    return e.path.size() >= name.size() && e.path.compare(e.path.size() - name.size(), name.size(), name) == 0;
}

bool writable(const MapsEntry &e) { return e.perms.size() >= 2 && e.perms[1] == 'w'; }

std::string hex(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace

std::string flag_address_problem(const std::string &maps_text, uint64_t addr)
{
    const std::vector<MapsEntry> maps = parse_maps(maps_text);
    for (size_t i = 0; i < maps.size(); i++) {
        const MapsEntry &e = maps[i];
        if (addr < e.start || addr >= e.end)
            continue;
        const std::string where = e.path.empty() ? "anonymous memory" : e.path;
        if (!writable(e))
            return "it is in read-only memory (" + e.perms + " " + where + ")";
        if (is_libjvm(e))
            return "";
        // libjvm's .bss: the anonymous mapping right after its writable data.
        if (e.path.empty() && i > 0 && maps[i - 1].end == e.start && is_libjvm(maps[i - 1]) && writable(maps[i - 1]))
            return "";
        return "it is not in libjvm.so's data (" + e.perms + " " + where + ")";
    }
    return "nothing is mapped there";
}

void write_flag(const ProcessHandle &jvm, uint64_t addr, uint8_t value)
{
    const int pid = jvm.pid();
    const std::string refused = "refused to write DTraceMethodProbes at " + hex(addr) + " in " + who(pid) + ": ";
    const std::string fix = ": this JVM build's flag table was not read right; start it with -XX:+DTraceMethodProbes";
    jvm.check_alive("its DTraceMethodProbes was written");
    const std::string problem = flag_address_problem(read_file("/proc/" + std::to_string(pid) + "/maps"), addr);
    if (!problem.empty())
        throw Error(refused + problem + fix, EFAULT);
    errno = 0;
    const std::string bytes = read_target_memory(pid, addr, 1);
    if (bytes.size() != 1) {
        const int err = errno ? errno : EFAULT;
        throw Error("cannot read " + who(pid) + "'s memory (" + strerror(err) +
                        "): run jmethodtime as root, where it may ptrace the JVM",
                    err);
    }
    const auto now = static_cast<uint8_t>(bytes[0]);
    if (now > 1)
        throw Error(refused + "the byte there is " + std::to_string(now) + ", not a flag's 0 or 1" + fix, EFAULT);
    // The process read was the one examined: alive after it, its pid was not reused before it.
    jvm.check_alive("its DTraceMethodProbes was written");
    struct iovec local = {&value, 1};
    struct iovec remote = {reinterpret_cast<void *>(static_cast<uintptr_t>(addr)), 1};
    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != 1) {
        const int err = errno;
        throw Error("cannot write " + who(pid) + "'s memory (" + strerror(err) +
                        "): run jmethodtime as root, where it may ptrace the JVM",
                    err);
    }
}

}  // namespace jmt
