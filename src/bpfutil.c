// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/btf.h>
#include <linux/capability.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "compat.h"
#include "mthp_stats.h"
#include "mthpctl.h"
#include "pin.h"
#include "sysfs.h"

/*
 * libbpf's warnings always reach stderr: they say why a load failed, with
 * the verifier's log of the program the kernel refused (libbpf asks for it
 * and prints it at warning level). Its info and debug messages, every step
 * of opening and loading, only with -v.
 */
static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN && !g.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void mthpctl_libbpf_setup(void)
{
	libbpf_set_print(print_fn);
}

/* Byte offset of a member of struct t, or -ENOENT (no struct, no member). */
static int member_off(const struct btf *btf, __s32 id, const char *member)
{
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m;
	__u32 i;

	if (!t || !btf_is_struct(t))
		return -ENOENT;
	for (i = 0, m = btf_members(t); i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return btf_member_bit_offset(t, i) / 8;
	return -ENOENT;
}

/*
 * What the kernel offers, by name, with libbpf's lookups: a vmlinux BTF
 * sorted by name (the series' 7.3 kernel's: 64k types, none out of order)
 * is binary-searched by btf__find_by_name_kind() (the five names in 2 us
 * on the host), an unsorted one scanned once per name. One pass of ours
 * over all types for the five names made the probe slower in the VM (31
 * ms against 23), loading the BTF being most of either.
 */
void mthpctl_probe_kernel(struct mthpctl_kernel *k)
{
	struct btf *btf;
	__s32 ops, value;

	memset(k, 0, sizeof(*k));
	k->feat.ops_data_off = k->feat.ops_fn_off = -ENOENT;
	k->probed = true;
	/* no BTF is an answer, not a warning of libbpf's on stderr */
	if (access(MTHPCTL_VMLINUX_BTF, R_OK))
		return;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return;
	k->btf = true;
	ops = btf__find_by_name_kind(btf, "bpf_mthp_ops", BTF_KIND_STRUCT);
	value = btf__find_by_name_kind(btf, "bpf_struct_ops_bpf_mthp_ops", BTF_KIND_STRUCT);
	k->feat.mthp_ops = ops > 0 && value > 0;
	k->feat.psi_kfunc = btf__find_by_name_kind(btf, "bpf_cgroup_psi_stall", BTF_KIND_FUNC) > 0;
	k->feat.memcg_kfuncs = btf__find_by_name_kind(btf, "bpf_get_mem_cgroup", BTF_KIND_FUNC) > 0;
	k->feat.wq = btf__find_by_name_kind(btf, "bpf_wq_start", BTF_KIND_FUNC) > 0;
	k->feat.collapse_kfunc = btf__find_by_name_kind(btf, "bpf_mthp_collapse_on_return",
							BTF_KIND_FUNC) > 0;
	k->feat.ops_data_off = member_off(btf, value, "data");
	k->feat.ops_fn_off = member_off(btf, ops, "choose_orders");
	k->feat.ops_type_id = ops > 0 ? ops : 0;
	btf__free(btf);
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

int mthpctl_check_caps(const struct mthpctl_err_sink *sink)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};
	char buf[16];
	int last = 0;

	if (syscall(SYS_capget, &h, d))
		return mthpctl_fail(sink, MTHPCTL_EXIT_PERM, "cannot read capabilities: %s (run as root)",
				    strerror(errno));
	if (mthpctl_read_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) > 0)
		last = atoi(buf);
	if (!has_cap(d, CAP_SYS_ADMIN) || (last >= CAP_BPF && !has_cap(d, CAP_BPF)))
		return mthpctl_fail(sink, MTHPCTL_EXIT_PERM,
				    "needs CAP_SYS_ADMIN and CAP_BPF (run as root, e.g. with sudo)");
	return 0;
}

int mthpctl_check_bpffs(const struct mthpctl_err_sink *sink)
{
	struct statfs s;

	if (statfs(MTHPCTL_BPFFS, &s) || (unsigned long)s.f_type != MTHPCTL_BPFFS_MAGIC)
		return mthpctl_fail(sink, MTHPCTL_EXIT_BPFFS,
				    "bpffs is not mounted at %s (mount -t bpf bpf %s)",
				    MTHPCTL_BPFFS, MTHPCTL_BPFFS);
	return 0;
}

/*
 * What bpf_map__attach_struct_ops() does before creating a link, without its
 * plain (cgroup-less) link: store the value of the struct_ops map, i.e. the
 * kernel's struct bpf_struct_ops_bpf_mthp_ops with the program fd in the
 * choose_orders slot, so the map can be linked to a cgroup or swapped into
 * a link. The libbpf of the toolchain has no way to do it alone.
 */
int mthpctl_struct_ops_ready(const struct mthpctl_kernel *k, int map_fd, __u32 value_size,
			     int prog_fd)
{
	int doff = k->feat.ops_data_off, moff = k->feat.ops_fn_off, err = 0;
	__u32 zero = 0;
	char *buf;

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

int mthpctl_struct_ops_read(const struct mthpctl_kernel *k, int map_fd, __u32 *prog_id,
			    __u32 *links)
{
	int doff = k->feat.ops_data_off, moff = k->feat.ops_fn_off, err = 0;
	unsigned long id = 0;
	struct bpf_map_info info;
	__u32 zero = 0;
	char *buf;

	*prog_id = *links = 0;
	if (!mthpctl_map_info(map_fd, &info) || info.type != BPF_MAP_TYPE_STRUCT_OPS)
		return -EINVAL;
	buf = calloc(1, info.value_size);
	if (!buf)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &zero, buf)) {
		err = -errno;
		goto out;
	}
	/* the value starts with struct bpf_struct_ops_common_value, whose
	 * refcnt the lookup fills with the map's references other than user
	 * ones (fds, pins): one per attached link */
	memcpy(links, buf, sizeof(*links));
	if (doff >= 0 && moff >= 0 && (__u32)(doff + moff) + sizeof(id) <= info.value_size)
		memcpy(&id, buf + doff + moff, sizeof(id));
	*prog_id = id <= ~0U ? id : 0;
out:
	free(buf);
	return err;
}

int mthpctl_ensure_pin_root(void)
{
	if (mkdir(MTHPCTL_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * attach and detach look at the pins, then change the kernel and the pins:
 * two of them at once on one cgroup would both find it free and both attach
 * (the kernel allows several links), or remove each other's half-made pin
 * directories. One lock on the pin root serializes them; the kernel drops
 * it when the holder exits, also on SIGKILL.
 */
int mthpctl_lock_pins(bool create)
{
	int fd, err;

	if (create && (err = mthpctl_ensure_pin_root()))
		return err;
	fd = open(MTHPCTL_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	return fd;
}

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

/* BPF_PROG_QUERY by struct_ops type (query.type_id: src/compat.h) */
int mthpctl_struct_ops_query(int cg_fd, __u32 type_id, bool effective, __u32 *map_ids,
			     __u32 *cnt)
{
	struct struct_ops_query_attr attr = {
		.target_fd = cg_fd,
		.attach_type = BPF_STRUCT_OPS,
		.query_flags = effective ? BPF_F_QUERY_EFFECTIVE : 0,
		.prog_ids = (__u64)(unsigned long)map_ids,
		.prog_cnt = *cnt,
		.type_id = type_id,
	};

	if (!type_id)
		return -ENOENT;
	if (syscall(__NR_bpf, BPF_PROG_QUERY, &attr, sizeof(attr)) && errno != ENOSPC)
		return -errno;
	*cnt = attr.prog_cnt;
	return 0;
}

int mthpctl_pin_get(const char *dir, const char *obj)
{
	char path[4200];
	int err = mthpctl_pin_path(dir, obj, path, sizeof(path));

	return err ? err : bpf_obj_get(path);
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

double mthpctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void mthpctl_timing(const char *step)
{
	static const char *kill_at, *stop_at;
	static double last;
	static int on = -1;
	double now;

	if (on < 0) {
		const char *v = getenv("MTHPCTL_DEBUG_TIMING");

		on = v && *v && strcmp(v, "0");
		kill_at = getenv("MTHPCTL_DEBUG_KILL_AT");
		stop_at = getenv("MTHPCTL_DEBUG_STOP_AT");
	}
	/* the crash test (tests/vm/run.sh, kill_steps): die the hardest way
	 * where a step ends, as a power cut or the OOM killer would */
	if (kill_at && step && !strcmp(kill_at, step))
		kill(getpid(), SIGKILL);
	/* the race tests: stop where a step ends until SIGCONT, so that the
	 * test changes the world between two steps (e.g. removes the cgroup
	 * before the link is made) */
	if (stop_at && step && !strcmp(stop_at, step))
		kill(getpid(), SIGSTOP);
	if (!on)
		return;
	now = mthpctl_now_ms();
	if (step)
		fprintf(stderr, "mthpctl: timing: %-10s %8.3f ms\n", step, last ? now - last : 0.0);
	last = now;
}

/* Map info of fd; false if it is no map. */
bool mthpctl_map_info(int fd, struct bpf_map_info *info)
{
	__u32 ilen = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return fd >= 0 && !bpf_map_get_info_by_fd(fd, info, &ilen);
}

/* calls[t] from the rows: every call counts in exactly one row of
 * fallbacks (struct mthpctl_counters), and the hook writes nothing else. */
static void counters_sum_calls(struct mthpctl_counters *c)
{
	int t, r;

	for (t = 0; t < MTHPCTL_NR_TVA; t++) {
		c->calls[t] = 0;
		for (r = 0; r < MTHPCTL_REASON_ROWS; r++)
			c->calls[t] += c->fallbacks[r][t];
	}
}

/* Value 0 of fd read as n records of stride bytes, the first nr __u64 of
 * each added into sum. */
static bool sum_records(int fd, size_t n, size_t stride, size_t nr, __u64 *sum)
{
	__u64 *all = calloc(n, stride);
	__u32 zero = 0;
	size_t i, j;

	if (!all)
		return false;
	if (bpf_map_lookup_elem(fd, &zero, all)) {
		free(all);
		return false;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < nr; j++)
			sum[j] += all[i * stride / sizeof(__u64) + j];
	free(all);
	return true;
}

/*
 * The totals of a policy, summed over CPUs, from either layout: the
 * built-in policy's array of CPU slots (one value of a power of two of
 * struct mthpctl_cpu_slot) or the per-CPU array of the mthp_ops.h
 * convention (and of earlier mthpctl versions). Pins outlive the mthpctl
 * that made them: a policy loaded by another version may have fewer or
 * more counters; the ones both know are read (the kernel copies a per-CPU
 * value_size per CPU, rounded up to 8 bytes).
 */
bool mthpctl_read_totals(int fd, struct mthpctl_totals *t, __u32 *map_id)
{
	const size_t slot = sizeof(struct mthpctl_cpu_slot);
	int cpus = libbpf_num_possible_cpus();
	struct bpf_map_info info;
	bool ok;

	memset(t, 0, sizeof(*t));
	if (!mthpctl_map_info(fd, &info))
		return false;
	if (info.type == BPF_MAP_TYPE_ARRAY && info.max_entries == 1 &&
	    info.value_size >= slot && !(info.value_size % slot))
		ok = sum_records(fd, info.value_size / slot, slot, sizeof(*t) / sizeof(__u64),
				 (__u64 *)t);
	else if (info.type == BPF_MAP_TYPE_PERCPU_ARRAY && cpus > 0 &&
		 info.value_size >= sizeof(t->cnt))
		ok = sum_records(fd, cpus, ((size_t)info.value_size + 7) & ~7UL,
				 (info.value_size < sizeof(*t) ? info.value_size : sizeof(*t)) /
				 sizeof(__u64), (__u64 *)t);
	else
		ok = false;
	if (!ok)
		return false;
	counters_sum_calls(&t->cnt);
	*map_id = info.id;
	return true;
}

int mthpctl_load_error(const struct mthpctl_err_sink *sink, int err, const char *what)
{
	/* capabilities were checked first: EACCES at load is the verifier
	 * refusing the program, not a missing privilege */
	if (err == -EACCES)
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL,
				    "%s: the kernel's verifier refused the program (%s; libbpf "
				    "printed the verifier's log above)", what, strerror(-err));
	if (err == -EPERM)
		return mthpctl_fail(sink, MTHPCTL_EXIT_PERM, "%s: %s (run as root)", what, strerror(-err));
	if (err == -EOPNOTSUPP || err == -ENOTSUPP)
		return mthpctl_fail(sink, MTHPCTL_EXIT_UNSUPPORTED,
				    "%s: the kernel refused bpf_mthp_ops on a cgroup (apply kernel/)", what);
	/* libbpf prints its warnings, and a refused program's verifier log */
	return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "%s: %s (libbpf's warnings, if any, are above%s)",
			    what, strerror(-err), g.verbose ? "" : "; -v adds its debug output");
}
