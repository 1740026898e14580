// Launch mode: run `java ...` as a child held at a gate until the probes are
// attached, so tracing starts before the JVM's first Java method.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace jmt {

// The flag launch mode adds right after the launcher's name.
constexpr const char *kProbeFlag = "-XX:+DTraceMethodProbes";

struct LaunchPlan {
    std::vector<std::string> argv;  // the command with kProbeFlag inserted after argv[0]
    std::string java;               // the launcher, resolved through PATH and symlinks
    std::string libjvm;             // the libjvm.so this launcher loads
};

// Resolves the launcher and its libjvm.so; throws jmt::Error naming the problem
// (not found, not a java launcher, no libjvm.so, the probes switched off in argv).
// path_env is the PATH to search when command[0] has no '/'.
LaunchPlan plan_launch(const std::vector<std::string> &command, const std::string &path_env);

// name as execvp would find it: as given when it has a '/', else the first executable along
// path_env (a PATH); "" when none is.
std::string find_executable(const std::string &name, const std::string &path_env);

// The JDK home of a resolved launcher (HOME/bin/java) and the libjvm.so
// candidates under it, first match wins: server, client, then JDK 8's jre layout.
std::vector<std::string> libjvm_candidates(const std::string &java_home);

// Who the launched command runs as: only the tracer needs root.
struct RunAs {
    bool change = false;  // false: as this process (root)
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;  // the user's supplementary groups
    std::string name;           // the user's name, for messages and USER
    std::string home;           // its home directory (/etc/passwd; "/" for a uid it has not)
    std::string note;           // one line for stderr when chosen without -u (empty otherwise)
};

// The user of -u/--user (a name or a numeric uid; "" when not given), or
// under sudo without it the invoking user (sudo_uid, sudo_gid: SUDO_UID and
// SUDO_GID, "" when unset), or nobody else: root. Throws jmt::Error for an
// unknown user.
// A uid that /etc/passwd does not name gets nogroup's gid (65534), its only group.
RunAs resolve_run_as(const std::string &user, const std::string &sudo_uid, const std::string &sudo_gid);

// The command's environment: environment (NULL-terminated), with HOME, USER and LOGNAME those of
// run_as when it changes user (root's would otherwise follow the JVM).
std::vector<std::string> command_environment(char *const *environment, const RunAs &run_as);

// A child that runs argv once released. Until release() it waits at a gate
// with default signal dispositions and an empty signal mask; if this process
// dies first, the child exits without running anything.
class LaunchedCommand {
public:
    explicit LaunchedCommand(const std::vector<std::string> &argv, const RunAs &run_as = {});
    ~LaunchedCommand();
    LaunchedCommand(const LaunchedCommand &) = delete;
    LaunchedCommand &operator=(const LaunchedCommand &) = delete;

    pid_t pid() const { return pid_; }
    // Lets the child exec; throws jmt::Error when the exec failed (then the child is reaped).
    void release();
    // Sends sig to the child while it runs.
    void forward(int sig) const;
    // Waits for the child's exit; returns its exit code, or 128 + signal when a signal killed it.
    int wait();

private:
    pid_t pid_ = -1;
    int gate_ = -1;    // write end: one byte releases the child
    int status_ = -1;  // read end: the child's exec errno, or EOF when exec succeeded
    bool released_ = false;
    bool reaped_ = false;
    std::string name_;
};

}  // namespace jmt
