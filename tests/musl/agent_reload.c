/*
 * musl's dynamic linker and jmethodtime's agent (docs/switch.md, "musl JVMs"): what a JVM on
 * musl does when a tracer's request loads the agent again.
 *
 * usage: agent_reload AGENT_SO DIR
 * 1. AGENT_SO copied to DIR/libjmtagent.so and loaded: the first request. Its file is opened
 *    and kept, as the agent keeps own_fd, then unlinked, as the tracer removes what it placed.
 * 2. A copy placed anew at the same path and loaded: musl knows libraries by device and inode,
 *    so this is a second agent with a state of its own (the problem, reproduced).
 * 3. /proc/self/fd/N of the kept file loaded: the first agent again (the fix).
 * Prints one line per step; exit 0 when 2 is a second copy and 3 the first.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int copy_file(const char *from, const char *to)
{
    char buf[65536];
    ssize_t n;
    int in = open(from, O_RDONLY | O_CLOEXEC), out;

    if (in < 0)
        return -1;
    out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
    if (out < 0) {
        close(in);
        return -1;
    }
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            n = -1;
            break;
        }
    close(in);
    close(out);
    return n < 0 ? -1 : 0;
}

static void *load(const char *path, const char *step)
{
    void *h = dlopen(path, RTLD_NOW);
    void *state = h ? dlsym(h, "jmt_agent_state") : NULL;

    printf("%s: dlopen(%s) = %p, jmt_agent_state at %p%s%s\n", step, path, h, state, h ? "" : ": ", h ? "" : dlerror());
    return state;
}

int main(int argc, char **argv)
{
    char path[4096], self[64];
    void *first, *placed_anew, *by_fd;
    int fd;

    if (argc != 3) {
        fprintf(stderr, "usage: %s AGENT_SO DIR\n", argv[0]);
        return 2;
    }
    snprintf(path, sizeof path, "%s/libjmtagent.so", argv[2]);
    if (copy_file(argv[1], path) != 0) {
        perror(path);
        return 2;
    }
    first = load(path, "first load");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    unlink(path);
    if (!first || fd < 0 || copy_file(argv[1], path) != 0)
        return 2;
    placed_anew = load(path, "placed anew");
    unlink(path);
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    by_fd = load(self, "kept file");
    printf("placed anew: %s; kept file: %s\n",
           placed_anew && placed_anew != first ? "a second agent" : "the first agent",
           by_fd == first ? "the first agent" : "another agent");
    return placed_anew && placed_anew != first && by_fd == first ? 0 : 1;
}
