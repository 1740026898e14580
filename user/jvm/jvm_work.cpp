#include "jvm/jvm_work.h"

#include <dirent.h>

#include <algorithm>

#include <cstdlib>
#include <sstream>

#include "util/procfs.h"

namespace jmt {

std::optional<uint64_t> parse_io_calls(const std::string &io_text)
{
    std::istringstream in(io_text);
    std::string key;
    uint64_t value = 0;
    std::optional<uint64_t> reads, writes;
    while (in >> key >> value) {
        if (key == "syscr:")
            reads = value;
        else if (key == "syscw:")
            writes = value;
    }
    if (!reads || !writes)
        return std::nullopt;
    return *reads + *writes;
}

std::optional<uint64_t> parse_schedstat_ns(const std::string &schedstat_text)
{
    std::istringstream in(schedstat_text);
    uint64_t ns = 0;
    if (!(in >> ns))
        return std::nullopt;
    return ns;
}

bool is_compiler_thread(const std::string &comm) { return comm.find("CompilerThre") != std::string::npos; }

std::optional<WorkReading> read_jvm_work(int pid, uint64_t now_ns)
{
    const std::string dir = "/proc/" + std::to_string(pid);
    DIR *tasks = opendir((dir + "/task").c_str());
    if (!tasks)
        return std::nullopt;
    WorkReading r;
    r.at_ns = now_ns;
    while (dirent *e = readdir(tasks)) {
        const int tid = std::atoi(e->d_name);
        if (tid <= 0)
            continue;
        const std::string task = dir + "/task/" + e->d_name;
        if (is_compiler_thread(read_file(task + "/comm")))
            continue;
        std::optional<uint64_t> ns = parse_schedstat_ns(read_file(task + "/schedstat"));
        std::optional<uint64_t> io = parse_io_calls(read_file(task + "/io"));
        if (ns && io)
            r.threads[tid] = {*ns, *io};
    }
    closedir(tasks);
    return r;
}

JvmWork work_between(const WorkReading &before, const WorkReading &after)
{
    JvmWork w;
    for (const auto &[tid, now] : after.threads) {
        auto was = before.threads.find(tid);
        const ThreadWork start = was == before.threads.end() ? ThreadWork{} : was->second;
        if (now.io_calls <= start.io_calls)
            continue;
        w.io_calls += now.io_calls - start.io_calls;
        w.cpu_ns += now.cpu_ns > start.cpu_ns ? now.cpu_ns - start.cpu_ns : 0;
    }
    w.duration_ns = after.at_ns > before.at_ns ? after.at_ns - before.at_ns : 0;
    return w;
}

WorkMeter::WorkMeter(std::vector<int> pids) : pids_(std::move(pids)), last_(pids_.size()) {}

JvmWork WorkMeter::next(uint64_t now_ns)
{
    JvmWork sum;
    for (size_t i = 0; i < pids_.size(); i++) {
        std::optional<WorkReading> now = read_jvm_work(pids_[i], now_ns);
        if (now && last_[i]) {
            const JvmWork w = work_between(*last_[i], *now);
            sum.cpu_ns += w.cpu_ns;
            sum.io_calls += w.io_calls;
            sum.duration_ns = std::max(sum.duration_ns, w.duration_ns);
        }
        last_[i] = std::move(now);
    }
    return sum;
}

}  // namespace jmt
