// What the running kernel offers the BPF programs, probed through libbpf before they load, so
// that a kernel too old for them is named in one line instead of a verifier refusal, and a
// kernel without bpf_loop gets the compat programs (bpf/compat.bpf.h), whose fallbacks are named.
#pragma once

#include <string>
#include <vector>

namespace jmt {

// One kernel feature the programs call, and the oldest Linux release that has it.
struct KernelFeature {
    const char *name;   // as the kernel names it: "bpf_loop"
    const char *since;  // "5.17"
    bool present;
    // What the compat programs do without it ("" when nothing: a kernel without it is refused).
    const char *fallback = "";
    // The fallback is taken only where the feature is missing (the others: by every compat program).
    bool fallback_only_when_missing = false;
};

// The features the programs need, newest first, each probed on the running kernel (a probe
// loads a two-instruction program: needs the privilege check first).
std::vector<KernelFeature> probe_kernel_features();

// "" when every feature without a fallback is present; otherwise one line naming the newest such
// missing feature, the release that brought it, and the others missing.
std::string missing_features_text(const std::vector<KernelFeature> &features, const std::string &release);

// Whether the compat programs must load: bpf_loop is missing.
bool needs_compat_programs(const std::vector<KernelFeature> &features);

// The fallbacks of the compat programs (every missing feature's, and those the compat programs
// use in place of features this kernel has): "bpf_loop (5.17): ...; ...". "" when none.
std::string fallbacks_text(const std::vector<KernelFeature> &features);

// One line for --list on a kernel that gets the compat programs ("" otherwise).
std::string compat_text(const std::vector<KernelFeature> &features, const std::string &release);

// The running kernel, probed once: its release, its features.
struct KernelSupport {
    std::string release;
    std::vector<KernelFeature> features;
    bool compat = false;  // the compat programs load (no bpf_loop, or JMT_TEST_COMPAT_PROGRAMS=1)
    // BPF cookies (5.15): without them libbpf finds a USDT probe's spec by its address in the
    // process, so the probes go to their sites as plain uprobes (loader/programs.h, attach_usdt).
    bool attach_cookie = true;
};

// Launch mode's one line on a kernel without BPF cookies whose programs cannot
// go to the probes' sites as plain uprobes (args_in_registers false: the JDK's
// notes pass the method probes' arguments other than in plain registers); "" when it can launch.
std::string launch_problem(const KernelSupport &support, bool args_in_registers);
const KernelSupport &kernel_support();

// missing_features_text of the running kernel ("" when it has every feature).
std::string kernel_features_problem();

// Throws jmt::Error with kernel_features_problem's text when it is not "".
void check_kernel_features();

// The report's source.kernel: the release, and the fallbacks when the compat programs loaded:
// "5.10.0-39-amd64 (fallbacks: ...)".
std::string kernel_description();

}  // namespace jmt
