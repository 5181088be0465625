// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl status: what the kernel says of a policy's BPF objects, beyond
 * its pins. Its choose_orders program (id, and bpf_stats' run count and
 * time), how many links its struct_ops map has (the cgroups sharing it),
 * and every bpf_mthp_ops in effect for its cgroup (BPF_PROG_QUERY).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mthpctl.h"
#include "status.h"

static bool prog_stats(int fd, struct status_policy *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_prog_get_info_by_fd(fd, &info, &len) || info.type != BPF_PROG_TYPE_STRUCT_OPS)
		return false;
	p->prog_id = info.id;
	p->run_cnt = info.run_cnt;
	p->run_time_ns = info.run_time_ns;
	return true;
}

/*
 * The policy's choose_orders program: the kernel keeps the ids of a
 * struct_ops map's programs in its value, at the offsets the BTF probe found.
 */
static bool gather_hook(const struct status_env *e, struct status_policy *p)
{
	int doff = e->k.feat.ops_data_off, moff = e->k.feat.ops_fn_off, fd;
	struct bpf_map_info info;
	__u32 zero = 0;
	unsigned long id = 0;
	char *buf;

	if (!p->link_ok || !p->link.map_id || doff < 0 || moff < 0)
		return false;
	fd = bpf_map_get_fd_by_id(p->link.map_id);
	if (fd < 0)
		return false;
	buf = NULL;
	if (mthpctl_map_info(fd, &info) && info.type == BPF_MAP_TYPE_STRUCT_OPS &&
	    (__u32)(doff + moff) + sizeof(id) <= info.value_size &&
	    (buf = calloc(1, info.value_size)) && !bpf_map_lookup_elem(fd, &zero, buf)) {
		memcpy(&id, buf + doff + moff, sizeof(id));
		/* the value starts with struct bpf_struct_ops_common_value,
		 * whose refcnt the lookup fills with the map's references
		 * other than user ones (fds, pins): one per attached link */
		memcpy(&p->object_links, buf, sizeof(p->object_links));
	}
	free(buf);
	close(fd);
	if (!id || id > ~0U)
		return false;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	id = prog_stats(fd, p);
	close(fd);
	return id;
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
						prog_stats(fd, &pol[j]);
		}
		close(fd);
	}
}

/* What the kernel says is in effect for the cgroup (needs the cgroup dir). */
static void gather_effective(const struct status_env *e, struct status_policy *p)
{
	__u32 cnt = MTHPCTL_EFFECTIVE_SHOWN;
	int fd;

	if (!p->cgroup || !p->attached)
		return;
	fd = open(p->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!mthpctl_struct_ops_query(fd, e->k.feat.ops_type_id, true, p->effective, &cnt))
		p->nr_effective = cnt;
	close(fd);
}

void status_gather_hooks(const struct status_env *e, struct status_policy *pol, size_t n)
{
	size_t i, missing = 0;

	for (i = 0; i < n; i++) {
		gather_effective(e, &pol[i]);
		if (!gather_hook(e, &pol[i]) && pol[i].link_ok)
			missing++;
	}
	if (missing)
		gather_hooks_by_maps(pol, n);
}
