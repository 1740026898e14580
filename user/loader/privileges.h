// Whether this process may load BPF programs and attach them to other processes.
#pragma once

namespace jmt {

// Throws jmt::Error when this process may not load BPF programs and read other
// processes: neither root nor CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN).
void check_privileges();

}  // namespace jmt
