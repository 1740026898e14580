#include "report/dispatch.h"

#include "report/flamegraph.h"
#include "report/folded.h"
#include "report/pprof.h"
#include "report/report.h"

namespace jmt {

void write_outputs(std::ostream &out, const OutputSpec &spec, const Profile &profile, const CallTree &tree,
                   std::ostream *flamegraph, std::ostream *pprof)
{
    if (pprof) {
        std::vector<std::pair<std::string, std::string>> labels;  // host and pid on every sample
        for (const ReportSource &source : profile.sources)
            labels = {{"host", source.hostname}, {"pid", std::to_string(source.pid)}};
        write_pprof(*pprof, {PprofSource{&tree, labels}}, profile.duration_ns);
    }
    if (flamegraph) {
        const std::string title = "jmethodtime pid " + std::to_string(profile.pid) + ": " +
                                  filter_text(profile.packages, profile.class_globs, profile.method_globs) + ", " +
                                  format_duration(profile.duration_ns);
        write_flamegraph_html(*flamegraph, tree, title, spec.metric, profile.methods);
    }
    switch (spec.kind) {
    case OutputKind::Folded: write_folded(out, tree, spec.metric); break;
    case OutputKind::Tree: write_tree(out, profile, tree, spec.min_percent); break;
    case OutputKind::Json:
        write_json(out, profile, profile.interval ? nullptr : &tree);  // "paths" of the whole trace
        break;
    case OutputKind::Csv: write_csv(out, profile, spec.sort); break;
    case OutputKind::Table:
        write_table(out, profile, TableOptions{spec.top, spec.sort, spec.offcpu});
        if (profile.interval)
            out << "\n";
        break;
    }
}

}  // namespace jmt
