#include "control/agent.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <vector>

#include "util/error.h"
#include "util/lifecycle.h"
#include "util/mapped_path.h"
#include "util/printable.h"
#include "util/procfs.h"

namespace jmt {

namespace {

constexpr char kWatchFifo[] = "owner";

std::string random_hex(size_t digits)
{
    unsigned char bytes[16] = {};
    if (getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes)))
        throw Error("getrandom failed: " + std::string(strerror(errno)), errno);
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; out.size() < digits; i++) {
        out += hex[bytes[i % sizeof(bytes)] >> 4];
        out += hex[bytes[i % sizeof(bytes)] & 15];
    }
    return out.substr(0, digits);
}

// A directory of the JVM's mount namespace (path absolute there) opened so that nobody but root
// can change what is under it: each component, from the JVM's root down, is a directory (no
// link followed) that is root's (or the owner's of that root: a user namespace's root) and
// either writable by its owner alone or sticky (as /tmp is, where nobody may move another
// user's entries). -1 (errno set) otherwise.
int open_trusted_dir(int pid, const std::string &path)
{
    int fd = open(("/proc/" + std::to_string(pid) + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat root_st = {};
    if (fd >= 0 && fstat(fd, &root_st) != 0) {
        close(fd);
        return -1;
    }
    size_t at = 1;
    while (fd >= 0) {
        struct stat st = {};
        if (fstat(fd, &st) != 0 || (st.st_uid != 0 && st.st_uid != root_st.st_uid) ||
            ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
            close(fd);
            errno = EPERM;
            return -1;
        }
        if (at >= path.size())
            return fd;
        const size_t end = std::min(path.find('/', at), path.size());
        const std::string name = path.substr(at, end - at);
        at = end + 1;
        if (name.empty() || name == "." || name == "..") {
            close(fd);
            errno = EINVAL;
            return -1;
        }
        const int next = openat(fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
    }
    return -1;
}

// The agent's file in a private directory made in parent (a directory of the JVM's mount
// namespace that only root can change, open_trusted_dir), removed (file and directory) when
// this goes. The directory is root's (0711), made with mkdir (which fails on anything already
// there) and opened without following links; the file is created with O_EXCL in it and is
// root's (0644): nobody but root can change what the JVM loads.
class PlacedAgent {
public:
    // dir_in_jvm: "PARENT/.jmethodtime-HEX": that name again (an agent the JVM loaded from it); empty: a
    // new name in parent.
    PlacedAgent(int pid, const std::string &parent, std::string dir_in_jvm)
    {
        if (dir_in_jvm.empty())
            dir_in_jvm = (parent == "/" ? "" : parent) + "/" + kAgentDirPrefix + random_hex(kAgentDirRandomHex);
        const size_t slash = dir_in_jvm.rfind('/');
        parent_fd_ = open_trusted_dir(pid, slash == 0 ? "/" : dir_in_jvm.substr(0, slash));
        if (parent_fd_ < 0)
            fail("cannot use " + dir_in_jvm.substr(0, slash) + " in " + who(pid) +
                     "'s mount namespace for the agent: it must be a directory only root can change",
                 errno);
        dir_name_ = dir_in_jvm.substr(slash + 1);
        if (mkdirat(parent_fd_, dir_name_.c_str(), 0711) != 0)
            fail("cannot create " + dir_in_jvm + " in " + who(pid) + "'s mount namespace" +
                     (errno == EEXIST ? " (it exists and is not this jmethodtime's: remove it)" : ""),
                 errno);
        made_dir_ = true;
        dir_fd_ = openat(parent_fd_, dir_name_.c_str(), O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st = {};
        if (dir_fd_ < 0 || fstat(dir_fd_, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022))
            fail("cannot use " + dir_in_jvm + " in " + who(pid) + "'s mount namespace: not the directory just made",
                 EPERM);
        fchmod(dir_fd_, 0711);  // whatever the umask
        const int fd = openat(dir_fd_, kAgentFile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
            fail("cannot create the agent in " + dir_in_jvm, errno);
        made_file_ = true;
        const AgentImage image = agent_image();
        size_t written = 0;
        while (written < image.size) {
            const ssize_t n = write(fd, image.bytes + written, image.size - written);
            if (n <= 0) {
                const int err = errno;
                close(fd);
                fail("cannot write the agent to " + dir_in_jvm, err);
            }
            written += static_cast<size_t>(n);
        }
        fchmod(fd, 0644);
        close(fd);
        path_ = dir_in_jvm + "/" + kAgentFile;
    }
    ~PlacedAgent() { cleanup(); }
    PlacedAgent(const PlacedAgent &) = delete;
    PlacedAgent &operator=(const PlacedAgent &) = delete;
    const std::string &path() const { return path_; }
    // A FIFO beside the agent (root's, 0644: the JVM's user may read it), opened read-write
    // so that the agent's read end sees a writer; its path as the JVM sees it goes to *path.
    UniqueFd make_fifo(std::string *path)
    {
        if (mknodat(dir_fd_, kWatchFifo, S_IFIFO | 0600, 0) != 0)
            fail("cannot create the owner's FIFO in " + path_.substr(0, path_.rfind('/')), errno);
        made_fifo_ = true;
        UniqueFd fd(openat(dir_fd_, kWatchFifo, O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        if (fd.get() < 0 || fchmod(fd.get(), 0644) != 0)
            fail("cannot open the owner's FIFO in " + path_.substr(0, path_.rfind('/')), errno);
        *path = path_.substr(0, path_.rfind('/') + 1) + kWatchFifo;
        return fd;
    }

private:
    [[noreturn]] void fail(const std::string &what, int err)
    {
        cleanup();
        throw Error(what + ": " + strerror(err), err);
    }
    void cleanup()
    {
        if (made_file_ && dir_fd_ >= 0)
            unlinkat(dir_fd_, kAgentFile, 0);
        if (made_fifo_ && dir_fd_ >= 0)
            unlinkat(dir_fd_, kWatchFifo, 0);
        if (made_dir_ && parent_fd_ >= 0)
            unlinkat(parent_fd_, dir_name_.c_str(), AT_REMOVEDIR);
        made_file_ = made_dir_ = made_fifo_ = false;
        for (int *fd : {&dir_fd_, &parent_fd_})
            if (*fd >= 0) {
                close(*fd);
                *fd = -1;
            }
    }
    int parent_fd_ = -1, dir_fd_ = -1;
    bool made_dir_ = false, made_file_ = false, made_fifo_ = false;
    std::string dir_name_, path_;
};

std::string op_name(uint32_t op)
{
    switch (op) {
    case JMT_OP_BEGIN: return "begin";
    case JMT_OP_ARM: return "arm";
    case JMT_OP_SWITCH: return "switch";
    case JMT_OP_RESTORE: return "restore";
    case JMT_OP_STANDBY: return "standby";
    case JMT_OP_DEFER: return "defer";
    default: return "request";
    }
}

// The reply to "load": HotSpot ran Agent_OnAttach and it returned 0 ("return
// code: 0" from JDK 11 on, "0" on JDK 8), or the reason it did not.
void check_load_reply(int pid, const AttachReply &reply)
{
    std::string text = reply.text;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    if (reply.status == 0 && (text == "return code: 0" || text == "0"))
        return;
    if (text.find("Dynamic agent loading is not enabled") != std::string::npos)
        throw Error(who(pid) + " runs with -XX:-EnableDynamicAgentLoading, and jmethodtime switches the probes on "
                               "through a small agent: restart it without that flag (or with "
                               "-XX:+EnableDynamicAgentLoading), or with -XX:+DTraceMethodProbes",
                    EPERM);
    for (char &c : text)
        if (c == '\n')
            c = ' ';
    // "... was not loaded. ...: failed to map segment from shared object": a filesystem mounted noexec.
    const bool unmappable = text.find("was not loaded") != std::string::npos;
    throw Error(who(pid) + " did not load jmethodtime's agent (attach status " + std::to_string(reply.status) +
                    (text.empty() ? "" : ": " + printable(text.substr(0, 400))) + ")",
                unmappable ? ENOEXEC : EPROTO);
}

// The flock that makes agent requests to pid one at a time (AgentPlace::lock_path), held while the
// descriptor lives; waited for at most limit_ns, or until a stop signal.
UniqueFd lock_requests(int pid, const std::string &path, uint64_t limit_ns)
{
    if (path.empty())
        return UniqueFd();
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
        throw Error("cannot open " + path + " to take turns with other tracers of " + who(pid) + ": " + strerror(errno),
                    errno);
    const uint64_t deadline = monotonic_ns() + limit_ns;
    while (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR)
            throw Error("cannot lock " + path + " for " + who(pid) + "'s agent: " + strerror(errno), errno);
        if (monotonic_ns() >= deadline || stop_pending())
            throw Error("another tracer's request to " + who(pid) + "'s agent did not end in time", ETIMEDOUT);
        const struct timespec step = {0, 20'000'000};
        nanosleep(&step, nullptr);
    }
    return fd;
}

}  // namespace

std::string agent_error_text(const jmt_agent_state &state)
{
    switch (state.last_error) {
    case JMT_AGENT_OK: return "no error";
    case JMT_AGENT_BAD_REQUEST: return "a request it could not read";
    case JMT_AGENT_NO_JVMTI: return "the JVM gave it no JVMTI environment";
    case JMT_AGENT_NO_CAPABILITY: return "the JVM refused it the capability to retransform classes";
    case JMT_AGENT_BUSY: return "another jmethodtime that still runs holds the JVM";
    case JMT_AGENT_BAD_FLAG:
        return "the DTraceMethodProbes address it was given is not in libjvm's writable data, or does not hold 0 "
               "or 1 (nothing changed)";
    default: return "JVMTI error " + std::to_string(state.last_jvmti_error) + " in its " + op_name(state.last_op);
    }
}

jmt_agent_state agent_request(int pid, const std::string &options, const AgentPlace &place, const AttachLimits &limits,
                              UniqueFd *watch)
{
    if (options.size() > JMT_AGENT_OPTIONS_MAX)
        throw Error("an agent request of " + std::to_string(options.size()) + " bytes, over the " +
                        std::to_string(JMT_AGENT_OPTIONS_MAX) + " HotSpot takes",
                    E2BIG);
    const UniqueFd lock = lock_requests(pid, place.lock_path, limits.reply_ns);
    const std::optional<LoadedAgent> before = find_agent(pid);
    // A JVM loads the agent once. The first load names the placed file as self=, which the
    // agent keeps open (own_fd): later loads name /proc/self/fd/N, that same file, which every
    // dynamic linker finds among its objects (musl's only by device and inode). An agent without
    // it (no /proc in the JVM's root) is asked by its own path, placed again in a directory of
    // that name made anew, which glibc finds by name. The first load tries /tmp, then
    // place.fallback_dir (a /tmp mounted noexec cannot hold code to map; a /tmp that is a link,
    // or that someone but root can change, cannot hold it safely).
    const bool own_fd = before && before->state.own_fd >= 0;
    std::vector<std::string> parents = {"/tmp"};
    if (!place.fallback_dir.empty())
        parents.push_back(place.fallback_dir);
    std::string first_error;
    for (const std::string &parent : parents) {
        const std::string dir = before ? before->path.substr(0, before->path.rfind('/')) : std::string();
        std::optional<PlacedAgent> placed;
        try {
            placed.emplace(pid, parent, dir);
        } catch (const Error &e) {
            // A first load goes on to the next directory when this one cannot hold the agent.
            if (before || parent == parents.back())
                throw;
            first_error = e.what();
            continue;
        }
        try {
            std::string fifo;
            UniqueFd held = watch ? placed->make_fifo(&fifo) : UniqueFd();
            const std::string request = options + (watch ? ";watch=" + fifo : "");
            const auto load = [&](const std::string &path, const std::string &extra) {
                check_load_reply(pid, attach_request(pid, place.start_ticks, "load", {path, "true", request + extra},
                                                     place.attach_disabled, limits));
            };
            if (!own_fd) {
                load(placed->path(), before ? "" : ";self=" + placed->path());
            } else {
                try {
                    load("/proc/self/fd/" + std::to_string(before->state.own_fd), "");
                } catch (const Error &e) {
                    if (e.error_number() != ENOEXEC)  // not loaded: a JVM's root without /proc
                        throw;
                    load(placed->path(), "");
                }
            }
            if (watch)
                *watch = std::move(held);
            first_error.clear();
            break;
        } catch (const Error &e) {
            // Only a JVM that could not map the file is asked again, elsewhere.
            if (before || e.error_number() != ENOEXEC)
                throw;
            if (first_error.empty())
                first_error = e.what();
        }
    }
    if (!first_error.empty())
        throw Error(first_error, ENOEXEC);
    const std::optional<LoadedAgent> after = find_agent(pid);
    if (!after || (before && after->state.requests == before->state.requests))
        throw Error(who(pid) + " answered the agent request, but its agent did not run it: restart the JVM "
                               "to trace it with this jmethodtime",
                    EPROTO);
    if (after->state.last_error == JMT_AGENT_BUSY)
        throw Error(who(pid) + "'s method probes are held by another jmethodtime (pid " +
                        std::to_string(after->state.owner_pid) +
                        " in its own pid namespace), which still runs: stop it, or trace once it ends",
                    EBUSY);
    if (after->state.last_error != JMT_AGENT_OK)
        throw Error(who(pid) + ": jmethodtime's agent failed: " + agent_error_text(after->state), EPROTO);
    return after->state;
}

}  // namespace jmt
