// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl status: what the kernel says of a policy's BPF objects, beyond
 * its pins: every bpf_mthp_ops in effect for its cgroup (BPF_PROG_QUERY),
 * and the choose_orders program (id, and bpf_stats' run count and time)
 * of a policy pinned without it, through the kernel's BTF.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mthpctl.h"
#include "status.h"

bool status_prog_read(int fd, struct status_policy *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_prog_get_info_by_fd(fd, &info, &len) || info.type != BPF_PROG_TYPE_STRUCT_OPS)
		return false;
	p->prog_id = info.id;
	p->run_cnt = info.run_cnt;
	p->run_time_ns = info.run_time_ns;
	/* a struct_ops program is loaded against its type: the BTF id of
	 * struct bpf_mthp_ops, which BPF_PROG_QUERY takes */
	p->ops_type_id = info.attach_btf_id;
	return true;
}

/*
 * The choose_orders program of a policy whose pins have none (pinned by
 * an older mthpctl): the kernel keeps the ids of a struct_ops map's
 * programs in its value, at the offsets the BTF probe found.
 */
static bool gather_hook(const struct mthpctl_kernel *k, struct status_policy *p)
{
	__u32 prog_id, links;
	bool found;
	int fd;

	if (!p->link_ok || !p->link.map_id)
		return false;
	fd = bpf_map_get_fd_by_id(p->link.map_id);
	if (fd < 0)
		return false;
	if (mthpctl_struct_ops_read(k, fd, &prog_id, &links))
		prog_id = 0;
	close(fd);
	if (!prog_id)
		return false;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return false;
	found = status_prog_read(fd, p);
	close(fd);
	return found;
}

/*
 * Without the offsets: walk the loaded programs once and match them by the
 * totals map they use.
 */
static void gather_hooks_by_maps(struct status_policy *pol, size_t n)
{
	__u32 id = 0, maps[32], i, k;
	size_t j;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info), nr;
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_prog_get_info_by_fd(fd, &info, &len) ||
		    info.type != BPF_PROG_TYPE_STRUCT_OPS || strcmp(info.name, "choose_orders") ||
		    !info.nr_map_ids) {
			close(fd);
			continue;
		}
		nr = info.nr_map_ids < 32 ? info.nr_map_ids : 32;
		memset(&info, 0, sizeof(info));
		info.nr_map_ids = nr;
		info.map_ids = (__u64)(unsigned long)maps;
		len = sizeof(info);
		if (!bpf_prog_get_info_by_fd(fd, &info, &len)) {
			k = info.nr_map_ids < nr ? info.nr_map_ids : nr;
			for (i = 0; i < k; i++)
				for (j = 0; j < n; j++)
					if (!pol[j].prog_id && pol[j].totals_map_id &&
					    pol[j].totals_map_id == maps[i])
						status_prog_read(fd, &pol[j]);
		}
		close(fd);
	}
}

void status_gather_effective(const struct mthpctl_kernel *k, struct status_policy *p, int cg_fd)
{
	__u32 cnt = MTHPCTL_EFFECTIVE_SHOWN;

	if (!p->attached)
		return;
	if (!mthpctl_struct_ops_query(cg_fd, p->ops_type_id ? p->ops_type_id : k->feat.ops_type_id,
				      true, p->effective, &cnt))
		p->nr_effective = cnt;
}

/* Does any policy need what only the kernel's BTF tells: its program not
 * pinned (an older mthpctl's pins)? */
static bool need_btf(const struct status_policy *pol, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pol[i].link_ok && (!pol[i].prog_id || !pol[i].ops_type_id))
			return true;
	return false;
}

const struct mthpctl_kernel *status_gather_programs(const struct status_env *e,
						    struct status_policy *pol, size_t n,
						    struct mthpctl_kernel *own)
{
	const struct mthpctl_kernel *k = &e->k;
	size_t i, missing = 0;

	if (!k->probed && need_btf(pol, n)) {
		mthpctl_probe_kernel(own);
		mthpctl_timing("btf");
		k = own;
	}
	for (i = 0; i < n; i++)
		if (!pol[i].prog_id && !gather_hook(k, &pol[i]) && pol[i].link_ok)
			missing++;
	if (missing)
		gather_hooks_by_maps(pol, n);
	return k;
}
