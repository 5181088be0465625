// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the bench cgroup (--cgroup), the cgroups a run creates
 * below it and the policies attached to them. Every cgroup created and
 * every policy attached is recorded so that bench_restore() can detach and
 * remove them (bench_cgroups_remove_all()), children first.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "bench_common.h"
#include "cgroup.h"
#include "mthpctl.h"
#include "mthp_stats.h"
#include "pin.h"
#include "sysfs.h"

#define MAX_CGROUPS	16

static struct {
	char root[512];			/* the bench cgroup */
	bool root_created;
	bool memory;			/* its hierarchy has the memory controller */
	char cgroups[MAX_CGROUPS][512];	/* created below root, in order */
	bool attached[MAX_CGROUPS];	/* a policy is attached to it */
	int nr_cgroups;
} cgs;

int bench_cg_write(const char *cg, const char *file, const char *value)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return bench_write_file(path, value);
}

static void enable_memory(const char *parent)
{
	if (cgs.memory)
		bench_cg_write(parent, "cgroup.subtree_control", "+memory");
}

static int cg_index(const char *cg)
{
	int i;

	for (i = 0; i < cgs.nr_cgroups; i++)
		if (!strcmp(cgs.cgroups[i], cg))
			return i;
	return -1;
}

/* --- the bench cgroup ----------------------------------------------- */

/* 0 (*memory: cg's parent has the memory controller; without it only when
 * memory_optional) or an exit code (printed) */
static int check_cgroup_parent(const char *cg, bool memory_optional, bool *memory)
{
	char parent[600], path[700], buf[512], msg[800];
	enum mthpctl_cg_result r;
	__u64 id;
	int e;

	snprintf(parent, sizeof(parent), "%s", cg);
	dirname(parent);
	r = mthpctl_cgroup_check(parent, &mthpctl_real_fsops, &id, &e);
	if (r != MTHPCTL_CG_OK)
		return mthpctl_error(MTHPCTL_EXIT_CGROUP, "%s (bench needs a cgroup2 hierarchy%s)",
				     mthpctl_cgroup_describe(parent, r, e, msg, sizeof(msg)),
				     memory_optional ? "" : " with the memory controller");
	snprintf(path, sizeof(path), "%s/cgroup.controllers", parent);
	*memory = mthpctl_read_file(path, buf, sizeof(buf)) >= 0 && mthpctl_has_word(buf, "memory");
	if (*memory || memory_optional)
		return 0;
	return mthpctl_error(MTHPCTL_EXIT_CGROUP,
			     "no cgroup2 memory controller in %s (is memory on a cgroup v1 "
			     "hierarchy? boot with cgroup_no_v1=memory, or run `make bench` in the VM; "
			     "mixed --stock without --node-high runs without one)", parent);
}

int bench_cgroups_prepare(const char *root, bool memory_optional)
{
	bool memory = false;
	int ret = check_cgroup_parent(root, memory_optional, &memory);

	if (ret)
		return ret;
	memset(&cgs, 0, sizeof(cgs));
	cgs.memory = memory;
	snprintf(cgs.root, sizeof(cgs.root), "%s", root);
	if (!access(cgs.root, F_OK) && rmdir(cgs.root))
		return mthpctl_error(MTHPCTL_EXIT_STATE,
				     "%s exists and is in use (%s): another bench running? "
				     "remove it or pick another --cgroup",
				     cgs.root, strerror(errno));
	return 0;
}

bool bench_cgroups_memory(void)
{
	return cgs.memory;
}

int bench_cgroups_create_root(void)
{
	char parent[sizeof(cgs.root)];

	snprintf(parent, sizeof(parent), "%s", cgs.root);
	enable_memory(dirname(parent));
	if (mkdir(cgs.root, 0755))
		return -errno;
	cgs.root_created = true;
	return 0;
}

/* --- cgroups below it ----------------------------------------------- */

int bench_cg_create(const char *name, char *path, size_t len)
{
	char parent[600];
	int i;

	snprintf(path, len, "%s/%s", cgs.root, name);
	snprintf(parent, sizeof(parent), "%s", path);
	enable_memory(dirname(parent));
	if (cgs.nr_cgroups == MAX_CGROUPS)
		return -E2BIG;
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	i = cgs.nr_cgroups++;
	snprintf(cgs.cgroups[i], sizeof(cgs.cgroups[i]), "%s", path);
	cgs.attached[i] = false;
	return 0;
}

/* Empty the cgroup (cgroup.kill, or SIGKILL to its cgroup.procs) and
 * rmdir it, retrying while the kernel finishes tearing tasks down. */
static int cg_kill_rmdir(const char *cg)
{
	struct timespec tick = { 0, BENCH_RMDIR_TICK_NS };
	char path[600], buf[4096], *p;
	unsigned int i;

	for (i = 0; i < BENCH_RMDIR_TIMEOUT_NS / BENCH_RMDIR_TICK_NS; i++) {
		if (!rmdir(cg) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		if (bench_cg_write(cg, "cgroup.kill", "1")) {
			snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
			if (mthpctl_read_file(path, buf, sizeof(buf)) > 0)
				for (p = strtok(buf, "\n"); p; p = strtok(NULL, "\n"))
					kill(atoi(p), SIGKILL);
		}
		/* reap our own children that died there */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		nanosleep(&tick, NULL);
	}
	return -EBUSY;
}

int bench_cg_remove(const char *path)
{
	int idx, err;

	if (!path[0])
		return 0;
	idx = cg_index(path);
	if (idx >= 0 && cgs.attached[idx])
		bench_policy_detach(path);
	err = cg_kill_rmdir(path);
	if (err)
		fprintf(stderr, "mthpctl: warning: cannot remove %s: %s\n", path, strerror(-err));
	if (idx >= 0 && !err) {
		memmove(&cgs.cgroups[idx], &cgs.cgroups[idx + 1],
			(cgs.nr_cgroups - idx - 1) * sizeof(cgs.cgroups[0]));
		memmove(&cgs.attached[idx], &cgs.attached[idx + 1],
			(cgs.nr_cgroups - idx - 1) * sizeof(cgs.attached[0]));
		cgs.nr_cgroups--;
	}
	return err;
}

void bench_cgroups_remove_all(void)
{
	int i;

	for (i = cgs.nr_cgroups - 1; i >= 0; i--)
		bench_cg_remove(cgs.cgroups[i]);
	if (cgs.root_created) {
		i = cg_kill_rmdir(cgs.root);
		if (i)
			fprintf(stderr, "mthpctl: warning: cannot remove %s: %s\n",
				cgs.root, strerror(-i));
		cgs.root_created = false;
	}
}

/* --- policies ------------------------------------------------------- */

int bench_policy_attach(const struct mthpctl_policy_spec *spec, unsigned int flags, const char *cg,
			char *note, size_t len)
{
	const struct mthpctl_err_sink sink = { note, len };
	struct mthpctl_attach_result res;
	struct mthpctl_params p;
	int ret, idx = cg_index(cg);

	if (bench_mount_bpffs()) {
		snprintf(note, len, "cannot mount bpffs at %s: %s", MTHPCTL_BPFFS, strerror(errno));
		return MTHPCTL_EXIT_BPFFS;
	}
	ret = mthpctl_policy_build(spec, mthpctl_pmd_order(), mthpctl_page_size(), "--", &p,
				   note, len, NULL);
	if (ret)
		return ret;
	ret = mthpctl_attach(cg, &p, flags, &res, &sink);
	if (!ret && idx >= 0)
		cgs.attached[idx] = true;
	return ret;
}

/* attach --object FILE [--ops NAME] to cg, in this process */
static int object_attach(const char *file, const char *ops, const char *cg, char *note,
			 size_t len)
{
	const struct mthpctl_err_sink sink = { note, len };
	struct mthpctl_attach_result res;
	int ret, idx = cg_index(cg);

	if (bench_mount_bpffs()) {
		snprintf(note, len, "cannot mount bpffs at %s: %s", MTHPCTL_BPFFS, strerror(errno));
		return MTHPCTL_EXIT_BPFFS;
	}
	ret = mthpctl_attach_object(cg, file, ops, 0, &res, &sink);
	if (!ret && idx >= 0)
		cgs.attached[idx] = true;
	return ret;
}

int bench_policy_attach_opts(const struct bench_opts *o, const char *cg, char *note, size_t len)
{
	if (o->policy_refused[0]) {
		snprintf(note, len, "%s", o->policy_refused);
		return MTHPCTL_EXIT_USAGE;
	}
	if (o->policy_object)
		return object_attach(o->policy_object, o->policy_ops, cg, note, len);
	return bench_policy_attach(&o->policy, o->policy_flags, cg, note, len);
}

const char *bench_mode_thp(enum bench_mode m, const struct bench_opts *o)
{
	switch (m) {
	case BENCH_ALWAYS: return "always";
	case BENCH_NEVER: return "never";
	default: return o->host;
	}
}

int bench_mode_set_thp(enum bench_mode m, const struct bench_opts *o)
{
	return bench_set_thp(bench_mode_thp(m, o));
}

int bench_mode_attach(enum bench_mode m, const struct bench_opts *o, const char *cg,
		      char *note, size_t len)
{
	static const struct mthpctl_policy_spec simple = { .policy = "simple" };

	switch (m) {
	case BENCH_POLICY:
		return bench_policy_attach_opts(o, cg, note, len);
	case BENCH_SIMPLE:
		return bench_policy_attach(&simple, 0, cg, note, len);
	default:
		return 0;
	}
}

bool bench_mode_attach_or_skip(enum bench_mode m, const struct bench_opts *o, const char *cg,
			       bool *skip, char *note, size_t len)
{
	if (!bench_mode_attach(m, o, cg, note, len))
		return false;
	*skip = true;
	fprintf(stderr, "mthpctl: note: %s rows skipped: %s\n", bench_mode_name(m, o), note);
	return true;
}

int bench_cgroups_attach(int err, enum bench_mode m, const struct bench_opts *o,
			 const char *parent, bool *skip, char *note, size_t len)
{
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create cgroups in %s: %s",
				     o->cgroup, strerror(-err));
	bench_mode_attach_or_skip(m, o, parent, skip, note, len);
	return 0;
}

int bench_selected_modes(const struct bench_opts *o, int sel[BENCH_NR_MODES])
{
	int m, n = 0;

	for (m = 0; m < BENCH_NR_MODES; m++)
		if (o->modes & (1u << m))
			sel[n++] = m;
	return n;
}

void bench_policy_detach(const char *cg)
{
	/* as before: a policy that is gone already is no error here */
	char err[1024];
	const struct mthpctl_err_sink ignored = { err, sizeof(err) };
	int idx = cg_index(cg);
	__u64 id;

	if (idx < 0 || !cgs.attached[idx])
		return;
	mthpctl_detach(cg, &id, &ignored);
	cgs.attached[idx] = false;
}

int bench_policy_counters(const char *cg, struct mthpctl_counters *c)
{
	char dir[4096];
	struct mthpctl_totals t;
	struct stat st;
	__u32 map_id;
	int fd, err = 0;

	if (stat(cg, &st))
		return -errno;
	/* the pin directory is named by the cgroup id, the directory's inode */
	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, st.st_ino, NULL, dir, sizeof(dir));
	fd = mthpctl_pin_get(dir, "totals");
	if (fd < 0)
		return fd;
	if (mthpctl_read_totals(fd, &t, &map_id))
		*c = t.cnt;
	else
		err = -EIO;
	close(fd);
	return err;
}

int bench_policy_decisions(const char *cg, struct bench_decisions *d)
{
	struct mthpctl_counters pc;
	int t, why, err;

	memset(d, 0, sizeof(*d));
	err = bench_policy_counters(cg, &pc);
	if (err)
		return err;
	d->have = true;
	for (t = 0; t < MTHPCTL_NR_TVA; t++) {
		d->calls += pc.calls[t];
		for (why = 0; why < MTHPCTL_NR_REASON; why++)
			d->fallbacks[why] += pc.fallbacks[why][t];
	}
	return 0;
}

void bench_decisions_median(const struct bench_decisions *runs, int n,
			    struct bench_decisions *out)
{
	__u64 v[BENCH_ROUNDS_MAX];
	int i, k, m;

	memset(out, 0, sizeof(*out));
	for (k = -1; k < MTHPCTL_NR_REASON; k++) {
		for (i = 0, m = 0; i < n && m < BENCH_ROUNDS_MAX; i++)
			if (runs[i].have)
				v[m++] = k < 0 ? runs[i].calls : runs[i].fallbacks[k];
		if (k < 0)
			out->calls = bench_median_u64(v, m);
		else
			out->fallbacks[k] = bench_median_u64(v, m);
	}
	out->have = m > 0;
}
