// Runs a Java workload under the real jmethodtime binary and parses its JSON.
// Workload protocol (examples/java/demo/util/Harness.java): the JVM prints
// READY, waits for a line on stdin, runs, prints "DONE ...", exits.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
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
    pid_t pid() const { return java_.pid(); }
    std::string pid_text() const { return std::to_string(java_.pid()); }
    // Releases the workload waiting at READY.
    void go() { java_.write_stdin("go\n"); }
    Child &child() { return java_; }
    bool ready() const { return ready_; }  // it printed the ready line

private:
    Child java_;
    bool ready_ = false;
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
    nlohmann::json report;  // jmethodtime's --json output
    std::string done_line;  // the workload's "DONE ..." line
    std::string jmt_stderr;  // everything jmethodtime printed on stderr
    int jmt_exit = -1;
    pid_t jvm_pid = -1;
    int tracing_lines = 0;   // stderr lines starting with "Tracing" (the contract: exactly one)
    std::string jmt_stdout;  // jmethodtime's standard output as printed
};

struct RunSpec {
    JavaCommand jvm;                     // the workload (with the probes' flag)
    std::vector<std::string> jmt_args;   // besides -p PID (and --json unless json is false)
    bool json = true;                    // add --json and parse stdout as one JSON document
    int workload_timeout_ms = 120000;
};

// Starts the JVM, attaches jmethodtime, releases the workload, collects the report.
// Fails the current test (ADD_FAILURE) with the tool's stderr when anything goes wrong.
RunResult run_traced(const RunSpec &spec);

// The row of (class, method, signature), or nullptr.
const nlohmann::json *find_method(const nlohmann::json &report, const std::string &klass,
                                  const std::string &method, const std::string &signature);
// The row of (class, method, signature); throws (failing the test, which gtest
// catches and reports) when there is none, so callers can take a reference safely.
const nlohmann::json &method_row(const nlohmann::json &report, const std::string &klass,
                                 const std::string &method, const std::string &signature);
uint64_t calls_of(const nlohmann::json &report, const std::string &klass, const std::string &method,
                  const std::string &signature);
// Number of rows whose class starts with prefix.
size_t rows_with_class_prefix(const nlohmann::json &report, const std::string &prefix);
// Value of key=NUMBER in a DONE line.
uint64_t done_value(const std::string &done_line, const std::string &key);

// The libjvm.so the tests' java launcher loads.
std::string test_libjvm();

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
// package): the JDK 24+ cases and virtual threads are tested on it.
constexpr char kTemurin25[] = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java";

// Base of every integration suite (class Suite : public BpfTest {}, then
// TEST_F): its tests run where BPF tracing can; elsewhere they are skipped
// with the reason, and under CI=true they fail.
class BpfTest : public ::testing::Test {
protected:
    void SetUp() override;
};

// ... and on Temurin 25: skipped with a line where the machine has none.
class Temurin25Test : public BpfTest {
protected:
    void SetUp() override;
};

}  // namespace jmt_it

// In a test body: skips with a line where the machine has no Temurin 25.
#define JMT_REQUIRE_TEMURIN_25()                                                           \
    do {                                                                                   \
        if (access(jmt_it::kTemurin25, X_OK) != 0)                                         \
            GTEST_SKIP() << "no Temurin 25 at " << jmt_it::kTemurin25                       \
                         << " (most machines of this kind have it)";                      \
    } while (0)
