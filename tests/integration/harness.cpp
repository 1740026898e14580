#include "harness.h"

#include <algorithm>

#include "jvm/jvm.h"
#include "util/procfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace jmt_it {

namespace {

long long now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

}  // namespace

Child::Child(const std::vector<std::string> &argv, bool pipe_stdin)
{
    int in[2] = {-1, -1}, out[2], err[2];
    if ((pipe_stdin && pipe2(in, O_CLOEXEC)) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
        if (pipe_stdin)
            dup2(in[0], 0);
        else
            dup2(open("/dev/null", O_RDONLY), 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        std::vector<char *> args;
        for (const auto &a : argv)
            args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    if (pipe_stdin) {
        close(in[0]);
        in_ = in[1];
    }
    close(out[1]);
    close(err[1]);
    fd_[0] = out[0];
    fd_[1] = err[0];
}

Child::~Child()
{
    if (!exited_ && pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    for (int fd : {in_, fd_[0], fd_[1]})
        if (fd >= 0)
            close(fd);
}

bool Child::read_some(int which, int timeout_ms)
{
    if (fd_[which] < 0)
        return false;
    struct pollfd p = {fd_[which], POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0)
        return false;
    char chunk[65536];
    ssize_t n = read(fd_[which], chunk, sizeof(chunk));
    if (n <= 0) {
        close(fd_[which]);
        fd_[which] = -1;
        return false;
    }
    buf_[which].append(chunk, static_cast<size_t>(n));
    return true;
}

std::string Child::wait_line(bool from_stderr, const std::string &prefix, int timeout_ms)
{
    const int w = from_stderr ? 1 : 0;
    const long long deadline = now_ms() + timeout_ms;
    for (;;) {
        size_t nl;
        while ((nl = buf_[w].find('\n', consumed_[w])) != std::string::npos) {
            std::string line = buf_[w].substr(consumed_[w], nl - consumed_[w]);
            consumed_[w] = nl + 1;
            if (line.compare(0, prefix.size(), prefix) == 0)
                return line;
        }
        long long left = deadline - now_ms();
        if (left <= 0 || (fd_[w] < 0))
            return "";
        read_some(w, static_cast<int>(std::min<long long>(left, 200)));
    }
}

void Child::write_stdin(const std::string &text, bool then_close)
{
    if (in_ < 0)
        return;
    ssize_t n = write(in_, text.data(), text.size());
    (void)n;
    if (then_close) {
        close(in_);
        in_ = -1;
    }
}

int Child::wait_exit(int timeout_ms)
{
    if (exited_)
        return status_;
    const long long deadline = now_ms() + timeout_ms;
    for (;;) {
        int status;
        pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            exited_ = true;
            status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            return status_;
        }
        if (now_ms() >= deadline) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
            exited_ = true;
            status_ = -1;
            return -1;
        }
        // Keep the pipes flowing so a chatty child cannot block on a full pipe.
        if (!read_some(0, 20))
            read_some(1, 20);
    }
}

std::string Child::drain(bool from_stderr, int timeout_ms)
{
    const int w = from_stderr ? 1 : 0;
    const long long deadline = now_ms() + timeout_ms;
    while (fd_[w] >= 0 && now_ms() < deadline)
        read_some(w, 100);
    return buf_[w];
}

void Child::signal(int sig)
{
    if (!exited_)
        kill(pid_, sig);
}

// A thread is on a CPU only while time passes: for every method, on-CPU time
// never exceeds elapsed time, inclusive or exclusive (1 us and 1% of slack for
// the two clocks read at different points of a probe).
void expect_on_cpu_within_elapsed(const nlohmann::json &report)
{
    if (!report.contains("methods"))
        return;
    for (const auto &m : report["methods"]) {
        for (const char *kind : {"incl", "excl"}) {
            const double wall = m[std::string("wall_") + kind + "_ns"].get<double>();
            const double cpu = m[std::string("cpu_") + kind + "_ns"].get<double>();
            EXPECT_LE(cpu, wall * 1.01 + 1000) << "on-CPU " << kind << " above elapsed: " << m.dump();
        }
    }
}

std::vector<std::string> java_argv(const JavaCommand &command)
{
    std::vector<std::string> argv = command.wrapper;
    argv.push_back(command.java.empty() ? JMT_JAVA : command.java);
    if (command.probes)
        argv.push_back("-XX:+DTraceMethodProbes");
    argv.insert(argv.end(), command.flags.begin(), command.flags.end());
    argv.insert(argv.end(),
                {"-cp", command.classpath.empty() ? JMT_JAVA_CLASSES : command.classpath, command.main_class});
    argv.insert(argv.end(), command.args.begin(), command.args.end());
    return argv;
}

namespace {

// pid's parent (field 4 of its /proc/PID/stat); 0 if none.
pid_t parent_of(pid_t pid)
{
    const std::vector<std::string> f = jmt::stat_fields(jmt::read_file("/proc/" + std::to_string(pid) + "/stat"));
    return f.size() > 4 - 3 ? static_cast<pid_t>(std::atoi(f[4 - 3].c_str())) : 0;
}

// top, or its descendant, that maps a libjvm.so; -1 if none does.
pid_t jvm_below(pid_t top)
{
    std::vector<pid_t> pids = {top};
    if (DIR *dir = opendir("/proc")) {
        while (dirent *e = readdir(dir)) {
            const pid_t pid = static_cast<pid_t>(atoi(e->d_name));
            pid_t up = pid;
            for (int depth = 0; pid > 0 && pid != top && up > 1 && depth < 32; depth++)
                if ((up = parent_of(up)) == top)
                    pids.push_back(pid);
        }
        closedir(dir);
    }
    for (pid_t pid : pids)
        if (jmt::find_libjvm(jmt::read_file("/proc/" + std::to_string(pid) + "/maps")).found)
            return pid;
    return -1;
}

}  // namespace

Workload::Workload(const JavaCommand &command, const std::string &ready, int timeout_ms)
    : java_(java_argv(command), true), jvm_pid_(java_.pid())
{
    ready_ = !java_.wait_line(false, ready, timeout_ms).empty();
    if (!ready_)
        ADD_FAILURE() << "the JVM (" << command.main_class << ") did not print " << ready << ": "
                      << java_.drain(true, 1000);
    else if (!command.wrapper.empty() && (jvm_pid_ = jvm_below(java_.pid())) < 0)
        ADD_FAILURE() << "no JVM among the processes of " << command.wrapper[0] << " (pid " << java_.pid() << ")";
}

BusyFlow::BusyFlow() : Workload({"demo.abc.Flow", {"100000", "10"}}) { go(); }

std::string wait_tracing(Child &jmt, int timeout_ms)
{
    const std::string line = jmt.wait_line(true, "Tracing", timeout_ms);
    if (line.empty()) {
        jmt.wait_exit(5000);
        ADD_FAILURE() << "jmethodtime did not start tracing: " << jmt.drain(true, 1000);
    }
    return line;
}

RunResult run_traced(const RunSpec &spec)
{
    RunResult result;
    // A child that died early must not kill the test process through SIGPIPE on write.
    ::signal(SIGPIPE, SIG_IGN);
    Workload java(spec.jvm);
    result.jvm_pid = java.pid();
    if (!java.ready())
        return result;
    std::vector<std::string> tool = {JMT_BINARY, "-p", java.pid_text()};
    if (spec.json)
        tool.push_back("--json");
    tool.insert(tool.end(), spec.jmt_args.begin(), spec.jmt_args.end());
    Child jmt(tool, false);
    if (wait_tracing(jmt).empty())
        return result;
    java.go();
    result.done_line = java.child().wait_line(false, "DONE", spec.workload_timeout_ms);
    EXPECT_FALSE(result.done_line.empty()) << "the workload did not finish";
    std::cout << "  workload: " << result.done_line << std::endl;
    EXPECT_EQ(java.child().wait_exit(30000), 0);
    result.jmt_exit = jmt.wait_exit(60000);
    std::string out = jmt.drain(false, 5000);
    result.jmt_stderr = jmt.drain(true, 1000);
    {
        std::istringstream lines(result.jmt_stderr);
        for (std::string line; std::getline(lines, line);)
            result.tracing_lines += line.compare(0, 7, "Tracing") == 0;
    }
    EXPECT_EQ(result.jmt_exit, 0) << result.jmt_stderr;
    result.jmt_stdout = out;
    if (!spec.json)
        return result;
    try {
        result.report = nlohmann::json::parse(out);
        expect_on_cpu_within_elapsed(result.report);
    } catch (const std::exception &e) {
        ADD_FAILURE() << "jmethodtime's stdout is not JSON (" << e.what() << "): " << out << "\n" << result.jmt_stderr;
    }
    return result;
}

const nlohmann::json *find_method(const nlohmann::json &report, const std::string &klass, const std::string &method,
                                  const std::string &signature)
{
    if (!report.contains("methods"))
        return nullptr;
    for (const auto &m : report["methods"]) {
        if (m["class"] == klass && m["method"] == method && m["signature"] == signature)
            return &m;
    }
    return nullptr;
}

const nlohmann::json &method_row(const nlohmann::json &report, const std::string &klass, const std::string &method,
                                 const std::string &signature)
{
    const nlohmann::json *m = find_method(report, klass, method, signature);
    if (!m)
        throw std::runtime_error("no row for " + klass + "." + method + signature + " in the report");
    return *m;
}

uint64_t calls_of(const nlohmann::json &report, const std::string &klass, const std::string &method,
                  const std::string &signature)
{
    const nlohmann::json *m = find_method(report, klass, method, signature);
    return m ? (*m)["calls"].get<uint64_t>() : 0;
}

size_t rows_with_class_prefix(const nlohmann::json &report, const std::string &prefix)
{
    size_t n = 0;
    if (report.contains("methods"))
        for (const auto &m : report["methods"])
            n += m["class"].get<std::string>().compare(0, prefix.size(), prefix) == 0;
    return n;
}

uint64_t done_value(const std::string &done_line, const std::string &key)
{
    // key=NUMBER as a whole word: "a_ns" must not match inside "loop_a_ns".
    for (size_t at = done_line.find(key + "="); at != std::string::npos; at = done_line.find(key + "=", at + 1)) {
        if (at == 0 || done_line[at - 1] == ' ')
            return std::stoull(done_line.substr(at + key.size() + 1));
    }
    ADD_FAILURE() << "no " << key << "= in the workload's line: " << done_line;
    return 0;
}

std::string test_jdk_home()
{
    char buf[PATH_MAX];
    std::string java = realpath(JMT_JAVA, buf) ? buf : JMT_JAVA;
    return java.substr(0, java.rfind("/bin/"));
}

std::string test_java() { return test_jdk_home() + "/bin/java"; }

std::string test_libjvm() { return test_jdk_home() + "/lib/server/libjvm.so"; }

std::string test_jdk_version()
{
    std::ifstream in(test_jdk_home() + "/release");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("JAVA_VERSION=\"", 0) == 0)
            return line.substr(14, line.find('"', 14) - 14);
    return "";
}

namespace {

// File offset of the hotspot:probe site in lib (note address through its PT_LOAD segment).
uint64_t probe_file_offset(const std::string &lib, const std::string &probe)
{
    jmt::LibjvmInfo info = jmt::inspect_libjvm(lib);
    uint64_t vaddr = 0;
    for (const auto &n : info.notes)
        if (n.name == probe)
            vaddr = n.location;
    if (!vaddr)
        throw std::runtime_error("no hotspot:" + probe + " in " + lib);
    elf_version(EV_CURRENT);
    int fd = open(lib.c_str(), O_RDONLY | O_CLOEXEC);
    Elf *elf = elf_begin(fd, ELF_C_READ, nullptr);
    size_t n = 0;
    elf_getphdrnum(elf, &n);
    uint64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
            vaddr < ph.p_vaddr + ph.p_filesz)
            offset = vaddr - ph.p_vaddr + ph.p_offset;
    }
    elf_end(elf);
    close(fd);
    if (!offset)
        throw std::runtime_error("hotspot:" + probe + " is in no loadable segment of " + lib);
    return offset;
}

// A field of /sys/bus/event_source/devices/uprobe: the PMU type, or the first bit of ref_ctr_offset.
int uprobe_pmu(const std::string &file)
{
    std::ifstream in("/sys/bus/event_source/devices/uprobe/" + file);
    std::string text;
    std::getline(in, text);
    size_t colon = text.find(':');  // "config:32-63"
    return std::stoi(colon == std::string::npos ? text : text.substr(colon + 1));
}

}  // namespace

ForeignUprobe::ForeignUprobe(int pid, const std::string &libjvm, const std::string &probe)
{
    const uint64_t offset = probe_file_offset(libjvm, probe);
    // bcc's bogus semaphore: an offset inside e_ident's zero padding, harmless to count in.
    const uint64_t ref_ctr_offset = 0xa;
    struct perf_event_attr attr = {};
    attr.size = sizeof(attr);
    attr.type = static_cast<uint32_t>(uprobe_pmu("type"));
    attr.config1 = reinterpret_cast<uint64_t>(libjvm.c_str());
    attr.config2 = offset;
    attr.config = ref_ctr_offset << uprobe_pmu("format/ref_ctr_offset");
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
    err_ = fd_ < 0 ? errno : 0;
}

ForeignUprobe::~ForeignUprobe()
{
    if (fd_ >= 0)
        close(fd_);
}

void expect_one_line_error(const std::vector<std::string> &argv, const std::string &needle)
{
    Child jmt(argv, false);
    EXPECT_EQ(jmt.wait_exit(60000), 1);
    const std::string err = jmt.drain(true, 2000);
    EXPECT_NE(err.find(needle), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_TRUE(jmt.drain(false, 1000).empty());
}

std::string bpf_unavailable_reason()
{
    if (geteuid() != 0)
        return "not root (run the tests as root)";
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
        return "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
    return "";
}

void BpfTest::SetUp()
{
    const std::string reason = bpf_unavailable_reason();
    if (reason.empty())
        return;
    if (under_ci())
        FAIL() << "BPF unavailable under CI=true: " << reason;
    GTEST_SKIP() << "BPF unavailable: " << reason;
}

}  // namespace jmt_it
