#include "control/attach.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/error.h"
#include "util/lifecycle.h"
#include "util/process_handle.h"
#include "util/printable.h"
#include "util/procfs.h"
#include "util/unique_fd.h"

namespace jmt {

namespace {

constexpr int kProtocolVersion = 1;
constexpr size_t kMaxArgs = 3;
constexpr uint64_t kPollStepNs = 20'000'000;         // while waiting for the socket to appear, or to accept
constexpr uint64_t kConnectRetryNs = 5'000'000'000;  // a refusing listener is tried again this long
constexpr size_t kMaxReplyBytes = 1 << 20;

// The JVM's /tmp, resolved inside its root: a link there (absolute or not) is followed as the JVM
// follows it, never out of its root into the host's. Every name the protocol uses is then one
// component under this descriptor, opened without following a link.
UniqueFd open_jvm_tmp(int pid)
{
    const std::string root_path = "/proc/" + std::to_string(pid) + "/root";
    UniqueFd root(open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (root.get() < 0)
        throw Error("cannot open " + root_path + ": " + strerror(errno), errno);
    struct open_how how = {};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    UniqueFd tmp(static_cast<int>(syscall(SYS_openat2, root.get(), "tmp", &how, sizeof(how))));
    if (tmp.get() < 0) {
        const int err = errno;
        throw Error("cannot open the /tmp of " + who(pid) + " inside its root (" + strerror(err) +
                        (err == ENOSYS ? "; Linux 5.6 or newer is needed" : "") + ")",
                    err);
    }
    return tmp;
}

// The entry name in dir is a socket itself (not a link to one).
bool is_socket(int dir, const std::string &name)
{
    struct stat st = {};
    return fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
}

// The trigger file, removed whatever happens.
class Trigger {
public:
    Trigger(int dir, const std::string &name, const AttachIdentity &id) : dir_(dir), name_(name)
    {
        // O_EXCL and O_NOFOLLOW: never a file or link someone else placed; owned
        // by the JVM's user, as JDK 8 requires (later JDKs also take root's).
        const int fd = openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            err_ = errno;
            return;
        }
        created_ = true;
        if (fchown(fd, id.uid, id.gid) != 0)
            err_ = errno;
        close(fd);
    }
    ~Trigger()
    {
        if (created_)
            unlinkat(dir_, name_.c_str(), 0);
    }
    Trigger(const Trigger &) = delete;
    Trigger &operator=(const Trigger &) = delete;
    bool created() const { return created_; }
    int error() const { return err_; }

private:
    int dir_;  // the JVM's /tmp, open while this lives
    std::string name_;
    bool created_ = false;
    int err_ = 0;
};

// Starts the JVM's attach listener: trigger file, SIGQUIT, wait for the socket.
void start_listener(const AttachIdentity &id, const ProcessHandle &jvm, int tmp, const std::string &socket_name,
                    bool attach_disabled, const AttachLimits &limits)
{
    const std::string disabled_fix =
        "it runs with -XX:+DisableAttachMechanism, which jmethodtime needs off to switch the probes on: "
        "restart it without that flag, or with -XX:+DTraceMethodProbes";
    if (attach_disabled)
        throw Error(who(id.pid) + " does not accept attach requests: " + disabled_fix, EPERM);
    if (!id.handles_sigquit)
        throw Error(who(id.pid) + " has no attach socket and does not handle SIGQUIT (started with -Xrs?), which would "
                                  "end it: restart it without -Xrs, or with -XX:+DTraceMethodProbes",
                    ENOTSUP);
    Trigger trigger(tmp, ".attach_pid" + std::to_string(id.ns_pid), id);
    if (!trigger.created())
        throw Error("cannot create the attach trigger in the /tmp of " + who(id.pid) + " (" +
                        strerror(trigger.error()) + "): jmethodtime needs to write the JVM's /tmp as root",
                    trigger.error());
    if (!jvm.signal(SIGQUIT)) {
        const int err = errno;
        throw Error("cannot signal " + who(id.pid) + ": " + strerror(err), err);
    }
    const uint64_t deadline = monotonic_ns() + limits.listener_ns;
    while (!is_socket(tmp, socket_name)) {
        if (!jvm.alive())
            throw Error(who(id.pid) + " exited", ESRCH);
        if (monotonic_ns() >= deadline)
            throw Error(who(id.pid) + " did not open its attach socket within " +
                            std::to_string(limits.listener_ns / 1'000'000'000ULL) +
                            " s of SIGQUIT: it may run with -XX:+DisableAttachMechanism, or be too busy to "
                            "answer; restart it without that flag, or with -XX:+DTraceMethodProbes",
                        ETIMEDOUT);
        const struct timespec step = {0, static_cast<long>(kPollStepNs)};
        nanosleep(&step, nullptr);
    }
}

// A connected socket to the JVM's listener, checked to be that JVM's. The socket is reached through
// a descriptor of it (/proc/self/fd/N), opened in the JVM's /tmp without following a link: no path
// is resolved again. Non-blocking while it connects: a listener whose backlog is full refuses
// (EAGAIN) until its thread accepts again, tried again for up to kConnectRetryNs while the JVM lives.
int connect_listener(const AttachIdentity &id, const ProcessHandle &jvm, int tmp, const std::string &socket_name)
{
    UniqueFd node(openat(tmp, socket_name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st = {};
    if (node.get() < 0 || fstat(node.get(), &st) != 0 || !S_ISSOCK(st.st_mode))
        throw Error("the attach socket /tmp/" + socket_name + " of " + who(id.pid) + " is not a socket (" +
                        (node.get() < 0 ? strerror(errno) : "another kind of file") + "): remove it and try again",
                    node.get() < 0 ? errno : ENOTSOCK);
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d", node.get());
    const uint64_t deadline = monotonic_ns() + kConnectRetryNs;
    int s = -1;
    for (;;) {
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s >= 0 && connect(s, reinterpret_cast<struct sockaddr *>(&addr), sizeof(addr)) == 0)
            break;
        const int err = errno;
        if (s >= 0)
            close(s);
        if ((err != ECONNREFUSED && err != EAGAIN) || monotonic_ns() >= deadline || !jvm.alive() || stop_pending())
            throw Error("cannot connect to " + who(id.pid) + "'s attach socket /tmp/" + socket_name + ": " +
                            strerror(err),
                        err);
        const struct timespec step = {0, static_cast<long>(kPollStepNs)};
        nanosleep(&step, nullptr);
    }
    const int flags = fcntl(s, F_GETFL);
    if (flags >= 0)
        fcntl(s, F_SETFL, flags & ~O_NONBLOCK);
    // The listener is the JVM's, and the JVM is the process examined (alive after the connect:
    // its pid cannot have been reused).
    struct ucred peer = {};
    socklen_t len = sizeof(peer);
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.pid != id.pid || !jvm.alive()) {
        close(s);
        throw Error("the attach socket /tmp/" + socket_name + " of " + who(id.pid) +
                        " does not belong to it (its listener is pid " + std::to_string(peer.pid) +
                        "): remove it and try again",
                    EPERM);
    }
    return s;
}

void send_all(int s, const std::string &data, int pid)
{
    size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = send(s, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = errno;
            throw Error("cannot send the attach request to " + who(pid) + ": " + strerror(err), err);
        }
        sent += static_cast<size_t>(n);
    }
}

std::string read_reply(int s, int pid, uint64_t limit_ns)
{
    const uint64_t deadline = monotonic_ns() + limit_ns;
    std::string reply;
    char buf[4096];
    for (;;) {
        const uint64_t now = monotonic_ns();
        if (now >= deadline)
            throw Error(who(pid) + " did not answer its attach request within " +
                            std::to_string(limit_ns / 1'000'000'000ULL) + " s",
                        ETIMEDOUT);
        struct pollfd p = {s, POLLIN, 0};
        const int ms = static_cast<int>(std::min<uint64_t>((deadline - now) / 1'000'000 + 1, 1000));
        const int r = poll(&p, 1, ms);
        if (r < 0 && errno != EINTR)
            throw Error("waiting for " + who(pid) + "'s attach reply: " + strerror(errno), errno);
        if (stop_pending())
            throw Error("stopped while waiting for " + who(pid) + "'s attach reply", EINTR);
        if (r <= 0)
            continue;
        const ssize_t n = recv(s, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error("reading " + who(pid) + "'s attach reply: " + strerror(errno), errno);
        if (n == 0)
            return reply;
        reply.append(buf, static_cast<size_t>(n));
        if (reply.size() > kMaxReplyBytes)
            return reply;
    }
}

}  // namespace

AttachIdentity parse_attach_identity(int pid, const std::string &status_text)
{
    AttachIdentity id;
    id.pid = pid;
    bool have_ns = false, have_uid = false, have_gid = false;
    std::istringstream in(status_text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string key;
        fields >> key;
        if (key == "NSpid:") {
            int v = 0;
            while (fields >> v)
                id.ns_pid = v;
            have_ns = id.ns_pid > 0;
        } else if (key == "Uid:" || key == "Gid:") {
            unsigned long real = 0, effective = 0;
            if (fields >> real >> effective) {
                (key == "Uid:" ? id.uid : id.gid) = static_cast<uid_t>(effective);
                (key == "Uid:" ? have_uid : have_gid) = true;
            }
        } else if (key == "SigCgt:") {
            std::string mask;
            fields >> mask;
            id.handles_sigquit = !mask.empty() && ((std::stoull(mask, nullptr, 16) >> (SIGQUIT - 1)) & 1);
        }
    }
    if (!have_uid || !have_gid)
        throw Error("cannot read " + who(pid) + "'s owner from /proc/" + std::to_string(pid) + "/status", EINVAL);
    if (!have_ns)
        id.ns_pid = pid;  // kernels before 4.1 have no NSpid line: one pid namespace
    return id;
}

AttachReply attach_request(int pid, uint64_t start_ticks, const std::string &command,
                           const std::vector<std::string> &args, bool attach_disabled, const AttachLimits &limits)
{
    const ProcessHandle jvm(pid, start_ticks);
    const std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
    if (status.empty())
        throw Error("no process with pid " + std::to_string(pid), ESRCH);
    const AttachIdentity id = parse_attach_identity(pid, status);
    // Through the JVM's root: its /tmp, in its mount namespace, resolved there.
    const UniqueFd tmp = open_jvm_tmp(pid);
    const std::string socket_name = ".java_pid" + std::to_string(id.ns_pid);
    if (!is_socket(tmp.get(), socket_name))
        start_listener(id, jvm, tmp.get(), socket_name, attach_disabled, limits);
    const UniqueFd s(connect_listener(id, jvm, tmp.get(), socket_name));
    std::string request = std::to_string(kProtocolVersion) + '\0' + command + '\0';
    for (size_t i = 0; i < kMaxArgs; i++)
        request += (i < args.size() ? args[i] : std::string()) + '\0';
    send_all(s.get(), request, pid);
    const std::string reply = read_reply(s.get(), pid, limits.reply_ns);
    AttachReply out;
    const size_t nl = reply.find('\n');
    const std::string first = reply.substr(0, nl);
    // A status line of 1 to 9 digits after an optional '-': an int, which std::stoi cannot throw on.
    const size_t sign = !first.empty() && first[0] == '-' ? 1 : 0;
    const bool number = first.size() > sign && first.size() - sign <= 9 &&
                        first.find_first_not_of("0123456789", sign) == std::string::npos;
    if (!number)
        throw Error(who(pid) + " answered its attach request with '" + printable(first.substr(0, 80)) +
                        "': not HotSpot's attach protocol",
                    EPROTO);
    out.status = std::stoi(first);
    out.text = nl == std::string::npos ? std::string() : reply.substr(nl + 1);
    return out;
}

}  // namespace jmt
