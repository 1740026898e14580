#include "loader/attach_plan.h"

#include <sys/stat.h>

#include <map>
#include <optional>
#include <utility>

namespace jmt {

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

}  // namespace jmt
