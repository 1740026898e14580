#include "report/why_empty.h"

#include "report/report.h"

namespace jmt {

namespace {

// "'a', 'b'": options' values as a user typed them.
std::string quoted(const std::vector<std::string> &values)
{
    std::string text;
    for (size_t i = 0; i < values.size(); i++)
        text += (i ? ", '" : "'") + values[i] + "'";
    return text;
}

// " (seen: a/B, c/D)", or "" without examples.
std::string seen_text(const std::vector<std::string> &examples)
{
    if (examples.empty())
        return "";
    std::string text = " (seen: ";
    for (size_t i = 0; i < examples.size(); i++)
        text += (i ? ", " : "") + examples[i];
    return text + ")";
}

std::string plural(uint64_t n, const char *one, const char *many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::optional<NothingTraced> why_nothing_traced(const Profile &profile)
{
    if (!profile.methods.empty() || profile.interval)
        return std::nullopt;
    const Diagnostics &d = profile.diag;
    NothingTraced why;
    why.methods_seen = d.methods_seen;
    const uint64_t by_globs = d.rejected_by_class + d.rejected_by_method;
    const uint64_t rejected = d.rejected_by_package + by_globs;
    if (profile.overhead.events == 0) {
        why.reason = "No probe events came from the JVM while tracing: it ran no Java method, or its probes "
                     "are off (start it with -XX:+DTraceMethodProbes).";
    } else if (d.methods_seen > 0 && rejected >= d.methods_seen && by_globs == 0 && !profile.packages.empty()) {
        why.filter = "--package";
        why.examples = profile.rejected_by_package;
        why.reason = "--package " + quoted(profile.packages) + " matched none of the " +
                     plural(d.methods_seen, "method", "methods") + " seen" + seen_text(why.examples) +
                     ": give whole leading segments of a class name (org/postgresql or org.postgresql).";
    } else if (d.methods_seen > 0 && rejected >= d.methods_seen && by_globs > 0) {
        why.filter = d.rejected_by_class && d.rejected_by_method ? "--class and --method"
                     : d.rejected_by_class                       ? "--class"
                                                                 : "--method";
        why.rejected_classes = d.classes_rejected_by_globs;
        why.examples = profile.rejected_by_globs;
        std::string globs;
        if (!profile.class_globs.empty())
            globs += "--class " + quoted(profile.class_globs);
        if (!profile.method_globs.empty())
            globs += std::string(globs.empty() ? "" : " and ") + "--method " + quoted(profile.method_globs);
        const std::string before =
            profile.packages.empty() ? "Of the " + plural(d.methods_seen, "method", "methods") + " seen, "
                                     : "--package " + quoted(profile.packages) + " let " + std::to_string(by_globs) +
                                           " of the " + plural(d.methods_seen, "method", "methods") + " seen through; ";
        std::vector<std::string> rules;
        if (!profile.packages.empty())
            rules.push_back("its class is under --package");
        if (!profile.class_globs.empty())
            rules.push_back("its class matches --class");
        if (!profile.method_globs.empty())
            rules.push_back("its name matches --method");
        std::string all_of;
        for (size_t i = 0; i < rules.size(); i++)
            all_of += (i == 0 ? "" : i + 1 == rules.size() ? " and " : ", ") + rules[i];
        why.reason = before + globs + " rejected all " + plural(by_globs, "method", "methods") + " of " +
                     plural(why.rejected_classes, "class", "classes") + seen_text(why.examples) +
                     ". The filters combine with AND: a method is traced when " + all_of + ".";
    } else if (profile.method_ids > 0) {
        why.reason = plural(profile.method_ids, "method", "methods") +
                     " passed the filters, but none completed a call while tracing: the calls were still "
                     "open at the end (trace longer, or from before the call: launch the JVM under "
                     "jmethodtime).";
    } else {
        why.reason = "No traced method completed a call during the trace. Check --package (org/postgresql or "
                     "org.postgresql), that the code ran while tracing, and that the JVM runs with "
                     "-XX:+DTraceMethodProbes.";
    }
    return why;
}

std::string nothing_traced_text(const Profile &profile)
{
    if (profile.interval)
        return "No traced method completed a call in this interval.";
    const std::optional<NothingTraced> why = why_nothing_traced(profile);
    return why ? why->reason : std::string();
}

}  // namespace jmt
