#include "cli/sink.h"

#include <cerrno>
#include <cstring>
#include <iostream>

#include "util/error.h"

namespace jmt {

ReportSink::ReportSink(const std::string &path, const char *option) : path_(path)
{
    if (path.empty())
        return;
    file_ = std::make_unique<std::ofstream>(path, std::ios::out | std::ios::trunc | std::ios::binary);
    if (!*file_)
        throw Error("cannot write to " + path + ": " + strerror(errno) + "; give a writable path with " + option,
                    errno);
}

void ReportSink::flush()
{
    stream().flush();
    if (!stream())
        throw Error("writing to " + (file_ ? path_ : std::string("standard output")) + " failed: " + strerror(errno) +
                        "; check the disk space and the path",
                    errno);
}

OutputSpec output_spec(const Options &o)
{
    OutputSpec s;
    s.kind = o.folded ? OutputKind::Folded
             : o.tree ? OutputKind::Tree
             : o.json ? OutputKind::Json
             : o.csv  ? OutputKind::Csv
                      : OutputKind::Table;
    s.top = o.top;
    s.sort = o.sort;
    s.offcpu = o.offcpu;
    s.metric = o.metric;
    s.min_percent = o.min_percent;
    return s;
}

}  // namespace jmt
