// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench pagefault --hook-cost: the per-call cost of choose_orders
 * from the kernel's BPF run-time statistics (kernel.bpf_stats_enabled=1).
 *
 * The policy's program is the STRUCT_OPS program named choose_orders that
 * appeared after `mthpctl attach` (program ids only grow). The floor is a
 * near-empty choose_orders ("return 0;", 4 KiB only, two instructions):
 * 4 KiB only so that every fault calls it, as often as a
 * policy that keeps 4 KiB pages is called (a floor that allowed 2M would be
 * called once per 512 pages and its per-call figure would be dominated by
 * cold caches). This file loads it without an object file: a STRUCT_OPS program against the vmlinux
 * BTF of struct bpf_mthp_ops, a struct_ops map holding it (with a one-type
 * BTF as its btf_fd, which the kernel requires), and a link to
 * the cgroup (its directory as the link's target), the way mthpctl attach
 * links the policy.
 * The link lives as long as its fd: closing it (or our exit) detaches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "bench_common.h"

#define FLOOR_NAME "choose_floor"

__u32 bench_hook_last_prog_id(void)
{
	__u32 id = 0, last = 0;

	while (!bpf_prog_get_next_id(id, &id))
		last = id;
	return last;
}

int bench_hook_find_policy_prog(__u32 after_id)
{
	__u32 id = after_id;
	int fd, found = -ENOENT;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_prog_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_PROG_TYPE_STRUCT_OPS && !strcmp(info.name, "choose_orders")) {
			if (found >= 0)
				close(found);
			found = fd;	/* the newest one */
			continue;
		}
		close(fd);
	}
	return found;
}

int bench_hook_stats(int prog_fd, __u64 *cnt, __u64 *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_prog_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

static int member(const struct btf *btf, __s32 type_id, const char *name, int *idx)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m;
	int i;

	if (!t || !btf_is_struct(t))
		return -ENOENT;
	m = btf_members(t);
	for (i = 0; i < (int)btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name)) {
			if (idx)
				*idx = i;
			return btf_member_bit_offset(t, i) / 8;
		}
	return -ENOENT;
}

int bench_hook_floor_attach(const char *cg, int *prog_fd, int *link_fd, char *note, size_t len)
{
	/* r0 = 0 (4 KiB only); exit */
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int ops_id, val_id, doff, moff, midx = 0, map_fd = -1, cg_fd = -1, err = 0;
	struct btf *btf, *ubtf = NULL;
	__u32 zero = 0;
	__s64 vsize;
	char *val = NULL;

	*prog_fd = *link_fd = -1;
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		snprintf(note, len, "floor: no vmlinux BTF: %s", strerror(errno));
		return -ENOENT;
	}
	ops_id = btf__find_by_name_kind(btf, "bpf_mthp_ops", BTF_KIND_STRUCT);
	val_id = btf__find_by_name_kind(btf, "bpf_struct_ops_bpf_mthp_ops", BTF_KIND_STRUCT);
	vsize = val_id > 0 ? btf__resolve_size(btf, val_id) : -1;
	doff = val_id > 0 ? member(btf, val_id, "data", NULL) : -1;
	moff = ops_id > 0 ? member(btf, ops_id, "choose_orders", &midx) : -1;
	btf__free(btf);
	if (ops_id <= 0 || val_id <= 0 || vsize <= 0 || doff < 0 || moff < 0) {
		snprintf(note, len, "floor: this kernel lacks bpf_mthp_ops");
		return -EOPNOTSUPP;
	}
	{
		LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = midx,
			    .attach_btf_id = ops_id);

		*prog_fd = bpf_prog_load(BPF_PROG_TYPE_STRUCT_OPS, FLOOR_NAME, "GPL", insns,
					 sizeof(insns) / sizeof(insns[0]), &popts);
		if (*prog_fd < 0) {
			err = -errno;
			snprintf(note, len, "floor: loading the empty program failed: %s", strerror(-err));
			goto out;
		}
	}
	/* a struct_ops map needs a program BTF (btf_fd) next to the vmlinux
	 * value type, as if it came from an object file: one int will do */
	ubtf = btf__new_empty();
	if (!ubtf || btf__add_int(ubtf, "int", 4, BTF_INT_SIGNED) < 0 ||
	    btf__load_into_kernel(ubtf)) {
		err = -errno ? -errno : -EINVAL;
		snprintf(note, len, "floor: loading a BTF failed: %s", strerror(-err));
		goto out;
	}
	{
		LIBBPF_OPTS(bpf_map_create_opts, mopts, .btf_vmlinux_value_type_id = val_id,
			    .btf_fd = btf__fd(ubtf), .map_flags = BPF_F_LINK);

		map_fd = bpf_map_create(BPF_MAP_TYPE_STRUCT_OPS, "mthp_floor", 4, vsize, 1, &mopts);
		if (map_fd < 0) {
			err = -errno;
			snprintf(note, len, "floor: struct_ops map: %s", strerror(-err));
			goto out;
		}
	}
	val = calloc(1, vsize);
	if (!val) {
		err = -ENOMEM;
		goto out;
	}
	*(unsigned long *)(val + doff + moff) = *prog_fd;
	if (bpf_map_update_elem(map_fd, &zero, val, 0)) {
		err = -errno;
		snprintf(note, len, "floor: struct_ops map update: %s", strerror(-err));
		goto out;
	}
	cg_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		err = -errno;
		snprintf(note, len, "floor: %s: %s", cg, strerror(-err));
		goto out;
	}
	*link_fd = bpf_link_create(map_fd, cg_fd, BPF_STRUCT_OPS, NULL);
	if (*link_fd < 0) {
		err = -errno;
		snprintf(note, len, "floor: attaching to %s failed: %s", cg, strerror(-err));
	}
out:
	btf__free(ubtf);
	free(val);
	if (map_fd >= 0)
		close(map_fd);
	if (cg_fd >= 0)
		close(cg_fd);
	if (err) {
		if (*prog_fd >= 0)
			close(*prog_fd);
		*prog_fd = *link_fd = -1;
	}
	return err;
}
