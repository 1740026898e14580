/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where the agent may store to the DTraceMethodProbes byte a BEGIN names: in
 * a writable mapping of libjvm.so (its data), or the anonymous writable
 * mapping right after one (the rest of its .bss), per /proc/self/maps; the
 * same rule as the tool's (control/flag_write.h).
 */
#ifndef JMT_AGENT_MAPS_H
#define JMT_AGENT_MAPS_H

#include <stdint.h>

#include "agent_sys.h"

#define JMT_MAPS_LINE_MAX 512

/* One line of /proc/self/maps, fields as the tool's parse_maps reads them. */
struct jmt_maps_line {
	uint64_t start, end;
	int writable;
	int libjvm; /* its path ends in /libjvm.so */
	int anonymous;
};

static inline const char *jmt_hex_field(const char *p, const char *end, uint64_t *v)
{
	*v = 0;
	for (; p < end; p++) {
		char c = *p;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			break;
		*v = *v << 4 | d;
	}
	return p;
}

/* 0 when the line parses into *m. */
static inline int jmt_parse_maps_line(const char *line, unsigned long len, struct jmt_maps_line *m)
{
	static const char name[] = "/libjvm.so";
	const unsigned long name_len = sizeof(name) - 1;
	const char *p = line, *end = line + len;
	unsigned long i;
	int field;

	p = jmt_hex_field(p, end, &m->start);
	if (p >= end || *p != '-')
		return -1;
	p = jmt_hex_field(p + 1, end, &m->end);
	if (end - p < 5 || *p != ' ')
		return -1;
	m->writable = p[2] == 'w';
	p += 5;
	/* offset, dev, inode, then the path (may hold spaces) */
	for (field = 0; field < 3; field++) {
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	m->anonymous = p == end;
	m->libjvm = (unsigned long)(end - p) >= name_len;
	for (i = 0; m->libjvm && i < name_len; i++)
		if (end[-(long)name_len + (long)i] != name[i])
			m->libjvm = 0;
	return 0;
}

/* 1 when addr may hold the flag (and the byte there reads 0 or 1), else 0. */
static inline int jmt_flag_address_ok(uint64_t addr)
{
	char buf[1024], line[JMT_MAPS_LINE_MAX];
	unsigned long len = 0;
	struct jmt_maps_line m, prev = {0};
	int fd = jmt_open_read("/proc/self/maps"), ok = 0, found = 0;
	long n;

	if (fd < 0)
		return 0;
	while (!found && (n = jmt_read(fd, buf, sizeof(buf))) > 0) {
		long i;

		for (i = 0; i < n && !found; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line))
					line[len++] = buf[i];
				continue;
			}
			if (jmt_parse_maps_line(line, len, &m) == 0) {
				if (addr >= m.start && addr < m.end) {
					found = 1;
					ok = m.writable &&
						(m.libjvm ||
						 (m.anonymous && prev.end == m.start && prev.libjvm && prev.writable));
				}
				prev = m;
			}
			len = 0;
		}
	}
	jmt_close(fd);
	return ok && *(volatile unsigned char *)(unsigned long)addr <= 1;
}

#endif /* JMT_AGENT_MAPS_H */
