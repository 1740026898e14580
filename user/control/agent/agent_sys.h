/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The few Linux system calls the agent makes, without a C library (the JVM
 * may link glibc or musl): openat, read, close, ppoll. Each returns what the kernel
 * returns: a value >= 0, or -errno.
 */
#ifndef JMT_AGENT_SYS_H
#define JMT_AGENT_SYS_H

#if defined(__x86_64__)
#define JMT_SYS_OPENAT 257
#define JMT_SYS_READ 0
#define JMT_SYS_CLOSE 3
#define JMT_SYS_PPOLL 271
#elif defined(__aarch64__)
#define JMT_SYS_OPENAT 56
#define JMT_SYS_READ 63
#define JMT_SYS_CLOSE 57
#define JMT_SYS_PPOLL 73
#else
#error "the agent's system calls are written for x86_64 and aarch64"
#endif

#define JMT_AT_FDCWD (-100)
#define JMT_O_RDONLY 0
#define JMT_O_NONBLOCK 04000
#define JMT_O_CLOEXEC 02000000
#define JMT_EINTR 4
#define JMT_POLLIN 0x001
#define JMT_POLLHUP 0x010

struct jmt_timespec {
	long sec;
	long nsec;
};

struct jmt_pollfd {
	int fd;
	short events;
	short revents;
};

static inline long jmt_syscall4(long n, long a, long b, long c, long d)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
#else
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	ret = x0;
#endif
	return ret;
}

static inline int jmt_open_read(const char *path)
{
	return (int)jmt_syscall4(JMT_SYS_OPENAT, JMT_AT_FDCWD, (long)path,
				 JMT_O_RDONLY | JMT_O_NONBLOCK | JMT_O_CLOEXEC, 0);
}

/* Blocking read of up to n bytes; EINTR is read through. */
static inline long jmt_read(int fd, void *buf, unsigned long n)
{
	long r;

	do {
		r = jmt_syscall4(JMT_SYS_READ, fd, (long)buf, (long)n, 0);
	} while (r == -JMT_EINTR);
	return r;
}

static inline void jmt_close(int fd)
{
	jmt_syscall4(JMT_SYS_CLOSE, fd, 0, 0, 0);
}

/* Waits without a timeout until fd is readable or hung up (or fails); EINTR is waited through. */
static inline long jmt_wait_readable(int fd)
{
	struct jmt_pollfd p;
	long r;

	do {
		p.fd = fd;
		p.events = JMT_POLLIN;
		p.revents = 0;
		r = jmt_syscall4(JMT_SYS_PPOLL, (long)&p, 1, 0, 0);
	} while (r == -JMT_EINTR);
	return r;
}

/* Sleeps ms milliseconds (less when a signal interrupts it). */
static inline void jmt_sleep_ms(long ms)
{
	struct jmt_timespec t = {ms / 1000, (ms % 1000) * 1000000L};

	jmt_syscall4(JMT_SYS_PPOLL, 0, 0, (long)&t, 0);
}

/* The process's CPU time, user and system, in clock ticks (/proc/self/stat fields 14 and 15);
 * -1 when it cannot be read. */
static inline long jmt_self_cpu_ticks(void)
{
	char buf[1024];
	long n, i, field = 2, v = 0, sum = 0;
	int fd = jmt_open_read("/proc/self/stat");

	if (fd < 0)
		return -1;
	n = jmt_read(fd, buf, sizeof(buf));
	jmt_close(fd);
	if (n <= 0)
		return -1;
	/* The name (field 2) is in parentheses and may hold spaces: fields are counted after its last ')'. */
	for (i = n - 1; i >= 0 && buf[i] != ')'; i--)
		;
	if (i < 0)
		return -1;
	for (i++; i < n; i++) {
		if (buf[i] == ' ') {
			if (field == 14 || field == 15)
				sum += v;
			if (++field > 15)
				return sum;
			v = 0;
		} else if (buf[i] >= '0' && buf[i] <= '9') {
			v = v * 10 + (buf[i] - '0');
		}
	}
	return -1;
}

#endif /* JMT_AGENT_SYS_H */
