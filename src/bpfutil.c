// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "mthpctl.h"
#include "pin.h"
#include "sysfs.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

__u64 mthpctl_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (__u64)ps : 4096;
}

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!g.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void mthpctl_libbpf_setup(void)
{
	libbpf_set_print(print_fn);
}

void mthpctl_probe_kernel(struct mthpctl_kernel *k)
{
	struct btf *btf;

	memset(k, 0, sizeof(*k));
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return;
	k->btf = true;
	k->mthp_ops = btf__find_by_name_kind(btf, "bpf_mthp_ops", BTF_KIND_STRUCT) > 0;
	k->psi_kfunc = btf__find_by_name_kind(btf, "bpf_cgroup_psi_stall", BTF_KIND_FUNC) > 0;
	k->memcg_kfuncs = btf__find_by_name_kind(btf, "bpf_get_mem_cgroup", BTF_KIND_FUNC) > 0;
	k->wq = btf__find_by_name_kind(btf, "bpf_wq_start", BTF_KIND_FUNC) > 0;
	btf__free(btf);
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

int mthpctl_check_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};
	char buf[16];
	int last = 0;

	if (syscall(SYS_capget, &h, d))
		return mthpctl_error(MTHPCTL_EXIT_PERM, "cannot read capabilities: %s (run as root)",
				     strerror(errno));
	if (mthpctl_read_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) > 0)
		last = atoi(buf);
	if (!has_cap(d, CAP_SYS_ADMIN) || (last >= CAP_BPF && !has_cap(d, CAP_BPF)))
		return mthpctl_error(MTHPCTL_EXIT_PERM,
				     "needs CAP_SYS_ADMIN and CAP_BPF (run as root, e.g. with sudo)");
	return 0;
}

int mthpctl_check_bpffs(void)
{
	struct statfs s;

	if (statfs(MTHPCTL_BPFFS, &s) || (unsigned long)s.f_type != MTHPCTL_BPFFS_MAGIC)
		return mthpctl_error(MTHPCTL_EXIT_BPFFS,
				     "bpffs is not mounted at %s (mount -t bpf bpf %s)",
				     MTHPCTL_BPFFS, MTHPCTL_BPFFS);
	return 0;
}

static int member_off(const struct btf *btf, const char *type, const char *member)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id, i;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id <= 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < (int)btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return btf_member_bit_offset(t, i) / 8;
	return -ENOENT;
}

/*
 * What bpf_map__attach_struct_ops() does before creating a link, without its
 * plain (cgroup-less) link: store the value of the struct_ops map, i.e. the
 * kernel's struct bpf_struct_ops_bpf_mthp_ops with the program fd in the
 * choose_orders slot, so the map can be linked to a cgroup or swapped into
 * a link. The libbpf of the toolchain has no way to do it alone.
 */
int mthpctl_struct_ops_ready(int map_fd, __u32 value_size, int prog_fd)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int doff, moff, err = 0;
	__u32 zero = 0;
	char *buf;

	if (!btf)
		return -errno ? -errno : -ENOENT;
	doff = member_off(btf, "bpf_struct_ops_bpf_mthp_ops", "data");
	moff = member_off(btf, "bpf_mthp_ops", "choose_orders");
	btf__free(btf);
	if (doff < 0 || moff < 0)
		return -EOPNOTSUPP;
	if ((__u32)(doff + moff) + sizeof(unsigned long) > value_size)
		return -EINVAL;
	buf = calloc(1, value_size);
	if (!buf)
		return -ENOMEM;
	*(unsigned long *)(buf + doff + moff) = prog_fd;
	if (bpf_map_update_elem(map_fd, &zero, buf, 0) && errno != EBUSY)
		err = -errno;
	free(buf);
	return err;
}

int mthpctl_ensure_pin_root(void)
{
	if (mkdir(MTHPCTL_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* bpf_link_info.struct_ops as extended by the kernel series. */
struct struct_ops_link_info {
	__u32 map_id;
	__u32 pad;
	__u64 cgroup_id;
};

int mthpctl_link_query(int fd, struct mthpctl_link *l)
{
	struct bpf_link_info info;
	struct struct_ops_link_info so = {};
	__u32 len = sizeof(info);

	_Static_assert(sizeof(info) >= __builtin_offsetof(struct bpf_link_info, struct_ops) + sizeof(so),
		       "bpf_link_info too small");
	memset(&info, 0, sizeof(info));
	if (bpf_link_get_info_by_fd(fd, &info, &len))
		return -errno;
	memset(l, 0, sizeof(*l));
	l->id = info.id;
	l->type = info.type;
	if (info.type == BPF_LINK_TYPE_STRUCT_OPS) {
		memcpy(&so, &info.struct_ops, sizeof(so));
		l->map_id = so.map_id;
		l->cgroup_id = so.cgroup_id;
	}
	return 0;
}

int mthpctl_rm_pin_dir(const char *dir)
{
	char path[4096];
	int i;

	for (i = 0; mthpctl_pin_objs[i]; i++) {
		if (mthpctl_pin_path(dir, mthpctl_pin_objs[i], path, sizeof(path)))
			continue;
		if (unlink(path) && errno != ENOENT)
			return -errno;
	}
	if (rmdir(dir) && errno != ENOENT)
		return -errno;
	return 0;
}
