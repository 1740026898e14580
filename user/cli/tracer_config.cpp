#include "cli/tracer_config.h"

#include "loader/attach_plan.h"

namespace jmt {

TracerConfig tracer_config(const Options &o, const std::vector<JvmTarget> &targets, const ProbeCost &latency_cost)
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
    config.programs.latency = !o.no_latency;
    config.programs.latency_cost = latency_cost;
    config.programs.slower_than_ns = o.slower_than_ns;
    config.slow_calls_kept = o.slow_calls;
    config.programs.max_paths = o.max_paths;
    config.programs.arg_regs = target.arg_regs;
    config.programs.unload_arg_regs = target.unload_arg_regs;
    // JVMs of other JDK builds may pass the probes' arguments in other registers:
    // then libbpf's reader, which finds each one's from its own notes.
    for (const JvmTarget &t : targets) {
        if (t.arg_regs != target.arg_regs)
            config.programs.arg_regs.reset();
        if (t.unload_arg_regs != target.unload_arg_regs)
            config.programs.unload_arg_regs.reset();
    }
    config.programs.verbose = o.verbose;
    config.libjvm = target.libjvm;
    return config;
}

}  // namespace jmt
