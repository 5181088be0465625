// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * thrasher: join a cgroup and keep writing every 4 KiB page of SIZE MiB of
 * anonymous memory, forever. With memory.high below SIZE (and swap) this
 * keeps the cgroup reclaiming and stalled. Prints "ready" after the first
 * full pass.
 *
 *   thrasher -c CGROUP -s SIZE_MIB
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *cgroup = NULL;
	long size = 64;
	size_t len, i;
	char path[4096], pid[32];
	unsigned char *p, v = 0;
	int opt, fd, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "c:s:")) != -1) {
		switch (opt) {
		case 'c': cgroup = optarg; break;
		case 's': size = atol(optarg); break;
		default:
			fprintf(stderr, "usage: thrasher -c CGROUP -s SIZE_MIB\n");
			return 2;
		}
	}
	if (!cgroup || size <= 0) {
		fprintf(stderr, "usage: thrasher -c CGROUP -s SIZE_MIB\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	fd = open(path, O_WRONLY);
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (fd < 0 || write(fd, pid, n) != n) {
		fprintf(stderr, "thrasher: %s: %s\n", path, strerror(errno));
		return 1;
	}
	close(fd);
	len = (size_t)size << 20;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "thrasher: mmap: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		v++;
		for (i = 0; i < len; i += 4096)
			p[i] = v;
		if (v == 1)
			printf("ready pid=%d\n", getpid());
	}
}
