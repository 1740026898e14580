// JVMs run from the Debian root (tests/containers/make-root.sh): in a container,
// in a plain chroot, and the JDK 25 the tests pick.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "harness.h"
#include "util/procfs.h"

namespace jmt_it {

namespace {

namespace fs = std::filesystem;

constexpr char kRootRecord[] = "/.jmethodtime-root";  // make-root.sh's record, written last

// The shell run in the new mount namespace: $1 the root, $2 the classes (host paths), then
// java's argv. The root is bind-mounted on itself (pivot_root takes a mount point) read-only,
// so the cached root stays as made; /proc and /tmp are the container's own.
constexpr char kContainerScript[] = "set -e; r=$1; classes=$2; shift 2; "
                                    "mount --bind \"$r\" \"$r\"; mount -o remount,bind,ro \"$r\"; "
                                    "mount -t proc proc \"$r/proc\"; mount -t tmpfs -o mode=1777 jmt-tmp \"$r/tmp\"; "
                                    "cp -r \"$classes\" \"$r/tmp/classes\"; chmod -R a+rX \"$r/tmp/classes\"; "
                                    "cd \"$r\"; pivot_root . .; umount -l .; cd /; exec \"$@\"";

bool is_mount_point(const std::string &dir)
{
    struct stat here = {}, parent = {};
    return stat(dir.c_str(), &here) == 0 && stat((dir + "/..").c_str(), &parent) == 0 &&
           (here.st_dev != parent.st_dev || here.st_ino == parent.st_ino);
}

// A process of pid is gone (or never was).
bool gone(const std::string &pid_text)
{
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    return kill(static_cast<pid_t>(std::stol(pid_text)), 0) != 0 && errno == ESRCH;
}

// What killed JVMs of a chroot leave in its /tmp (tmp, a host path; their pids are this pid
// namespace's): attach sockets (.java_pidN) and perf data files (hsperfdata_USER/N).
void sweep_dead_jvms(const std::string &tmp)
{
    std::error_code ec;
    for (const fs::directory_entry &e : fs::directory_iterator(tmp, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(".java_pid", 0) == 0 && gone(name.substr(9)))
            fs::remove(e.path(), ec);
        if (name.rfind("hsperfdata_", 0) == 0)
            for (const fs::directory_entry &f : fs::directory_iterator(e.path(), ec))
                if (gone(f.path().filename().string()))
                    fs::remove(f.path(), ec);
    }
}

}  // namespace

std::string root_unavailable_reason()
{
    if (access((std::string(JMT_TEST_ROOT) + kRootRecord).c_str(), R_OK) != 0)
        return std::string("no Debian root at ") + JMT_TEST_ROOT +
               " (tests/containers/make-root.sh makes it: ctest runs it first)";
    return "";
}

RootJdk::RootJdk(const std::string &home, RootMode mode) : home_(home), mode_(mode), classes_("/tmp/classes")
{
    if (mode_ != RootMode::Chroot)
        return;
    const std::string root = JMT_TEST_ROOT;
    if (!is_mount_point(root + "/proc")) {
        if (mount("proc", (root + "/proc").c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
            ADD_FAILURE() << "cannot mount proc on " << root << "/proc: " << strerror(errno);
        else
            mounted_proc_ = true;
    }
    classes_ = "/tmp/jmt-classes-" + std::to_string(getpid());
    chroot_copy_ = root + classes_;
    std::error_code ec;
    fs::remove_all(chroot_copy_, ec);
    fs::copy(JMT_JAVA_CLASSES, chroot_copy_, fs::copy_options::recursive, ec);
    if (ec)
        ADD_FAILURE() << "cannot copy the classes to " << chroot_copy_ << ": " << ec.message();
}

RootJdk::~RootJdk()
{
    std::error_code ec;
    if (!chroot_copy_.empty()) {
        fs::remove_all(chroot_copy_, ec);
        sweep_dead_jvms(std::string(JMT_TEST_ROOT) + "/tmp");
    }
    if (mounted_proc_)
        umount2((std::string(JMT_TEST_ROOT) + "/proc").c_str(), MNT_DETACH);
}

JavaCommand RootJdk::command(JavaCommand command) const
{
    command.java = home_ + "/bin/java";
    if (command.classpath.empty())
        command.classpath = classes_;
    if (mode_ == RootMode::Chroot)
        command.wrapper = {"chroot", JMT_TEST_ROOT};
    else
        command.wrapper = {
            "unshare", "--mount", "--pid", "--fork",         "--kill-child", "--propagation", "private",
            "--",      "sh",      "-c",    kContainerScript, "sh",           JMT_TEST_ROOT,   JMT_JAVA_CLASSES};
    return command;
}

std::string RootJdk::launcher() const
{
    // DIR/bin/java, with DIR/lib/server/libjvm.so and DIR/release the root's: launch mode finds
    // the JDK's libjvm and release under the launcher's home, as in a JDK.
    const std::string host_home = std::string(JMT_TEST_ROOT) + home_;
    const std::string dir = std::string(JMT_TEST_WORK_DIR) + "/root-java-" + fs::path(home_).filename().string();
    std::error_code ec;
    fs::create_directories(dir + "/bin", ec);
    fs::create_directories(dir + "/lib/server", ec);
    for (const char *file : {"/lib/server/libjvm.so", "/release"}) {
        fs::remove(dir + file, ec);
        fs::create_symlink(host_home + file, dir + file, ec);
    }
    const std::string java = dir + "/bin/java";
    {
        std::ofstream out(java, std::ios::trunc);
        out << "#!/bin/sh\n"
               "# The root's java in its own mount namespace, with this pid (launch mode traces it).\n"
               "exec unshare --mount --propagation private -- sh -c '"
            << kContainerScript << "' sh '" << JMT_TEST_ROOT << "' '" << JMT_JAVA_CLASSES << "' '" << home_
            << "/bin/java' \"$@\"\n";
    }
    chmod(java.c_str(), 0755);
    return java;
}

Jdk25::Jdk25()
{
    const char *choice = getenv("JMT_TEST_JDK25");
    const bool want_root = choice && std::string(choice) == "root";
    if (want_root || access(kTemurin25, X_OK) != 0)
        root_ = std::make_unique<RootJdk>(kRootJdk25, RootMode::Container);
}

std::string Jdk25::name() const
{
    return root_ ? std::string("Debian's JDK 25 from ") + JMT_TEST_ROOT + ", in a container" : "Temurin 25";
}

JavaCommand Jdk25::attached(JavaCommand command) const
{
    if (root_)
        return root_->command(std::move(command));
    command.java = kTemurin25;
    return command;
}

JavaCommand Jdk25::launched(JavaCommand command) const
{
    if (!root_) {
        command.java = kTemurin25;
        return command;
    }
    command.java = root_->launcher();
    if (command.classpath.empty())
        command.classpath = root_->classpath();
    command.wrapper.clear();
    return command;
}

const Jdk25 &jdk25()
{
    static const Jdk25 jdk;
    return jdk;
}

bool under_ci()
{
    const char *ci = getenv("CI");
    return ci && std::string(ci) == "true";
}

std::string jdk25_unavailable_reason() { return jdk25().from_root() ? root_unavailable_reason() : ""; }

void RootTest::SetUp()
{
    BpfTest::SetUp();
    if (IsSkipped() || HasFailure())
        return;
    const std::string reason = root_unavailable_reason();
    if (reason.empty())
        return;
    if (under_ci())
        FAIL() << "under CI=true: " << reason;
    GTEST_SKIP() << reason;
}

void Jdk25Test::SetUp()
{
    BpfTest::SetUp();
    if (IsSkipped() || HasFailure())
        return;
    std::cout << "  JDK 25: " << jdk25().name() << std::endl;
    JMT_REQUIRE_JDK25();
}

}  // namespace jmt_it
