// jmt-floor -p PID: attaches programs that do nothing to the JVM's method probes
// and waits like jmethodtime does. The benchmark's floor: the trap cost alone.
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "util/error.h"
#include "floor.skel.h"
#include "jvm/jvm.h"
#include "util/lifecycle.h"
#include "loader/tracer.h"

namespace {

struct SkelDeleter {
    void operator()(floor_bpf *skel) const { floor_bpf__destroy(skel); }
};

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 3 || std::string(argv[1]) != "-p") {
        std::cerr << "usage: jmt-floor -p PID\n";
        return 2;
    }
    try {
        jmt::check_kernel();
        const int pid = std::stoi(argv[2]);
        jmt::JvmTarget target = jmt::inspect_target(pid);
        jmt::StopSignals stop;
        std::unique_ptr<floor_bpf, SkelDeleter> skel(floor_bpf__open_and_load());
        if (!skel) {
            int err = errno;
            throw jmt::Error(std::string("cannot load the floor programs: ") + strerror(err), err);
        }
        const std::vector<jmt::LinkPtr> links =
            jmt::attach_entry_return(skel->progs.floor_entry, skel->progs.floor_return, pid, target.libjvm, "hotspot");
        std::cerr << "Tracing (floor: empty programs) pid " << pid << std::endl;
        jmt::wait_for_end(stop, pid, 0);
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "jmt-floor: " << e.what() << std::endl;
        return 1;
    }
}
