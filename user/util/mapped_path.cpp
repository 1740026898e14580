#include "util/mapped_path.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstdio>

namespace jmt {

std::optional<FileId> maps_file_id(const MapsEntry &entry)
{
    const size_t colon = entry.dev.find(':');
    if (entry.inode == 0 || colon == std::string::npos || colon == 0 || colon + 1 == entry.dev.size())
        return std::nullopt;
    const std::string major = entry.dev.substr(0, colon), minor = entry.dev.substr(colon + 1);
    if (major.find_first_not_of("0123456789abcdef") != std::string::npos ||
        minor.find_first_not_of("0123456789abcdef") != std::string::npos || major.size() > 8 || minor.size() > 8)
        return std::nullopt;
    FileId id;
    id.major = static_cast<uint32_t>(std::stoul(major, nullptr, 16));
    id.minor = static_cast<uint32_t>(std::stoul(minor, nullptr, 16));
    id.inode = entry.inode;
    return id;
}

std::string ProcessView::own(const std::string &maps_path) const
{
    if (!prefix.empty() || own_root.empty())
        return own_root_known ? maps_path : std::string();
    if (!own_root_known || maps_path.compare(0, own_root.size(), own_root) != 0 ||
        maps_path.size() <= own_root.size() || maps_path[own_root.size()] != '/')
        return {};
    return maps_path.substr(own_root.size());
}

ProcessView choose_view(int pid, const MapsEntry &entry, const std::string &root_link,
                        const std::optional<FileId> &root_id, const IdentityOf &identity_of)
{
    const std::string proc_root = "/proc/" + std::to_string(pid) + "/root";
    const std::optional<FileId> want = maps_file_id(entry);
    ProcessView view;
    view.prefix = proc_root;
    if (!want || entry.path.empty() || entry.path[0] != '/')
        return view;
    for (const std::string &prefix : {proc_root, std::string()}) {
        if (identity_of(prefix + entry.path) != want)
            continue;
        view.prefix = prefix;
        view.verified = true;
        if (prefix.empty() && root_link != "/") {
            // The process's root as our path, if that path is its root indeed.
            view.own_root_known =
                !root_link.empty() && root_link[0] == '/' && root_id && identity_of(root_link) == root_id;
            view.own_root = view.own_root_known ? root_link : std::string();
            while (view.own_root.size() > 1 && view.own_root.back() == '/')
                view.own_root.pop_back();
        }
        return view;
    }
    return view;
}

namespace {

std::optional<FileId> stat_id(const std::string &path)
{
    struct stat st = {};
    if (stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return FileId{major(st.st_dev), minor(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

}  // namespace

ProcessView process_view(int pid, const MapsEntry &entry)
{
    const std::string proc_root = "/proc/" + std::to_string(pid) + "/root";
    char link[PATH_MAX];
    const ssize_t n = readlink(proc_root.c_str(), link, sizeof(link) - 1);
    const std::string root_link = n > 0 ? std::string(link, static_cast<size_t>(n)) : std::string();
    return choose_view(pid, entry, root_link, stat_id(proc_root), stat_id);
}

ProcessView process_view(int pid, const std::vector<MapsEntry> &maps)
{
    ProcessView view;
    view.prefix = "/proc/" + std::to_string(pid) + "/root";
    std::optional<FileId> last;
    size_t tries = 0;
    for (const MapsEntry &e : maps) {
        const std::optional<FileId> id = maps_file_id(e);
        if (!id || e.deleted || e.path.empty() || e.path[0] != '/' || id == last)
            continue;
        last = id;
        const ProcessView v = process_view(pid, e);
        if (v.verified)
            return v;
        if (++tries >= kViewTries)
            break;
    }
    return view;
}

std::string mapped_file_here(int pid, const ProcessView &view, const MapsEntry &entry)
{
    if (view.verified)
        return view.here(entry.path);
    char range[64];
    snprintf(range, sizeof(range), "%llx-%llx", static_cast<unsigned long long>(entry.start),
             static_cast<unsigned long long>(entry.end));
    return "/proc/" + std::to_string(pid) + "/map_files/" + range;
}

}  // namespace jmt
