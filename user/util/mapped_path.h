// From a path in another process's /proc/PID/maps to the file here, and to the
// path that process itself would open.
//
// The kernel writes a mapped file's path from the reader's root when the file
// is reachable from it, from the process's own root otherwise. So a JVM in a
// container (its own mount namespace) shows its own paths, reachable here
// through /proc/PID/root; a JVM in a plain chroot (this mount namespace) shows
// this process's paths, its own being those below its root. Each candidate is
// accepted only when it is the mapped file itself: the device and inode of the
// maps line.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/procfs.h"

namespace jmt {

// A file's identity: device (major, minor) and inode.
struct FileId {
    uint32_t major = 0, minor = 0;
    uint64_t inode = 0;
    bool operator==(const FileId &o) const { return major == o.major && minor == o.minor && inode == o.inode; }
    bool operator!=(const FileId &o) const { return !(*this == o); }
};

// The identity of a maps line's file ("fe:01" and its inode); nullopt for
// anonymous memory or a device field that does not parse.
std::optional<FileId> maps_file_id(const MapsEntry &entry);

// How one process's maps paths lead to files here and to its own paths.
struct ProcessView {
    std::string prefix;          // prepended to a maps path to open it here: "/proc/PID/root", or "" (our paths)
    std::string own_root;        // prefix "": the process's root as our path ("" when it is "/")
    bool own_root_known = true;  // prefix "": own_root was checked to be the process's root
    bool verified = false;       // a candidate was the mapped file itself
    // The maps path as a path to open here.
    std::string here(const std::string &maps_path) const { return prefix + maps_path; }
    // The path the process itself names the file by; "" when it lies outside its root.
    std::string own(const std::string &maps_path) const;
};

// The identity of the file a path leads to (following links); nullopt when none.
using IdentityOf = std::function<std::optional<FileId>(const std::string &path)>;

// The view of pid whose maps line entry names a file: through /proc/PID/root first, then
// our own path, the candidate whose identity is entry's. root_link is what /proc/PID/root
// reads (its root as our path, "/" for ours); it is kept as own_root only when root_id is
// the process's root's identity. Neither candidate: prefix /proc/PID/root, not verified.
ProcessView choose_view(int pid, const MapsEntry &entry, const std::string &root_link,
                        const std::optional<FileId> &root_id, const IdentityOf &identity_of);

// choose_view on this host's files (stat) and pid's /proc/PID/root.
ProcessView process_view(int pid, const MapsEntry &entry);

// The view of pid from its maps lines: that of the first file mapping (of at most
// kViewTries distinct ones, deleted files left out) a candidate verifies. Every
// path of one process's maps takes the same form, so the view also names files
// that can no longer be checked (an agent removed once loaded).
constexpr size_t kViewTries = 8;
ProcessView process_view(int pid, const std::vector<MapsEntry> &maps);

// A path that opens the mapped file of entry here: the view's, when verified, else
// /proc/PID/map_files/START-END (the mapping itself, whatever its path).
std::string mapped_file_here(int pid, const ProcessView &view, const MapsEntry &entry);

}  // namespace jmt
