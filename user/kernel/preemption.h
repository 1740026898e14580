// Whether the running kernel can preempt a BPF program midway. Only then can
// two probe events on one CPU interleave, and only then do the per-CPU totals
// need atomic adds (which cost ~3 ns each on the return path).
#pragma once

#include <optional>
#include <string>

namespace jmt {

enum class Preemption { Off, On, Unknown };

// What the kernel says about its preemption model.
struct KernelFacts {
    std::optional<std::string> debugfs_mode;  // /sys/kernel/debug/sched/preempt: "(none) voluntary full"
    std::string version;                      // uname -v: "#1 SMP PREEMPT_DYNAMIC ..."
    std::string cmdline;                      // /proc/cmdline
    std::optional<std::string> config;        // /proc/config.gz or /boot/config-RELEASE
};

// Off for preempt=none/voluntary, On for full/lazy/RT, Unknown when the facts
// do not tell (a dynamic kernel whose default mode is not known).
Preemption preemption_of(const KernelFacts &facts);

KernelFacts read_kernel_facts();

// The model of this kernel; Unknown counts as On where it matters.
Preemption kernel_preemption();

}  // namespace jmt
