#include "cli/targets.h"

#include <sys/stat.h>

#include <map>
#include <ostream>
#include <utility>

#include "jmethodtime.h"
#include "util/error.h"
#include "util/procfs.h"

namespace jmt {

std::vector<JvmTarget> find_targets(int pid, const std::string &match, const std::vector<JvmTarget> &all_jvms,
                                    std::ostream &warn)
{
    if (match.empty())
        return {inspect_target(pid)};
    std::vector<JvmTarget> targets;
    std::optional<TargetStatus> first_problem;
    for (int found : pick_jvms(all_jvms, match, JMT_MAX_TARGETS)) {
        TargetStatus st = examine_target(found);
        if (st.problem == TargetProblem::None) {
            targets.push_back(std::move(st.target));
            continue;
        }
        if (!first_problem)
            first_problem = st;
        warn << "jmethodtime: --match '" << match << "' found pid " << found << ", left out: " << st.message
             << std::endl;
    }
    if (targets.empty())
        throw Error(first_problem->message, first_problem->err);
    return targets;
}

namespace {

// The libjvm file's identity; nullopt when it cannot be read.
std::optional<std::pair<dev_t, ino_t>> file_id(const std::string &path)
{
    struct stat st = {};
    if (stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return std::make_pair(st.st_dev, st.st_ino);
}

}  // namespace

std::vector<TracedLibjvm> attach_plan(const std::vector<JvmTarget> &targets, const std::vector<JvmTarget> &all_jvms)
{
    std::vector<TracedLibjvm> plan;
    std::map<std::pair<dev_t, ino_t>, size_t> by_file;
    for (const JvmTarget &t : targets) {
        const auto id = file_id(t.libjvm);
        if (!id) {  // unknown file: its own group, per pid
            plan.push_back({t.libjvm, {t.pid}, false});
            continue;
        }
        auto [it, fresh] = by_file.emplace(*id, plan.size());
        if (fresh)
            plan.push_back({t.libjvm, {}, true});
        plan[it->second].pids.push_back(t.pid);
    }
    // A JVM with the probes on that is not traced would pay every trap: per pid then.
    // On standby from JDK 24 its interpreter still calls them.
    for (const JvmTarget &j : all_jvms) {
        if (!j.probes_on && j.access != ProbeAccess::Standby)
            continue;
        const auto id = file_id(j.libjvm);
        auto it = id ? by_file.find(*id) : by_file.end();
        if (it == by_file.end())
            continue;
        TracedLibjvm &group = plan[it->second];
        bool traced = false;
        for (int pid : group.pids)
            traced = traced || pid == j.pid;
        if (!traced)
            group.whole = false;
    }
    return plan;
}

std::string targets_text(const std::vector<JvmTarget> &targets)
{
    std::string out;
    for (const JvmTarget &t : targets)
        out += (out.empty() ? "pid " : ", pid ") + std::to_string(t.pid) + " (" + t.comm + ")";
    return out;
}

TracerConfig tracer_config(const Options &o, const std::vector<JvmTarget> &targets)
{
    const JvmTarget &target = targets.front();
    TracerConfig config;
    config.programs.pid = target.pid;
    if (targets.size() > 1) {
        for (size_t i = 1; i < targets.size(); i++)
            config.programs.other_pids.push_back(targets[i].pid);
        config.libjvms = attach_plan(targets, list_jvms());
        for (const TracedLibjvm &lib : config.libjvms)
            config.programs.filter_by_process = config.programs.filter_by_process || lib.whole;
    }
    config.programs.packages = o.packages;
    config.programs.class_globs = o.class_globs;
    config.programs.method_globs = o.method_globs;
    config.programs.per_thread = o.per_thread;
    config.programs.call_paths = wants_call_paths(o);
    config.programs.foreign = o.foreign;
    config.programs.max_paths = o.max_paths;
    config.programs.arg_regs = target.arg_regs;
    // JVMs of other JDK builds may pass the probes' arguments in other registers:
    // then libbpf's reader, which finds each one's from its own notes.
    for (const JvmTarget &t : targets)
        if (t.arg_regs != target.arg_regs)
            config.programs.arg_regs.reset();
    config.programs.verbose = o.verbose;
    config.libjvm = target.libjvm;
    return config;
}

std::optional<uint64_t> JvmsCpu::read(bool *fresh)
{
    bool all = true;
    for (size_t i = 0; i < pids_.size(); i++) {
        if (std::optional<uint64_t> cpu = process_cpu_ns(pids_[i]))
            last_[i] = cpu;
        else
            all = false;
    }
    if (fresh)
        *fresh = all;
    return last();
}

std::optional<uint64_t> JvmsCpu::last() const
{
    std::optional<uint64_t> sum;
    for (const std::optional<uint64_t> &cpu : last_)
        if (cpu)
            sum = sum.value_or(0) + *cpu;
    return sum;
}

}  // namespace jmt
