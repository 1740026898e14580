#include "run.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "calibrate.h"
#include "error.h"
#include "jvm.h"
#include "lifecycle.h"
#include "report.h"
#include "tracer.h"

namespace jmt {

namespace {

std::string describe_packages(const std::vector<std::string> &packages)
{
    if (packages.empty())
        return "all methods";
    std::string s = "packages ";
    for (size_t i = 0; i < packages.size(); i++)
        s += (i ? ", " : "") + packages[i];
    return s;
}

}  // namespace

int run(const Options &options)
{
    try {
        check_kernel();
        JvmTarget target = inspect_target(options.pid);
        // The report file is opened before tracing: a wrong path fails now, not after the trace.
        std::unique_ptr<std::ofstream> file;
        if (!options.output.empty()) {
            file = std::make_unique<std::ofstream>(options.output, std::ios::out | std::ios::trunc);
            if (!*file)
                throw Error("cannot write the report to " + options.output + ": " + strerror(errno) +
                                "; give a writable path with -o",
                            errno);
        }

        StopSignals stop;
        ProbeCost cost;
        if (!options.raw)
            cost = calibrate_probe_cost(options.verbose);
        TracerConfig config;
        config.programs.pid = options.pid;
        config.programs.packages = options.packages;
        config.programs.arg_regs = target.arg_regs;
        config.programs.verbose = options.verbose;
        config.libjvm = target.libjvm;
        auto tracer = std::make_unique<Tracer>(config);

        const uint64_t start_ns = monotonic_ns();
        std::cerr << "Tracing " << describe_packages(options.packages) << " in pid " << options.pid << " ("
                  << target.comm << "); Ctrl-C or SIGTERM to stop" << std::endl;
        EndReason reason = wait_for_end(stop, options.pid, options.duration_s);
        const uint64_t end_ns = monotonic_ns();

        Profile profile;
        Snapshot snap = tracer->snapshot();
        tracer.reset();  // detach before formatting: the JVM runs untraced from here
        profile.pid = options.pid;
        profile.duration_ns = end_ns - start_ns;
        profile.packages = options.packages;
        profile.methods = std::move(snap.methods);
        profile.diag = snap.diag;
        profile.probe_cost = cost;
        if (!options.raw) {
            for (MethodRow &row : profile.methods)
                row.stats = without_probe_cost(row.stats, cost);
            profile.corrected = true;
        }

        if (reason == EndReason::TargetExited)
            std::cerr << "Target pid " << options.pid << " exited; detached" << std::endl;
        else
            std::cerr << "Detached from pid " << options.pid << std::endl;

        profile.methods = rows_with_min_calls(profile.methods, options.min_calls);
        std::ostream &out = file ? *file : std::cout;
        if (options.json) {
            write_json(out, profile);
        } else if (options.csv) {
            write_csv(out, profile, options.sort);
        } else {
            TableOptions table;
            table.top = options.top;
            table.sort = options.sort;
            write_table(out, profile, table);
        }
        out.flush();
        if (!out)
            throw Error("writing the report to " + (file ? options.output : std::string("standard output")) +
                        " failed: " + strerror(errno) + "; check the disk space and the path");
        return 0;
    } catch (const Error &e) {
        std::cerr << "jmethodtime: " << e.what() << std::endl;
        return 1;
    }
}

}  // namespace jmt
