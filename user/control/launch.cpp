#include "control/launch.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "util/error.h"
#include "util/procfs.h"

extern char **environ;

namespace jmt {

namespace {

constexpr unsigned kCloseRangeCloexec = 1U << 2;  // linux/close_range.h's CLOSE_RANGE_CLOEXEC
constexpr int kMaxFdMarked = 65536;               // where close_range is missing: descriptors 3 to this

std::string base_name(const std::string &path)
{
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_name(const std::string &path)
{
    size_t slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}

bool executable(const std::string &path) { return access(path.c_str(), X_OK) == 0; }

std::string real_path(const std::string &path)
{
    char buf[PATH_MAX];
    return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

}  // namespace

std::string find_executable(const std::string &name, const std::string &path_env)
{
    if (name.find('/') != std::string::npos)
        return executable(name) ? name : std::string();
    std::istringstream dirs(path_env);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        // An empty entry would be the working directory: root never runs a command found there.
        if (dir.empty())
            continue;
        std::string candidate = dir + "/" + name;
        if (executable(candidate))
            return candidate;
    }
    return {};
}

std::vector<std::string> libjvm_candidates(const std::string &java_home)
{
    // JDK 8 keeps libjvm under jre/lib/<its architecture's name>.
#if defined(__aarch64__)
    const char *jdk8_arch = "aarch64";
#else
    const char *jdk8_arch = "amd64";
#endif
    return {java_home + "/lib/server/libjvm.so", java_home + "/lib/client/libjvm.so",
            java_home + "/jre/lib/" + jdk8_arch + "/server/libjvm.so"};
}

LaunchPlan plan_launch(const std::vector<std::string> &command, const std::string &path_env)
{
    if (command.empty())
        throw Error("no command to launch: give one after --, e.g. jmethodtime -- java -cp app.jar Main", EINVAL);
    const std::string found = find_executable(command[0], path_env);
    if (found.empty())
        throw Error("cannot find the command '" + command[0] + "': give the java launcher's path or put it on PATH",
                    ENOENT);
    LaunchPlan plan;
    plan.java = real_path(found);
    if (base_name(plan.java) != "java")
        throw Error("launch mode runs a java launcher, and " + command[0] + " is " + plan.java +
                        ": give `-- java ...` (or the path of a JDK's bin/java); to trace a JVM started by "
                        "a script, start the script and use -p PID",
                    EINVAL);
    for (size_t i = 1; i < command.size(); i++)
        if (command[i] == "-XX:-DTraceMethodProbes")
            throw Error("the command switches the method probes off (-XX:-DTraceMethodProbes): remove that "
                        "option, jmethodtime adds -XX:+DTraceMethodProbes itself",
                        EINVAL);
    const std::string home = dir_name(dir_name(plan.java));
    for (const std::string &candidate : libjvm_candidates(home))
        if (access(candidate.c_str(), R_OK) == 0) {
            plan.libjvm = candidate;
            break;
        }
    if (plan.libjvm.empty())
        throw Error("no libjvm.so under " + home + " (the JDK of " + plan.java +
                        "): give the java launcher of a full JDK or JRE",
                    ENOENT);
    plan.argv = command;
    plan.argv[0] = found;
    plan.argv.insert(plan.argv.begin() + 1, kProbeFlag);
    return plan;
}

namespace {

// One line of /etc/passwd. Read as a file, not through NSS (getpwnam): the
// static binary carries no NSS modules; users of LDAP and the like are given
// by uid (-u 1234).
struct PasswdEntry {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string home;
};

// The group of a uid no /etc/passwd entry names: nogroup's, no group's rights.
constexpr gid_t kNoGroup = 65534;

// ':'-separated fields of a line of /etc/passwd or /etc/group.
std::vector<std::string> fields_of(const std::string &line)
{
    std::vector<std::string> f;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, ':');)
        f.push_back(field);
    return f;
}

bool all_digits(const std::string &s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// The entry whose name (or, numeric, whose uid) is who.
std::optional<PasswdEntry> passwd_entry(const std::string &who, const std::string &passwd_text)
{
    std::istringstream in(passwd_text);
    for (std::string line; std::getline(in, line);) {
        const std::vector<std::string> f = fields_of(line);
        if (f.size() < 4 || !all_digits(f[2]) || !all_digits(f[3]) || f[2].size() > 9 || f[3].size() > 9)
            continue;
        if (f[0] == who || (all_digits(who) && f[2] == who))
            return PasswdEntry{f[0], static_cast<uid_t>(std::stoul(f[2])), static_cast<gid_t>(std::stoul(f[3])),
                               f.size() > 5 && !f[5].empty() ? f[5] : "/"};
    }
    return std::nullopt;
}

// gid, then every group of /etc/group that lists user as a member.
std::vector<gid_t> groups_of(const std::string &user, gid_t gid, const std::string &group_text)
{
    std::vector<gid_t> groups = {gid};
    std::istringstream in(group_text);
    for (std::string line; std::getline(in, line);) {
        const std::vector<std::string> f = fields_of(line);
        if (f.size() < 4 || !all_digits(f[2]))
            continue;
        std::istringstream members(f[3]);
        for (std::string m; std::getline(members, m, ',');)
            if (m == user && static_cast<gid_t>(std::stoul(f[2])) != gid)
                groups.push_back(static_cast<gid_t>(std::stoul(f[2])));
    }
    return groups;
}

}  // namespace

RunAs resolve_run_as(const std::string &user, const std::string &sudo_uid, const std::string &sudo_gid)
{
    RunAs r;
    if (user.empty() && (sudo_uid.empty() || sudo_uid == "0"))
        return r;  // root, as this process
    const std::string who = user.empty() ? sudo_uid : user;
    const std::optional<PasswdEntry> pw = passwd_entry(who, read_file("/etc/passwd"));
    if (!pw && (!all_digits(who) || who.size() > 9))
        throw Error("-u " + who + ": no such user: give a user name or a numeric uid (-u root keeps root)");
    r.uid = pw ? pw->uid : static_cast<uid_t>(std::stoul(who));
    r.gid = user.empty() && all_digits(sudo_gid) && sudo_gid.size() <= 9 ? static_cast<gid_t>(std::stoul(sudo_gid))
                                                                         : (pw ? pw->gid : kNoGroup);
    r.name = pw ? pw->name : who;
    r.home = pw ? pw->home : "/";
    r.groups = pw ? groups_of(pw->name, r.gid, read_file("/etc/group")) : std::vector<gid_t>{r.gid};
    r.change = r.uid != 0 || r.gid != 0;
    if (user.empty())
        r.note = "jmethodtime: running the command as " + r.name + " (uid " + std::to_string(r.uid) +
                 ", who ran sudo); -u root runs it as root";
    return r;
}

std::vector<std::string> command_environment(char *const *environment, const RunAs &run_as)
{
    std::vector<std::string> env;
    auto is = [](const std::string &entry, const char *name) {
        const size_t n = strlen(name);
        return entry.compare(0, n, name) == 0 && entry.size() > n && entry[n] == '=';
    };
    for (char *const *e = environment; e && *e; e++) {
        const std::string entry = *e;
        if (run_as.change && (is(entry, "HOME") || is(entry, "USER") || is(entry, "LOGNAME")))
            continue;
        env.push_back(entry);
    }
    if (run_as.change) {
        env.push_back("HOME=" + (run_as.home.empty() ? std::string("/") : run_as.home));
        env.push_back("USER=" + run_as.name);
        env.push_back("LOGNAME=" + run_as.name);
    }
    return env;
}

LaunchedCommand::LaunchedCommand(const std::vector<std::string> &argv, const RunAs &run_as) : name_(argv.at(0))
{
    int gate[2], status[2];
    if (pipe2(gate, O_CLOEXEC))
        throw Error(std::string("pipe failed: ") + strerror(errno), errno);
    if (pipe2(status, O_CLOEXEC)) {
        int err = errno;
        close(gate[0]);
        close(gate[1]);
        throw Error(std::string("pipe failed: ") + strerror(err), err);
    }
    // Built before fork: the child only makes async-signal-safe calls.
    std::vector<char *> args;
    for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    const std::vector<std::string> env_text = command_environment(environ, run_as);
    std::vector<char *> env;
    for (const std::string &e : env_text)
        env.push_back(const_cast<char *>(e.c_str()));
    env.push_back(nullptr);

    pid_ = fork();
    if (pid_ < 0) {
        int err = errno;
        for (int fd : {gate[0], gate[1], status[0], status[1]})
            close(fd);
        throw Error(std::string("fork failed: ") + strerror(err), err);
    }
    if (pid_ == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        close(gate[1]);
        close(status[0]);
        char go;
        ssize_t n;
        do {
            n = read(gate[0], &go, 1);
        } while (n < 0 && errno == EINTR);
        if (n != 1)
            _exit(127);  // the tracer went away before attaching: run nothing
        close(gate[0]);
        // The user's groups, then its gid, then its uid: after setuid nothing can be changed back.
        if (run_as.change &&
            (setgroups(run_as.groups.size(), run_as.groups.data()) || setgid(run_as.gid) || setuid(run_as.uid))) {
            int err = errno;
            ssize_t w = write(status[1], &err, sizeof(err));
            (void)w;
            _exit(127);
        }
        // No descriptor of jmethodtime's goes to the command (its -o, --pprof, --flamegraph files,
        // its BPF objects): all from 3 up close at exec (CLOSE_RANGE_CLOEXEC, Linux 5.11; one by one
        // before). The status pipe's write end closes there too, as it should.
        if (syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) != 0)
            for (int fd = 3; fd < kMaxFdMarked; fd++)
                fcntl(fd, F_SETFD, FD_CLOEXEC);
        execve(args[0], args.data(), env.data());
        int err = errno;
        ssize_t w = write(status[1], &err, sizeof(err));
        (void)w;
        _exit(127);
    }
    close(gate[0]);
    close(status[1]);
    gate_ = gate[1];
    status_ = status[0];
}

LaunchedCommand::~LaunchedCommand()
{
    if (gate_ >= 0)
        close(gate_);  // an unreleased child reads EOF and exits without running anything
    if (status_ >= 0)
        close(status_);
    if (!released_ && !reaped_ && pid_ > 0)
        waitpid(pid_, nullptr, 0);
}

void LaunchedCommand::release()
{
    char go = 1;
    ssize_t n = write(gate_, &go, 1);
    int err = errno;
    close(gate_);
    gate_ = -1;
    if (n != 1)
        throw Error("cannot start " + name_ + ": " + strerror(err), err);
    released_ = true;
    int exec_errno = 0;
    do {
        n = read(status_, &exec_errno, sizeof(exec_errno));
    } while (n < 0 && errno == EINTR);
    close(status_);
    status_ = -1;
    if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
        wait();
        throw Error("cannot run " + name_ + ": " + strerror(exec_errno), exec_errno);
    }
}

void LaunchedCommand::forward(int sig) const
{
    if (!reaped_ && pid_ > 0)
        kill(pid_, sig);
}

int LaunchedCommand::wait()
{
    int status = 0;
    pid_t r;
    do {
        r = waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    reaped_ = true;
    if (r < 0)
        return 127;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 127;
}

}  // namespace jmt
