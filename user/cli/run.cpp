#include "cli/run.h"

#include <unistd.h>

#include <iostream>

#include "cli/session.h"
#include "cli/sink.h"
#include "loader/kernel_features.h"
#include "report/jvm_list.h"
#include "util/error.h"

namespace jmt {

namespace {

int run_list(const Options &options)
{
    if (geteuid() != 0) {
        std::cerr << "jmethodtime: not root: JVMs of other users are not listed (run as root to see all)" << std::endl;
    } else {
        const KernelSupport &support = kernel_support();
        std::string kernel = kernel_features_problem();
        if (kernel.empty())
            kernel = compat_text(support.features, support.release);
        if (!kernel.empty())
            std::cerr << "jmethodtime: " << kernel << std::endl;
    }
    std::vector<JvmTarget> jvms = list_jvms();
    ReportSink sink(options.output);
    if (options.json)
        write_jvm_json(sink.stream(), jvms);
    else
        write_jvm_table(sink.stream(), jvms);
    sink.flush();
    return 0;
}

int run_trace(const Options &options)
{
    TraceSession session(options);
    return session.run();
}

}  // namespace

int run(const Options &options)
{
    try {
        return options.list ? run_list(options) : run_trace(options);
    } catch (const Error &e) {
        std::cerr << "jmethodtime: " << e.what() << std::endl;
        return 1;
    }
}

}  // namespace jmt
