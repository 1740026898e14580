#include "run.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "error.h"
#include "jvm.h"
#include "report.h"
#include "tracer.h"

namespace jmt {

namespace {

uint64_t monotonic_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// Closes a file descriptor on scope exit.
struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    ~Fd()
    {
        if (fd >= 0)
            close(fd);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
};

// Blocks SIGINT/SIGTERM for the process and restores the mask on scope exit,
// so the signals are read from a signalfd instead of killing the tool mid-attach.
struct BlockedSignals {
    sigset_t set{}, old{};
    BlockedSignals()
    {
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        sigprocmask(SIG_BLOCK, &set, &old);
    }
    ~BlockedSignals() { sigprocmask(SIG_SETMASK, &old, nullptr); }
};

enum class EndReason { Signal, Duration, TargetExited };

void check_kernel()
{
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
        throw Error("the kernel has no BTF (/sys/kernel/btf/vmlinux is missing): use a kernel built with "
                    "CONFIG_DEBUG_INFO_BTF=y (most distributions since 2021)",
                    ENOENT);
}

// Waits for a signal, the duration, or the target's exit.
EndReason wait_for_end(int signal_fd, int pid, double duration_s)
{
    Fd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    const uint64_t deadline = duration_s > 0 ? monotonic_ns() + static_cast<uint64_t>(duration_s * 1e9) : 0;
    for (;;) {
        int timeout_ms = pidfd.fd >= 0 ? -1 : 200;  // without pidfd, poll the pid
        if (deadline) {
            uint64_t now = monotonic_ns();
            if (now >= deadline)
                return EndReason::Duration;
            int left = static_cast<int>((deadline - now + 999999) / 1000000);
            timeout_ms = timeout_ms < 0 ? left : std::min(timeout_ms, left);
        }
        struct pollfd fds[2] = {{signal_fd, POLLIN, 0}, {pidfd.fd, POLLIN, 0}};
        int n = poll(fds, pidfd.fd >= 0 ? 2 : 1, timeout_ms);
        if (n < 0 && errno != EINTR)
            throw Error(std::string("poll failed: ") + strerror(errno), errno);
        if (n > 0 && (fds[0].revents & POLLIN)) {
            // Consume it: a signal left pending would be delivered when the mask is restored.
            struct signalfd_siginfo info;
            ssize_t got = read(signal_fd, &info, sizeof(info));
            (void)got;
            return EndReason::Signal;
        }
        if (n > 0 && pidfd.fd >= 0 && (fds[1].revents & POLLIN))
            return EndReason::TargetExited;
        if (pidfd.fd < 0 && kill(pid, 0) != 0 && errno == ESRCH)
            return EndReason::TargetExited;
    }
}

std::string describe_packages(const std::vector<std::string> &packages)
{
    if (packages.empty())
        return "all methods";
    std::string s = "packages ";
    for (size_t i = 0; i < packages.size(); i++)
        s += (i ? ", " : "") + packages[i];
    return s;
}

}  // namespace

int run(const Options &options)
{
    try {
        check_kernel();
        JvmTarget target = inspect_target(options.pid);

        BlockedSignals blocked;
        Fd signal_fd(signalfd(-1, &blocked.set, SFD_CLOEXEC | SFD_NONBLOCK));
        if (signal_fd.fd < 0)
            throw Error(std::string("signalfd failed: ") + strerror(errno), errno);

        TracerConfig config;
        config.pid = options.pid;
        config.libjvm = target.libjvm;
        config.packages = options.packages;
        config.arg_regs = target.arg_regs;
        config.verbose = options.verbose;
        auto tracer = std::make_unique<Tracer>(config);

        const uint64_t start_ns = monotonic_ns();
        std::cerr << "Tracing " << describe_packages(options.packages) << " in pid " << options.pid << " ("
                  << target.comm << "); Ctrl-C or SIGTERM to stop" << std::endl;
        EndReason reason = wait_for_end(signal_fd.fd, options.pid, options.duration_s);
        const uint64_t end_ns = monotonic_ns();

        Profile profile;
        Snapshot snap = tracer->snapshot();
        tracer.reset();  // detach before formatting: the JVM runs untraced from here
        profile.pid = options.pid;
        profile.duration_ns = end_ns - start_ns;
        profile.packages = options.packages;
        profile.methods = std::move(snap.methods);
        profile.diag = snap.diag;

        if (reason == EndReason::TargetExited)
            std::cerr << "Target pid " << options.pid << " exited; detached" << std::endl;
        else
            std::cerr << "Detached from pid " << options.pid << std::endl;

        if (options.json) {
            write_json(std::cout, profile);
        } else {
            TableOptions table;
            table.top = options.top;
            table.sort = options.sort;
            write_table(std::cout, profile, table);
        }
        std::cout.flush();
        return 0;
    } catch (const Error &e) {
        std::cerr << "jmethodtime: " << e.what() << std::endl;
        return 1;
    }
}

}  // namespace jmt
