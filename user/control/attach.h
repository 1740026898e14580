// HotSpot's attach mechanism, the protocol jcmd speaks, without a JDK on the
// host: a UNIX socket /tmp/.java_pid<PID> in the JVM's mount namespace (PID as
// the JVM sees itself), which the JVM opens when it finds a trigger file
// .attach_pid<PID> in /tmp on SIGQUIT. A request is "1\0COMMAND\0ARG\0ARG\0ARG\0";
// the reply a status line, then text, then EOF.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace jmt {

// What /proc/PID/status says that the protocol needs.
struct AttachIdentity {
    int pid = 0;     // in this host's pid namespace
    int ns_pid = 0;  // as the JVM sees itself (NSpid's last field)
    uid_t uid = 0;   // the JVM's effective user and group
    gid_t gid = 0;
    bool handles_sigquit = false;  // SigCgt has SIGQUIT: the JVM's signal handler is installed
};

// Parses the text of /proc/PID/status; throws jmt::Error when a field is missing.
AttachIdentity parse_attach_identity(int pid, const std::string &status_text);

struct AttachReply {
    int status = -1;   // the first line: 0 when the JVM ran the command
    std::string text;  // the rest
};

struct AttachLimits {
    uint64_t listener_ns = 10'000'000'000ULL;  // for the socket to appear after SIGQUIT
    uint64_t reply_ns = 300'000'000'000ULL;    // for the whole reply (a retransform may take long)
};

// Sends one request to pid, the process that started at start_ticks (/proc/PID/stat; 0: whichever
// has the pid), starting its attach listener when needed, and reads the reply. Every name in the
// JVM's /tmp is resolved inside its root (a link there never leads into the host's), the JVM is
// signalled through a pidfd, and the socket's peer must be that process. Throws jmt::Error naming
// the cause and the fix: another process has the pid, no socket in time
// (-XX:+DisableAttachMechanism when attach_disabled), a JVM that does not handle SIGQUIT (-Xrs)
// without a socket, a socket that is not that JVM's, a stop signal while waiting for the reply.
AttachReply attach_request(int pid, uint64_t start_ticks, const std::string &command,
                           const std::vector<std::string> &args, bool attach_disabled, const AttachLimits &limits = {});

}  // namespace jmt
