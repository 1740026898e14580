#include "jvm/jvm_set.h"

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

std::vector<int> target_pids(const std::vector<JvmTarget> &targets)
{
    std::vector<int> pids;
    for (const JvmTarget &t : targets)
        pids.push_back(t.pid);
    return pids;
}

std::string targets_text(const std::vector<JvmTarget> &targets)
{
    std::string out;
    for (const JvmTarget &t : targets)
        out += (out.empty() ? "pid " : ", pid ") + std::to_string(t.pid) + " (" + t.comm + ")";
    return out;
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
