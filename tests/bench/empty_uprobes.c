// empty_uprobes PID PATH OFFSET...: a BPF program that does nothing, as a uprobe at each file
// OFFSET of PATH in process PID, until SIGINT or SIGTERM. Says "attached" on stderr once every
// uprobe is in place. A trap with none of jmethodtime's work in it (trap_cost_alone.sh).
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_SITES 8

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int uprobe_pmu_type(void)
{
    FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
    int type = -1;

    if (f) {
        if (fscanf(f, "%d", &type) != 1)
            type = -1;
        fclose(f);
    }
    return type;
}

static int load_empty_program(void)
{
    struct bpf_insn insns[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT},
    };
    union bpf_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.prog_type = BPF_PROG_TYPE_KPROBE;
    attr.insns = (uint64_t)(uintptr_t)insns;
    attr.insn_cnt = 2;
    attr.license = (uint64_t)(uintptr_t) "GPL";
    return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

int main(int argc, char **argv)
{
    int fds[MAX_SITES];
    int sites = argc - 3, prog, type;

    if (argc < 4 || sites > MAX_SITES) {
        fprintf(stderr, "usage: empty_uprobes PID PATH OFFSET... (at most %d)\n", MAX_SITES);
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    prog = load_empty_program();
    type = uprobe_pmu_type();
    if (prog < 0 || type < 0) {
        perror("empty_uprobes: no BPF program or uprobe PMU (run as root)");
        return 1;
    }
    for (int i = 0; i < sites; i++) {
        struct perf_event_attr pa;

        memset(&pa, 0, sizeof(pa));
        pa.size = sizeof(pa);
        pa.type = (uint32_t)type;
        pa.config1 = (uint64_t)(uintptr_t)argv[2];
        pa.config2 = strtoull(argv[3 + i], NULL, 0);
        fds[i] = (int)syscall(SYS_perf_event_open, &pa, atoi(argv[1]), -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fds[i] < 0 || ioctl(fds[i], PERF_EVENT_IOC_SET_BPF, prog) < 0) {
            perror("empty_uprobes: attach");
            return 1;
        }
    }
    fprintf(stderr, "attached\n");
    while (!stop)
        sleep(1);
    for (int i = 0; i < sites; i++)
        close(fds[i]);
    return 0;
}
