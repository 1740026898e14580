#include "loader/probe_holders.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>

#include "util/procfs.h"

namespace jmt {

namespace {

// struct bpf_link_info with its perf-event member, as kernels from 6.6 fill it
// (include/uapi/linux/bpf.h: union member perf_event, its uprobe part:
// file_name pointer, name_len, offset); the uapi headers here (6.1) predate
// that member, so its part is spelled out, placed where the header's union is.
constexpr uint32_t kPerfEventUprobe = 1;     // enum bpf_perf_event_type: BPF_PERF_EVENT_UPROBE
constexpr uint32_t kPerfEventUretprobe = 2;  // BPF_PERF_EVENT_URETPROBE
struct PerfLinkInfo {
    uint32_t type, id, prog_id, pad;
    uint32_t event_type, pad2;  // perf_event.type
    uint64_t file_name;         // perf_event.uprobe
    uint32_t name_len, offset;
    uint8_t rest[192];  // the rest of struct bpf_link_info, whatever this kernel's size
};
static_assert(offsetof(PerfLinkInfo, event_type) == offsetof(bpf_link_info, raw_tracepoint),
              "the perf-event member starts where the header's union does");
static_assert(sizeof(PerfLinkInfo) >= sizeof(bpf_link_info), "space for all the kernel writes");

// The uprobe site of the link behind fd; false for other links.
bool link_site(int fd, UprobeSite &site)
{
    char name[4096] = {};
    PerfLinkInfo info{};
    info.file_name = reinterpret_cast<uint64_t>(name);
    info.name_len = sizeof(name);
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || info.type != BPF_LINK_TYPE_PERF_EVENT ||
        (info.event_type != kPerfEventUprobe && info.event_type != kPerfEventUretprobe) || !name[0])
        return false;
    // The name is the path the tracer gave, as it resolves from here.
    struct stat st;
    if (stat(name, &st) != 0)
        return false;
    site = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), info.offset};
    return true;
}

std::string comm_of(int pid)
{
    std::string comm = read_file("/proc/" + std::to_string(pid) + "/comm");
    while (!comm.empty() && (comm.back() == '\n' || comm.back() == ' '))
        comm.pop_back();
    return comm;
}

// Every (pid, fd) of processes other than this one whose fd's link target starts with prefix.
// The fds of pid whose link target starts with prefix.
std::vector<int> fds_of(int pid, const std::string &prefix)
{
    std::vector<int> found;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR *fds = opendir(dir.c_str());
    if (!fds)
        return found;
    while (dirent *f = readdir(fds)) {
        char target[256];
        const ssize_t n = readlinkat(dirfd(fds), f->d_name, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = 0;
        if (strncmp(target, prefix.c_str(), prefix.size()) == 0)
            found.push_back(atoi(f->d_name));
    }
    closedir(fds);
    return found;
}

// Every (pid, fd) of processes other than this one whose fd's link target starts with prefix.
std::vector<std::pair<int, int>> fds_named(const std::string &prefix)
{
    std::vector<std::pair<int, int>> found;
    DIR *proc = opendir("/proc");
    if (!proc)
        return found;
    const int self = getpid();
    while (dirent *e = readdir(proc)) {
        const int pid = atoi(e->d_name);
        if (pid > 0 && pid != self)
            for (int fd : fds_of(pid, prefix))
                found.emplace_back(pid, fd);
    }
    closedir(proc);
    return found;
}

// The id of the bpf link behind fd of pid (its fdinfo's link_id), or 0.
uint32_t link_id_of(int pid, int fd)
{
    std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
    std::string line;
    while (std::getline(info, line))
        if (line.rfind("link_id:", 0) == 0)
            return static_cast<uint32_t>(atoll(line.c_str() + 8));
    return 0;
}

// The ids of the bpf links pid holds.
std::set<uint32_t> link_ids_of(int pid)
{
    std::set<uint32_t> ids;
    for (int fd : fds_of(pid, "anon_inode:bpf_link"))
        if (const uint32_t id = link_id_of(pid, fd))
            ids.insert(id);
    return ids;
}

void add_holder(std::vector<ProbeHolder> &holders, int pid)
{
    for (const ProbeHolder &h : holders)
        if (h.pid == pid)
            return;
    std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> args;
    for (size_t at = 0; at < cmdline.size();) {
        const size_t end = cmdline.find('\0', at);
        args.push_back(cmdline.substr(at, end == std::string::npos ? std::string::npos : end - at));
        at = end == std::string::npos ? cmdline.size() : end + 1;
    }
    holders.push_back({pid, comm_of(pid), std::move(args)});
}

}  // namespace

std::set<UprobeSite> own_uprobe_sites(const std::string &path, std::set<uint32_t> &own_ids)
{
    std::set<UprobeSite> sites;
    struct stat file;
    if (stat(path.c_str(), &file) != 0)
        return sites;
    for (uint32_t id : link_ids_of(getpid())) {
        own_ids.insert(id);
        const int fd = bpf_link_get_fd_by_id(id);
        if (fd < 0)
            continue;
        UprobeSite site;
        if (link_site(fd, site) && site.dev == static_cast<uint64_t>(file.st_dev) &&
            site.ino == static_cast<uint64_t>(file.st_ino))
            sites.insert(site);
        close(fd);
    }
    return sites;
}

std::vector<ProbeHolder> link_holders(const std::set<UprobeSite> &sites, const std::set<uint32_t> &own_ids)
{
    // The links on our sites that are not ours, by id.
    std::set<uint32_t> foreign;
    for (__u32 id = 0; bpf_link_get_next_id(id, &id) == 0;) {
        if (own_ids.count(id))
            continue;
        const int fd = bpf_link_get_fd_by_id(id);
        if (fd < 0)
            continue;
        UprobeSite site;
        if (link_site(fd, site) && sites.count(site))
            foreign.insert(id);
        close(fd);
    }
    std::vector<ProbeHolder> holders;
    if (foreign.empty())
        return holders;
    // Their owners: the processes whose bpf-link fds carry those ids.
    for (const auto &[pid, fd] : fds_named("anon_inode:bpf_link"))
        if (foreign.count(link_id_of(pid, fd)))
            add_holder(holders, pid);
    if (holders.empty())
        holders.push_back({0, "a process that exited or is out of sight", {}});
    return holders;
}

std::vector<ProbeHolder> perf_event_holders()
{
    std::vector<ProbeHolder> holders;
    for (const auto &[pid, fd] : fds_named("anon_inode:[perf_event]"))
        add_holder(holders, pid);
    return holders;
}

bool names_pid(const std::vector<std::string> &args, int pid)
{
    const std::string p = std::to_string(pid);
    for (size_t i = 1; i < args.size(); i++)
        if (args[i] == p || args[i] == "--pid=" + p || args[i] == "-p" + p)
            return true;
    return false;
}

std::vector<ProbeHolder> tracing_pid(const std::vector<ProbeHolder> &holders, int pid)
{
    std::vector<ProbeHolder> found;
    for (const ProbeHolder &h : holders)
        if (names_pid(h.args, pid))
            found.push_back(h);
    return found;
}

bool breakpoint_at(int pid, uint64_t addr)
{
    const std::string byte = read_target_memory(pid, addr, 1);
    return byte.size() == 1 && static_cast<unsigned char>(byte[0]) == 0xCC;
}

std::string holders_text(const std::vector<ProbeHolder> &holders)
{
    std::string text;
    for (size_t i = 0; i < holders.size(); i++) {
        text += i ? ", " : "";
        text +=
            holders[i].pid ? "pid " + std::to_string(holders[i].pid) + " (" + holders[i].comm + ")" : holders[i].comm;
    }
    return text;
}

}  // namespace jmt
