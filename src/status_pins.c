// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl status (and apply): what the pins under the pin root say of each
 * policy, without the cgroup file system. A cgroup's own pin is its link;
 * the rest are the pins of its policy object, which every cgroup attached
 * with equal parameters shares (mthpctl-attach(8)): they are read once per
 * object, not once per cgroup, so a node's worth of cgroups on one object
 * costs a link's pin each.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "mthp_stats.h"
#include "mthpctl.h"
#include "pin.h"
#include "status.h"

/* Look key up into a buffer of the map's value size; the first len bytes. */
static bool read_value(int fd, const void *key, void *val, size_t len)
{
	struct bpf_map_info info;
	char buf[4096];

	if (!mthpctl_map_info(fd, &info) || info.value_size < len || info.value_size > sizeof(buf) ||
	    bpf_map_lookup_elem(fd, key, buf))
		return false;
	memcpy(val, buf, len);
	return true;
}

/*
 * The object_hash of a built-in policy's .rodata map, open as fd (the
 * object it runs, whatever build pinned it): found by name in the map's
 * BTF, since another build's .rodata may hold it at another offset.
 */
static bool read_object_hash(int fd, __u64 *hash)
{
	struct mthpctl_sec_var vars[64];
	const struct btf_var_secinfo *si;
	const struct btf_type *t, *v;
	struct bpf_map_info info;
	struct btf *btf;
	char buf[4096];
	__u32 zero = 0;
	size_t n = 0;
	long off = -1;
	__u32 i;

	if (!mthpctl_map_info(fd, &info) || !info.btf_id || !info.btf_value_type_id ||
	    info.value_size > sizeof(buf))
		return false;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		return false;
	t = btf__type_by_id(btf, info.btf_value_type_id);
	if (t && btf_is_datasec(t)) {
		si = btf_var_secinfos(t);
		for (i = 0; i < btf_vlen(t) && n < sizeof(vars) / sizeof(vars[0]); i++, si++) {
			v = btf__type_by_id(btf, si->type);
			if (!v || !btf_is_var(v))
				continue;
			vars[n].name = btf__name_by_offset(btf, v->name_off);
			vars[n].offset = si->offset;
			vars[n].size = si->size;
			n++;
		}
		off = mthpctl_sec_var_find(vars, n, "object_hash", sizeof(*hash), info.value_size);
	}
	if (off >= 0 && !bpf_map_lookup_elem(fd, &zero, buf))
		memcpy(hash, buf + off, sizeof(*hash));
	else
		off = -1;
	btf__free(btf);
	return off >= 0;
}

/* The cgroup's own pin: its link. */
static void gather_link(struct status_policy *p)
{
	int fd;

	p->cgstate_fd = -1;
	p->cg_state = p->cg_subtree = -1;
	p->nr_effective = -1;
	fd = mthpctl_pin_get(p->dir, "link");
	if (fd >= 0) {
		p->link_ok = !mthpctl_link_query(fd, &p->link);
		p->attached = p->link_ok && p->link.map_id && p->link.cgroup_id == p->id;
		close(fd);
	}
}

/* Its choose_orders program, from the "prog" pin (pins of an older
 * mthpctl have none: status_hook.c finds it through the kernel's BTF). */
static void gather_prog(struct status_policy *p)
{
	int fd = mthpctl_pin_get(p->dir, "prog");

	if (fd < 0)
		return;
	status_prog_read(fd, p);
	close(fd);
}

/*
 * What the pins of the policy object say (no cgroup file system access):
 * parameters, origin, counters, the state map, the program, and how many
 * links the object's struct_ops map has. Cgroups attached with equal
 * parameters share one object: status_gather_pin_dirs() reads it once.
 */
static void gather_object(struct status_policy *p)
{
	static const struct mthpctl_kernel no_btf = {
		.feat = { .ops_data_off = -ENOENT, .ops_fn_off = -ENOENT },
	};
	struct bpf_map_info info;
	__u32 zero = 0, prog_id;
	int fd;

	fd = mthpctl_pin_get(p->dir, "conf");
	p->have_params = read_value(fd, &zero, &p->params, sizeof(p->params)) &&
			 p->params.magic == MTHPCTL_PARAMS_MAGIC;
	p->have_object_hash = p->have_params && read_object_hash(fd, &p->object_hash);
	if (fd >= 0)
		close(fd);
	fd = mthpctl_pin_get(p->dir, "object");
	if (fd >= 0) {
		p->object = malloc(sizeof(*p->object));
		p->have_object = p->object && read_value(fd, &zero, p->object, sizeof(*p->object)) &&
				 mthpctl_object_info_valid(p->object);
		close(fd);
		if (p->have_object) {
			p->have_object_hash = true;
			p->object_hash = p->object->hash;
		}
	}
	fd = mthpctl_pin_get(p->dir, "totals");
	p->have_totals = mthpctl_read_totals(fd, &p->totals, &p->totals_map_id);
	if (fd >= 0)
		close(fd);
	fd = mthpctl_pin_get(p->dir, "cgstate");
	if (mthpctl_map_info(fd, &info) && info.type == BPF_MAP_TYPE_CGRP_STORAGE &&
	    info.value_size == sizeof(struct mthpctl_cg))
		p->cgstate_fd = fd;
	else if (fd >= 0)
		close(fd);
	gather_prog(p);
	/* the link count needs no BTF: it leads the value */
	fd = p->link_ok && p->link.map_id ? bpf_map_get_fd_by_id(p->link.map_id) : -1;
	if (fd >= 0) {
		mthpctl_struct_ops_read(&no_btf, fd, &prog_id, &p->object_links);
		close(fd);
	}
}

/* The object's part of from into p (another cgroup linked to it). */
static void copy_object(struct status_policy *p, const struct status_policy *from)
{
	p->have_params = from->have_params;
	p->params = from->params;
	p->have_object_hash = from->have_object_hash;
	p->object_hash = from->object_hash;
	/* a policy of the user's is never shared: no object record here */
	p->have_totals = from->have_totals;
	p->totals = from->totals;
	p->totals_map_id = from->totals_map_id;
	p->cgstate_fd = from->cgstate_fd;
	p->cgstate_borrowed = true;
	p->prog_id = from->prog_id;
	p->run_cnt = from->run_cnt;
	p->run_time_ns = from->run_time_ns;
	p->ops_type_id = from->ops_type_id;
	p->object_links = from->object_links;
}

static int cmp_object(const void *a, const void *b)
{
	const struct status_policy *const *x = a, *const *y = b;
	__u32 mx = (*x)->link.map_id, my = (*y)->link.map_id;

	return mx < my ? -1 : mx > my;
}

/* The objects' pins of n policies with their links read: once per
 * struct_ops map, each policy alone whose link names none. */
static void gather_objects(struct status_policy *pol, size_t n)
{
	struct status_policy **by_map = malloc(n * sizeof(*by_map));
	size_t i;

	if (!by_map) {
		for (i = 0; i < n; i++)
			gather_object(&pol[i]);
		return;
	}
	for (i = 0; i < n; i++)
		by_map[i] = &pol[i];
	qsort(by_map, n, sizeof(*by_map), cmp_object);
	for (i = 0; i < n; i++) {
		if (i && by_map[i]->link.map_id && by_map[i]->link.map_id == by_map[i - 1]->link.map_id)
			copy_object(by_map[i], by_map[i - 1]);
		else
			gather_object(by_map[i]);
	}
	free(by_map);
}

void status_policies_free(struct status_policy *pol, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (pol[i].cgstate_fd >= 0 && !pol[i].cgstate_borrowed)
			close(pol[i].cgstate_fd);
		free(pol[i].object);
	}
	free(pol);
}

static int cmp_id(const void *a, const void *b)
{
	const __u64 *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The cgroup ids of the pin directories, sorted (malloc'd); how many. */
static size_t list_pin_ids(__u64 **out)
{
	__u64 *ids = NULL, *nids, id;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	d = opendir(MTHPCTL_PIN_ROOT);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (mthpctl_pin_parse(de->d_name, &id))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			nids = realloc(ids, cap * sizeof(*ids));
			if (!nids)
				break;
			ids = nids;
		}
		ids[n++] = id;
	}
	closedir(d);
	/* ids, not the policies (a kilobyte each), are what get sorted */
	if (n)
		qsort(ids, n, sizeof(*ids), cmp_id);
	*out = ids;
	return n;
}

/* Every pin directory (or only's), with what its pins say. */
size_t status_gather_pin_dirs(__u64 only, struct status_policy **out)
{
	struct status_policy *pol;
	__u64 *ids = NULL;
	size_t n, i;

	if (only) {
		/* one policy: its directory, no listing */
		char dir[MTHPCTL_PIN_DIR_LEN];

		if (mthpctl_pin_dir(MTHPCTL_PIN_ROOT, only, NULL, dir, sizeof(dir)) || access(dir, F_OK))
			return 0;
		n = 1;
	} else {
		n = list_pin_ids(&ids);
	}
	pol = n ? calloc(n, sizeof(*pol)) : NULL;
	for (i = 0; pol && i < n; i++) {
		pol[i].id = only ? only : ids[i];
		mthpctl_pin_dir(MTHPCTL_PIN_ROOT, pol[i].id, NULL, pol[i].dir, sizeof(pol[i].dir));
		gather_link(&pol[i]);
	}
	free(ids);
	if (!pol)
		return 0;
	gather_objects(pol, n);
	*out = pol;
	return n;
}
