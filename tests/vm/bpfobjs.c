// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bpfobjs: list the struct_ops links and struct_ops maps in the kernel, one
 * per line, sorted by id (the bootstrap bpftool of the toolchain has no
 * `link` command):
 *
 *   link id=N map_id=M cgroup_id=C
 *   map id=N name=NAME
 *
 * The tests diff this list before and after a refused command. Exits 1,
 * saying why on stderr, if any object cannot be read (one that disappears
 * meanwhile is skipped): callers must not take a failed list as empty.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

/* bpf_link_info.struct_ops as extended by the kernel series */
struct so_info {
	__u32 map_id;
	__u32 pad;
	__u64 cgroup_id;
};

/* A failure to read what exists: the list would be incomplete, and an
 * incomplete list must not read as "nothing left". */
static int fail(const char *what, __u32 id)
{
	fprintf(stderr, "bpfobjs: %s %u: %s\n", what, id, strerror(errno));
	return 1;
}

int main(void)
{
	__u32 id = 0;
	int fd;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info;
		struct so_info so;
		__u32 len = sizeof(info);

		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile */
			return fail("link", id);
		}
		memset(&info, 0, sizeof(info));
		if (bpf_link_get_info_by_fd(fd, &info, &len))
			return fail("info of link", id);
		if (info.type == BPF_LINK_TYPE_STRUCT_OPS) {
			memcpy(&so, &info.struct_ops, sizeof(so));
			printf("link id=%u map_id=%u cgroup_id=%llu\n", info.id, so.map_id,
			       (unsigned long long)so.cgroup_id);
		}
		close(fd);
	}
	if (errno != ENOENT)
		return fail("link ids after", id);
	id = 0;
	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info;
		__u32 len = sizeof(info);

		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile */
			return fail("map", id);
		}
		memset(&info, 0, sizeof(info));
		if (bpf_map_get_info_by_fd(fd, &info, &len))
			return fail("info of map", id);
		if (info.type == BPF_MAP_TYPE_STRUCT_OPS)
			printf("map id=%u name=%s\n", info.id, info.name);
		close(fd);
	}
	if (errno != ENOENT)
		return fail("map ids after", id);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bpfobjs: writing the list: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
