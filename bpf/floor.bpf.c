// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The overhead floor: programs on the same two hotspot probes that do nothing.
 * The cost of an event under these is the uprobe trap itself, which no
 * probe-based tracer can go under.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h> /* libbpf attaches USDT programs only with its spec maps */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("usdt")
int floor_entry(struct pt_regs *ctx)
{
	return 0;
}

SEC("usdt")
int floor_return(struct pt_regs *ctx)
{
	return 0;
}
