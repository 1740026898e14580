#include "kernel/preemption.h"

#include <sys/utsname.h>
#include <zlib.h>

#include <sstream>
#include <vector>

#include "util/procfs.h"

namespace jmt {

namespace {

std::vector<std::string> words(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string w;
    while (in >> w)
        out.push_back(w);
    return out;
}

bool has_word(const std::string &text, const std::string &word)
{
    for (const std::string &w : words(text))
        if (w == word)
            return true;
    return false;
}

bool config_has(const std::string &config, const std::string &option)
{
    std::istringstream in(config);
    std::string line;
    while (std::getline(in, line))
        if (line == option + "=y")
            return true;
    return false;
}

Preemption of_mode(const std::string &mode)
{
    if (mode == "none" || mode == "voluntary")
        return Preemption::Off;
    if (mode == "full" || mode == "lazy" || mode == "laziest")
        return Preemption::On;
    return Preemption::Unknown;
}

std::string read_gzip(const std::string &path)
{
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        return "";
    std::string out;
    char buf[65536];
    int n;
    while ((n = gzread(f, buf, sizeof(buf))) > 0)
        out.append(buf, static_cast<size_t>(n));
    gzclose(f);
    return out;
}

}  // namespace

Preemption preemption_of(const KernelFacts &facts)
{
    // The debugfs file names the active mode in parentheses.
    if (facts.debugfs_mode) {
        for (const std::string &w : words(*facts.debugfs_mode))
            if (w.size() > 2 && w.front() == '(' && w.back() == ')')
                return of_mode(w.substr(1, w.size() - 2));
    }
    if (has_word(facts.version, "PREEMPT_RT"))
        return Preemption::On;
    if (has_word(facts.version, "PREEMPT_DYNAMIC")) {
        for (const std::string &w : words(facts.cmdline))
            if (w.rfind("preempt=", 0) == 0)
                return of_mode(w.substr(8));
        if (!facts.config)
            return Preemption::Unknown;
        if (config_has(*facts.config, "CONFIG_PREEMPT_NONE") || config_has(*facts.config, "CONFIG_PREEMPT_VOLUNTARY"))
            return Preemption::Off;
        if (config_has(*facts.config, "CONFIG_PREEMPT") || config_has(*facts.config, "CONFIG_PREEMPT_LAZY"))
            return Preemption::On;
        return Preemption::Unknown;
    }
    // Static models: uname -v says PREEMPT (full) or PREEMPT_LAZY; none or voluntary say nothing.
    if (has_word(facts.version, "PREEMPT") || has_word(facts.version, "PREEMPT_LAZY"))
        return Preemption::On;
    return Preemption::Off;
}

KernelFacts read_kernel_facts()
{
    KernelFacts facts;
    std::string mode = read_file("/sys/kernel/debug/sched/preempt");
    if (!mode.empty())
        facts.debugfs_mode = mode;
    struct utsname u;
    if (uname(&u) == 0)
        facts.version = u.version;
    facts.cmdline = read_file("/proc/cmdline");
    std::string config = read_gzip("/proc/config.gz");
    if (config.empty() && uname(&u) == 0)
        config = read_file(std::string("/boot/config-") + u.release);
    if (!config.empty())
        facts.config = config;
    return facts;
}

Preemption kernel_preemption() { return preemption_of(read_kernel_facts()); }

}  // namespace jmt
