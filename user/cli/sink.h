// Where the report and the call-path files go: -o FILE, --pprof FILE,
// --flamegraph FILE (each opened before tracing, so a wrong path fails at
// once), or standard output.
#pragma once

#include <fstream>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>

#include "cli/options.h"
#include "report/dispatch.h"

namespace jmt {

class ReportSink {
public:
    // path: "" for standard output; option: the option that named path, for the error message.
    explicit ReportSink(const std::string &path, const char *option = "-o");
    bool enabled() const { return file_ != nullptr; }
    std::ostream &stream() { return file_ ? *file_ : std::cout; }
    // Flushes; throws jmt::Error when the write failed (disk full, path gone).
    void flush();

private:
    std::string path_;
    std::unique_ptr<std::ofstream> file_;
};

// The report the options ask for: its kind, rows and columns.
OutputSpec output_spec(const Options &o);

// Files written besides the report: --pprof and --flamegraph.
struct PathFiles {
    ReportSink pprof;
    ReportSink flamegraph;
    explicit PathFiles(const Options &o) : pprof(o.pprof, "--pprof"), flamegraph(o.flamegraph, "--flamegraph") {}
};

}  // namespace jmt
