#include <algorithm>
#include <vector>

#include "report/report.h"

namespace jmt {

namespace {

constexpr size_t kPinnedMethodsShown = 3;

}  // namespace

std::string virtual_threads_text(const Profile &profile)
{
    if (!profile.virtual_threads)
        return {};
    if (!profile.virtual_threads_not_followed.empty())
        return "JDK " + profile.jdk_version + ": virtual threads are not followed across unmounts (" +
               profile.virtual_threads_not_followed +
               "): a call open across an unmount may end without a return or show one without an entry, and its "
               "times hold other virtual threads' work";
    return "JDK " + profile.jdk_version + ": virtual threads followed across unmounts (" +
           std::to_string(profile.diag.vt_unmounts) +
           " unmounts with traced frames open); a frame's elapsed time holds the time its virtual thread was "
           "unmounted, counted as blocked; its on-CPU time is its own";
}

std::string pinned_text(const Profile &profile)
{
    const Diagnostics &d = profile.diag;
    const uint64_t blocks = d.pinned_monitor + d.pinned_native + d.pinned_critical + d.pinned_other;
    if (blocks == 0)
        return {};
    std::vector<std::pair<uint64_t, std::string>> reasons = {{d.pinned_monitor, "a monitor held"},
                                                             {d.pinned_native, "a native frame"},
                                                             {d.pinned_critical, "a critical section"},
                                                             {d.pinned_other, "another reason"}};
    std::stable_sort(reasons.begin(), reasons.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    std::string out = "Pinned: virtual threads blocked their carrier " + format_count(blocks) +
                      (blocks == 1 ? " time" : " times") + " inside traced calls, " + format_duration(d.pinned_ns) +
                      " in all (";
    bool first = true;
    for (const auto &[n, why] : reasons) {
        if (n == 0)
            continue;
        out += (first ? "" : ", ") + format_count(n) + " by " + why;
        first = false;
    }
    out += ")";
    std::vector<const MethodRow *> rows;
    for (const MethodRow &r : profile.methods)
        if (r.stats.pinned > 0)
            rows.push_back(&r);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const MethodRow *a, const MethodRow *b) { return a->stats.pinned_ns > b->stats.pinned_ns; });
    for (size_t i = 0; i < rows.size() && i < kPinnedMethodsShown; i++)
        out += (i ? "; " : "; inside ") + rows[i]->klass + "." + rows[i]->method + " " +
               format_count(rows[i]->stats.pinned) + " for " + format_duration(rows[i]->stats.pinned_ns);
    return out;
}

}  // namespace jmt
