#include "util/procfs.h"

#include <sys/uio.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace jmt {

std::string who(int pid) { return "pid " + std::to_string(pid); }

std::string read_file(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> stat_fields(const std::string &stat_text)
{
    std::vector<std::string> out;
    const size_t close = stat_text.rfind(')');
    if (close == std::string::npos)
        return out;
    std::istringstream fields(stat_text.substr(close + 1));
    for (std::string field; fields >> field;)
        out.push_back(field);
    return out;
}

std::optional<uint64_t> stat_cpu_ticks(const std::string &stat_text)
{
    // utime and stime are fields 14 and 15.
    const std::vector<std::string> f = stat_fields(stat_text);
    if (f.size() < 13)
        return std::nullopt;
    uint64_t ticks = 0;
    for (const std::string &field : {f[14 - 3], f[15 - 3]}) {
        if (field.find_first_not_of("0123456789") != std::string::npos)
            return std::nullopt;
        ticks += std::stoull(field);
    }
    return ticks;
}

std::optional<uint64_t> process_cpu_ns(int pid)
{
    const std::optional<uint64_t> ticks = stat_cpu_ticks(read_file("/proc/" + std::to_string(pid) + "/stat"));
    const long hz = sysconf(_SC_CLK_TCK);
    if (!ticks || hz <= 0)
        return std::nullopt;
    return *ticks * (1000000000ULL / static_cast<uint64_t>(hz));
}

std::string read_target_memory(int pid, uint64_t addr, size_t len)
{
    std::string buf(len, '\0');
    struct iovec local = {buf.data(), len};
    struct iovec remote = {reinterpret_cast<void *>(addr), len};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n != static_cast<ssize_t>(len))
        return {};
    return buf;
}

std::vector<MapsEntry> parse_maps(const std::string &maps_text)
{
    std::vector<MapsEntry> out;
    std::istringstream in(maps_text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string range, offset, inode, path;
        MapsEntry e;
        if (!(fields >> range >> e.perms >> offset >> e.dev >> inode))
            continue;
        const size_t dash = range.find('-');
        if (dash == std::string::npos)
            continue;
        try {
            e.start = std::stoull(range.substr(0, dash), nullptr, 16);
            e.end = std::stoull(range.substr(dash + 1), nullptr, 16);
            e.offset = std::stoull(offset, nullptr, 16);
            e.inode = std::stoull(inode);
        } catch (const std::exception &) {
            continue;
        }
        std::getline(fields, path);
        const size_t first = path.find_first_not_of(' ');
        e.path = first == std::string::npos ? std::string() : path.substr(first);
        const std::string deleted = " (deleted)";
        if (e.path.size() > deleted.size() &&
            e.path.compare(e.path.size() - deleted.size(), deleted.size(), deleted) == 0) {
            e.path.resize(e.path.size() - deleted.size());
            e.deleted = true;
        }
        out.push_back(std::move(e));
    }
    return out;
}

uint64_t effective_capabilities(const std::string &status_text)
{
    std::istringstream in(status_text);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("CapEff:", 0) == 0)
            return std::stoull(line.substr(7), nullptr, 16);
    return 0;
}

std::optional<uint64_t> process_start_ticks(int pid)
{
    const std::vector<std::string> f = stat_fields(read_file("/proc/" + std::to_string(pid) + "/stat"));
    if (f.size() < 20 || f[0] == "Z" || f[0] == "X")
        return std::nullopt;
    return std::stoull(f[22 - 3]);
}

}  // namespace jmt
