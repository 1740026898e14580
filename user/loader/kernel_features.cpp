#include "loader/kernel_features.h"

#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/error.h"

namespace jmt {

namespace {

// What the compat programs do in place of each feature (bpf/compat.bpf.h).
constexpr const char *kNoLoop = "bounded loops and global functions walk a thread's stack, step "
                                "--class/--method globs and move a virtual thread's frames";
constexpr const char *kNoCookie = "the probes attached at each site as plain uprobes, their arguments read from "
                                  "registers";
constexpr const char *kNoForEach = "an unloaded class's methods dropped at their next lookup";
constexpr const char *kNoTaskStorage = "thread state in hash maps by thread id, deleted at exit";
constexpr const char *kNoTaskBtf = "the thread id from bpf_get_current_pid_tgid";

}  // namespace

std::vector<KernelFeature> probe_kernel_features()
{
    // USDT programs are BPF_PROG_TYPE_KPROBE: what such a program may call is what they may.
    const auto helper = [](bpf_func_id id) { return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, id, nullptr) == 1; };
    return {
        {"bpf_loop", "5.17", helper(BPF_FUNC_loop), kNoLoop},
        {"BPF cookies", "5.15", helper(BPF_FUNC_get_attach_cookie), kNoCookie, true},
        {"bpf_for_each_map_elem", "5.13", helper(BPF_FUNC_for_each_map_elem), kNoForEach},
        {"task storage in tracing programs", "5.11", helper(BPF_FUNC_task_storage_get), kNoTaskStorage},
        {"bpf_get_current_task_btf", "5.11", helper(BPF_FUNC_get_current_task_btf), kNoTaskBtf},
        {"bpf_probe_read_user", "5.5", helper(BPF_FUNC_probe_read_user)},
    };
}

std::string missing_features_text(const std::vector<KernelFeature> &features, const std::string &release)
{
    std::string text, others;
    for (const KernelFeature &f : features) {
        if (f.present || *f.fallback)
            continue;
        if (text.empty()) {
            text = "this kernel (" + release + ") has no " + f.name +
                   ", which jmethodtime's BPF programs need: " + "run it on Linux " + f.since + " or newer";
        } else {
            others += (others.empty() ? "" : ", ") + std::string(f.name) + " (" + f.since + ")";
        }
    }
    if (!others.empty())
        text += " (also missing: " + others + ")";
    return text;
}

bool needs_compat_programs(const std::vector<KernelFeature> &features)
{
    for (const KernelFeature &f : features)
        if (std::strcmp(f.name, "bpf_loop") == 0)
            return !f.present;
    return false;
}

std::string fallbacks_text(const std::vector<KernelFeature> &features)
{
    std::string text;
    for (const KernelFeature &f : features) {
        if (!*f.fallback || (f.present && f.fallback_only_when_missing))
            continue;
        text += (text.empty() ? "" : "; ") + std::string("without ") + f.name + " (" + f.since + "): " + f.fallback;
    }
    return text;
}

std::string compat_text(const std::vector<KernelFeature> &features, const std::string &release)
{
    if (!needs_compat_programs(features))
        return "";
    return "this kernel (" + release + ") traces with the compat BPF programs: " + fallbacks_text(features);
}

const KernelSupport &kernel_support()
{
    static const KernelSupport support = [] {
        KernelSupport s;
        struct utsname u = {};
        uname(&u);
        s.release = u.release;
        s.features = probe_kernel_features();
        // Tests only: the compat programs on a kernel that has every feature, attached as on 5.10
        // (without cookies, at each probe's sites).
        const char *force = getenv("JMT_TEST_COMPAT_PROGRAMS");
        for (KernelFeature &f : s.features) {
            if (force && std::strcmp(force, "1") == 0 &&
                (std::strcmp(f.name, "bpf_loop") == 0 || std::strcmp(f.name, "BPF cookies") == 0))
                f.present = false;
            if (std::strcmp(f.name, "BPF cookies") == 0)
                s.attach_cookie = f.present;
        }
        s.compat = needs_compat_programs(s.features);
        return s;
    }();
    return support;
}

std::string launch_problem(const KernelSupport &support, bool args_in_registers)
{
    if (support.attach_cookie || args_in_registers)
        return "";
    return "this kernel (" + support.release + ") has no BPF cookies (Linux 5.15) and this JDK's notes pass the " +
           "method probes' arguments other than in registers, so the probes cannot be attached before the JVM " +
           "loads libjvm.so: start the JVM with -XX:+DTraceMethodProbes, then trace it with -p PID";
}

std::string kernel_features_problem()
{
    const KernelSupport &s = kernel_support();
    return missing_features_text(s.features, s.release);
}

void check_kernel_features()
{
    const std::string text = kernel_features_problem();
    if (!text.empty())
        throw Error(text, ENOTSUP);
}

std::string kernel_description()
{
    const KernelSupport &s = kernel_support();
    if (!s.compat)
        return s.release;
    return s.release + " (fallbacks: " + fallbacks_text(s.features) + ")";
}

}  // namespace jmt
