// Runs a Java workload under the real jmethodtime binary and parses its JSON.
// Workload protocol (examples/java/demo/util/Harness.java): the JVM prints
// READY, waits for a line on stdin, runs, prints "DONE ...", exits.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <vector>

namespace jmt_it {

// A child process with pipes; killed and reaped on destruction.
class Child {
public:
    Child(const std::vector<std::string> &argv, bool pipe_stdin);
    ~Child();
    Child(const Child &) = delete;
    Child &operator=(const Child &) = delete;

    pid_t pid() const { return pid_; }
    // Reads stdout (or stderr) until a line starting with prefix; returns it or "" on timeout/EOF.
    std::string wait_line(bool from_stderr, const std::string &prefix, int timeout_ms);
    // Writes text to stdin, then closes it unless then_close is false (more lines to come).
    void write_stdin(const std::string &text, bool then_close = true);
    // Waits for exit; returns the exit status, or -1 after killing it on timeout.
    int wait_exit(int timeout_ms);
    // Everything read so far plus the rest until EOF (after exit).
    std::string drain(bool from_stderr, int timeout_ms);
    void signal(int sig);

private:
    bool read_some(int which, int timeout_ms);
    pid_t pid_ = -1;
    int in_ = -1;
    int fd_[2] = {-1, -1};  // stdout, stderr
    std::string buf_[2];
    size_t consumed_[2] = {0, 0};
    bool exited_ = false;
    int status_ = 0;
};

// A java command line: wrapper (argv run in front; it must exec java), the
// launcher (the tests' own, JMT_JAVA, when empty), -XX:+DTraceMethodProbes
// unless probes is false, flags, -cp classpath (the examples, JMT_JAVA_CLASSES,
// when empty), the main class and its args.
struct JavaCommand {
    std::string main_class;
    std::vector<std::string> args;
    std::vector<std::string> flags;
    bool probes = true;
    std::string java;
    std::vector<std::string> wrapper;
    std::string classpath;
};
std::vector<std::string> java_argv(const JavaCommand &command);

// A workload JVM, started and waited for until it prints a line starting with
// ready (the protocol's READY; a test failure after timeout_ms). Killed and
// reaped on destruction.
class Workload {
public:
    explicit Workload(const JavaCommand &command, const std::string &ready = "READY", int timeout_ms = 60000);
    // The JVM's pid (this pid namespace's): the started process or, behind a wrapper, its
    // descendant that maps a libjvm.so.
    pid_t pid() const { return jvm_pid_; }
    std::string pid_text() const { return std::to_string(jvm_pid_); }
    // Releases the workload waiting at READY.
    void go() { java_.write_stdin("go\n"); }
    Child &child() { return java_; }
    bool ready() const { return ready_; }  // it printed the ready line

private:
    Child java_;
    bool ready_ = false;
    pid_t jvm_pid_ = -1;
};

// demo.abc.Flow's A/B/C flow, released, busy for minutes.
struct BusyFlow : Workload {
    BusyFlow();
};

// Waits until jmethodtime (child jmt) prints its "Tracing" line on stderr and
// returns it; after timeout_ms (or its exit), fails the test with its stderr
// and returns "".
std::string wait_tracing(Child &jmt, int timeout_ms = 60000);

struct RunResult {
    nlohmann::json report;   // jmethodtime's --json output
    std::string done_line;   // the workload's "DONE ..." line
    std::string jmt_stderr;  // everything jmethodtime printed on stderr
    int jmt_exit = -1;
    pid_t jvm_pid = -1;
    int tracing_lines = 0;   // stderr lines starting with "Tracing" (the contract: exactly one)
    std::string jmt_stdout;  // jmethodtime's standard output as printed
};

struct RunSpec {
    JavaCommand jvm;                    // the workload (with the probes' flag)
    std::vector<std::string> jmt_args;  // besides -p PID (and --json unless json is false)
    bool json = true;                   // add --json and parse stdout as one JSON document
    int workload_timeout_ms = 120000;
};

// Starts the JVM, attaches jmethodtime, releases the workload, collects the report.
// Fails the current test (ADD_FAILURE) with the tool's stderr when anything goes wrong.
RunResult run_traced(const RunSpec &spec);

// The row of (class, method, signature), or nullptr.
const nlohmann::json *find_method(const nlohmann::json &report, const std::string &klass, const std::string &method,
                                  const std::string &signature);
// The row of (class, method, signature); throws (failing the test, which gtest
// catches and reports) when there is none, so callers can take a reference safely.
const nlohmann::json &method_row(const nlohmann::json &report, const std::string &klass, const std::string &method,
                                 const std::string &signature);
uint64_t calls_of(const nlohmann::json &report, const std::string &klass, const std::string &method,
                  const std::string &signature);
// Number of rows whose class starts with prefix.
size_t rows_with_class_prefix(const nlohmann::json &report, const std::string &prefix);
// Value of key=NUMBER in a DONE line.
uint64_t done_value(const std::string &done_line, const std::string &key);

// The tests' JDK: the home of JMT_JAVA (the build's java, /usr/bin/java through the
// alternatives resolved), whatever java is first on PATH when the tests run.
std::string test_jdk_home();
// Its launcher by absolute path (test_jdk_home()/bin/java): what launch mode runs after --.
std::string test_java();
// The libjvm.so the tests' java launcher loads.
std::string test_libjvm();
// The tests' JDK's version (its release file's JAVA_VERSION: "17.0.13"); "" when unread.
std::string test_jdk_version();

// A uprobe on libjvm's hotspot:PROBE registered the way bcc registers it: a
// perf uprobe event with a reference-counter offset, where the probe has
// none. While it is held, another registration of the same site with a
// different offset fails with EINVAL; and it fails itself while another
// tracer's uprobe is still there.
class ForeignUprobe {
public:
    ForeignUprobe(int pid, const std::string &libjvm, const std::string &probe);
    ~ForeignUprobe();
    ForeignUprobe(const ForeignUprobe &) = delete;
    ForeignUprobe &operator=(const ForeignUprobe &) = delete;
    int error() const { return err_; }  // 0: registered; else the errno of perf_event_open

private:
    int fd_ = -1;
    int err_ = 0;
};

// Runs argv; expects exit status 1 and exactly one stderr line containing needle, nothing on stdout.
void expect_one_line_error(const std::vector<std::string> &argv, const std::string &needle);

// Empty when BPF tracing can run here; otherwise the reason.
std::string bpf_unavailable_reason();

// Temurin 25's launcher, part of the image of most machines of this kind (not a
// package): the JDK 24+ cases and virtual threads run on it where it is there.
constexpr char kTemurin25[] = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java";

// --- JVMs run from the Debian root of tests/containers/make-root.sh (JMT_TEST_ROOT) ---

// The root's JDKs: their homes inside it.
constexpr char kRootJdk21[] = "/usr/lib/jvm/java-21-openjdk-amd64";
constexpr char kRootJdk25[] = "/usr/lib/jvm/java-25-openjdk-amd64";

// Empty when the root is made (its record is in it); otherwise why it is not.
std::string root_unavailable_reason();

enum class RootMode {
    // Own mount and pid namespaces: the root bind-mounted read-only and made the root
    // (pivot_root; the host's root detached, unreachable), its own /proc, a fresh tmpfs on
    // /tmp holding a copy of the example classes. All of it goes with the namespaces.
    Container,
    // This mount namespace: chroot ROOT java. For as long as the RootJdk lives, the root's
    // /proc has proc mounted (unless it had) and its /tmp a copy of the example classes.
    Chroot,
};

// One of the root's JDKs (home: its path inside the root) and how its JVMs run.
class RootJdk {
public:
    RootJdk(const std::string &home, RootMode mode);
    ~RootJdk();
    RootJdk(const RootJdk &) = delete;
    RootJdk &operator=(const RootJdk &) = delete;
    // command run from the root: its wrapper, java and class path set (the class path is
    // the examples' unless command gives its own).
    JavaCommand command(JavaCommand command) const;
    // A java launcher of this host, for launch mode (jmethodtime -- java): it runs the
    // root's java in its own mount namespace as in Container mode, but keeps its pid (the
    // one launch mode traces), so in this pid namespace. Made under JMT_TEST_WORK_DIR.
    std::string launcher() const;
    // The example classes' path inside the root.
    std::string classpath() const { return classes_; }
    const std::string &home() const { return home_; }

private:
    std::string home_;
    RootMode mode_;
    std::string classes_;        // the examples' path inside the root
    std::string chroot_copy_;    // Chroot: the copy made in the root's /tmp (a host path)
    bool mounted_proc_ = false;  // Chroot: this object mounted the root's /proc
};

// The JDK 24+ the tests run: Temurin 25 where the machine has it, else Debian's JDK 25
// from the root in Container mode; JMT_TEST_JDK25=root picks the root's in any case.
class Jdk25 {
public:
    Jdk25();
    bool from_root() const { return root_ != nullptr; }
    std::string name() const;
    // command on this JDK, started to be attached to (-p).
    JavaCommand attached(JavaCommand command) const;
    // command on this JDK for launch mode (after jmethodtime's --): no wrapper.
    JavaCommand launched(JavaCommand command) const;

private:
    std::unique_ptr<RootJdk> root_;
};
const Jdk25 &jdk25();

// Empty when jdk25() can run: Temurin's, or the root's once made; otherwise why not.
std::string jdk25_unavailable_reason();

// CI=true: what would be skipped fails.
bool under_ci();

// Base of every integration suite (class Suite : public BpfTest {}, then
// TEST_F): its tests run where BPF tracing can; elsewhere they are skipped
// with the reason, and under CI=true they fail.
class BpfTest : public ::testing::Test {
protected:
    void SetUp() override;
};

// ... and on the root: skipped with the reason where it is not made, failed under CI=true.
class RootTest : public BpfTest {
protected:
    void SetUp() override;
};

// ... and on a JDK 25 (jdk25()): Temurin's, or else the root's (as RootTest).
class Jdk25Test : public BpfTest {
protected:
    void SetUp() override;
};

}  // namespace jmt_it

// In a test body: where jdk25() cannot run (the root's, not made), skips with the reason,
// and fails under CI=true.
#define JMT_REQUIRE_JDK25()                                                                                            \
    do {                                                                                                               \
        const std::string jmt_jdk25_reason = jmt_it::jdk25_unavailable_reason();                                       \
        if (!jmt_jdk25_reason.empty()) {                                                                               \
            if (jmt_it::under_ci())                                                                                    \
                FAIL() << "under CI=true: " << jmt_jdk25_reason;                                                       \
            GTEST_SKIP() << jmt_jdk25_reason;                                                                          \
        }                                                                                                              \
    } while (0)
