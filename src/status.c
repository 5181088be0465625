// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl status: kernel support, global THP settings, attached policies.
 * This file parses the command line and gathers (struct status_env, one struct
 * policy per pin directory: its pins in status_pins.c, its cgroups here; what
 * the kernel says of its BPF objects in status_hook.c); the renderers read
 * only what was gathered: status_plain.c, status_json.c and
 * status_prometheus.c.
 */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statfs.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "mthp_stats.h"
#include "mthpctl.h"
#include "parse.h"
#include "pin.h"
#include "status.h"
#include "sysfs.h"

#define MTHPCTL_CGROUP2_DEFAULT	"/sys/fs/cgroup"

enum status_format { STATUS_TEXT, STATUS_JSON, STATUS_PROMETHEUS };

struct status_args {
	const char *cgroup;
	enum status_format format;
	bool format_set;
};

static const struct argp_option options[] = {
	{ "cgroup", 'c', "PATH", 0, "show only the policy of this cgroup", 0 },
	{ "format", 'f', "FORMAT", 0,
	  "text (default), json (as -j) or prometheus (metrics in the text exposition format)", 0 },
	{ 0 }
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct status_args *a = state->input;

	switch (key) {
	case 'c': a->cgroup = arg; break;
	case 'f':
		if (!strcmp(arg, "text"))
			a->format = STATUS_TEXT;
		else if (!strcmp(arg, "json"))
			a->format = STATUS_JSON;
		else if (!strcmp(arg, "prometheus"))
			a->format = STATUS_PROMETHEUS;
		else
			argp_error(state, "unknown format '%s' (text, json or prometheus)", arg);
		a->format_set = true;
		break;
	case ARGP_KEY_ARG: argp_error(state, "unexpected argument '%s'", arg); break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char doc[] =
	"Show kernel support, the global per-size THP settings and counters, and "
	"every cgroup with a policy: parameters, link, pins, what it allows now, "
	"memory stall, anon+shmem usage and fallback counters."
	"\v"
	"Examples:\n"
	"  mthpctl status\n"
	"  mthpctl status --cgroup /sys/fs/cgroup/redis --pretty\n"
	"  mthpctl status --format=prometheus >/var/lib/prometheus/node-exporter/mthpctl.prom";

static const struct argp argp = { options, parse_opt, NULL, doc, mthpctl_subcommand_children, NULL, NULL };

void status_gather_kernel(struct status_env *e, bool probe)
{
	static char buf[65536];
	struct mthpctl_psi psi;
	struct statfs sfs;
	char path[4200];

	memset(e, 0, sizeof(*e));
	e->object_hash = mthpctl_builtin_object_hash();
	if (probe)
		mthpctl_probe_kernel(&e->k);
	mthpctl_timing("probe");
	e->psi = mthpctl_read_file("/proc/pressure/memory", buf, sizeof(buf)) > 0 &&
		 !mthpctl_parse_psi(buf, &psi);
	if (statfs(MTHPCTL_CGROUP2_DEFAULT, &sfs) == 0 &&
	    (unsigned long)sfs.f_type == MTHPCTL_CGROUP2_MAGIC &&
	    statfs(MTHPCTL_BPFFS, &sfs) == 0 && (unsigned long)sfs.f_type == MTHPCTL_BPFFS_MAGIC) {
		/* the usual places: no need to read every mount */
		snprintf(e->cg2, sizeof(e->cg2), "%s", MTHPCTL_CGROUP2_DEFAULT);
		e->bpffs = true;
	} else if (mthpctl_read_file("/proc/self/mountinfo", buf, sizeof(buf)) > 0) {
		mthpctl_find_mount(buf, "cgroup2", e->cg2, sizeof(e->cg2));
		{
			char bpf[256];

			/* mounted, wherever (the path itself is not used) */
			e->bpffs = mthpctl_find_mount(buf, "bpf", bpf, sizeof(bpf)) != -ENOENT;
		}
	}
	if (e->cg2[0]) {
		snprintf(path, sizeof(path), "%s/cgroup.controllers", e->cg2);
		e->memcg = mthpctl_read_file(path, buf, sizeof(buf)) >= 0 &&
			   mthpctl_has_word(buf, "memory");
	}
	e->root = geteuid() == 0;
	e->bpf_stats = -1;
	if (mthpctl_read_file("/proc/sys/kernel/bpf_stats_enabled", buf, 16) > 0)
		e->bpf_stats = atoi(buf) != 0;
	mthpctl_timing("mounts");
}

/* counters: the machine-wide counters per size too (not for the status
 * of one cgroup: they are not its own, and they are most of its files);
 * probe: the kernel's features (reading its BTF is most of the status of
 * one cgroup, which does not show them) */
static void gather_env(struct status_env *e, bool counters, bool probe)
{
	char buf[256];

	status_gather_kernel(e, probe);
	e->hp_counters = counters;
	static const char *const plain_stats[] = { "anon_fault_alloc", "anon_fault_fallback" };

	/* "enabled" and the two counters the plain output prints (3 files per
	 * size; every stat, as JSON has them, is ~20 files per size, each an
	 * open/read/close: most of a one-policy status under emulation), or
	 * "enabled" alone */
	e->nr_hp = !counters ? mthpctl_scan_hugepages_some(&e->hp, NULL, 0) :
		   g.json ? mthpctl_scan_hugepages(MTHPCTL_THP_DIR, &e->hp) :
		   mthpctl_scan_hugepages_some(&e->hp, plain_stats, 2);
	if (e->nr_hp < 0)
		e->nr_hp = 0;
	if (mthpctl_read_file(MTHPCTL_THP_DIR "/enabled", buf, sizeof(buf)) > 0)
		mthpctl_parse_bracketed(buf, e->thp_enabled, sizeof(e->thp_enabled));
	if (mthpctl_read_file(MTHPCTL_THP_DIR "/defrag", buf, sizeof(buf)) > 0)
		mthpctl_parse_bracketed(buf, e->thp_defrag, sizeof(e->thp_defrag));
	mthpctl_host_sizes_of(e->hp, e->nr_hp, e->thp_enabled, &e->host);
}

/* Does the cgroup directory at path (or open as cg_fd, when >= 0) hold
 * state in the policy's storage? */
static int has_state(int map_fd, const char *path, int cg_fd, struct mthpctl_cg *out)
{
	int fd = cg_fd, ret;

	/* cgroup local storage: the key is the cgroup's directory fd */
	if (fd < 0 && (fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	ret = bpf_map_lookup_elem(map_fd, &fd, out) ? -errno : 0;
	if (fd != cg_fd)
		close(fd);
	return ret;
}

static int cmp_path(const void *a, const void *b)
{
	const struct mthpctl_cg_entry *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/* Adds the processes of the policy's descendant cgroup at path to its
 * count of those with THP disabled by prctl. */
static void count_thp_off(struct status_policy *p, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	mthpctl_thp_off_count_at(fd, &p->thp_off);
	close(fd);
}

/*
 * What the cgroup file system adds: the policy's cgroup path, the state to
 * show, how many cgroups of its subtree hold state now, how many of its
 * processes have THP disabled by prctl, the live memory.pressure and
 * memory.stat (if live: the metrics do not show them),
 * and the policies in effect there (k: status_gather_programs()'s). bypath:
 * the table's entries sorted by path.
 *
 * The state shown is the attached cgroup's own, or, when its tasks all live
 * in child cgroups (a slice, a service with sub-cgroups), the state of the
 * descendant with the largest sampled usage: the policy decides per cgroup
 * of the task, so the attached cgroup itself may never fault.
 */
static void gather_cgroup(struct status_policy *p, const struct mthpctl_cg_table *t,
			  struct mthpctl_cg_entry **bypath, const struct mthpctl_kernel *k, bool live)
{
	static char buf[65536];
	size_t lo = 0, hi = t->n, plen;
	int cg_fd;

	p->cgroup = mthpctl_cgroup_table_find(t, p->id);
	if (!p->cgroup)
		return;
	/* opened once for its state and its files: a node has thousands */
	cg_fd = open(p->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0)
		return;
	/* its own processes (those of its descendants: below) */
	mthpctl_thp_off_count_at(cg_fd, &p->thp_off);
	p->have_thp_off = true;
	if (p->cgstate_fd >= 0) {
		/* the subtree is the run of paths starting with the cgroup's */
		plen = strlen(p->cgroup);
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (strcmp(bypath[mid]->path, p->cgroup) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		p->cg_state = p->cg_subtree = 0;
		for (; lo < t->n && !strncmp(bypath[lo]->path, p->cgroup, plen); lo++) {
			const char *q = bypath[lo]->path;
			bool self = !q[plen];
			struct mthpctl_cg v;

			if (!self && q[plen] != '/')
				continue;	/* a sibling sharing the prefix */
			p->cg_subtree++;
			if (!self)
				count_thp_off(p, q);
			if (has_state(p->cgstate_fd, q, self ? cg_fd : -1, &v))
				continue;
			p->cg_state++;
			/* the cgroup's own state wins; else the largest child */
			if (self || !p->have_entry ||
			    (p->entry_of != p->cgroup && v.state.usage > p->entry.state.usage)) {
				p->entry = v;
				p->entry_of = self ? p->cgroup : q;
				p->have_entry = true;
			}
		}
	}
	p->live_psi = live && mthpctl_read_file_at(cg_fd, "memory.pressure", buf, sizeof(buf)) > 0 &&
		      !mthpctl_parse_psi(buf, &p->psi) && p->psi.full.present;
	if (live && mthpctl_read_file_at(cg_fd, "memory.stat", buf, sizeof(buf)) > 0) {
		__u64 anon = 0, shmem = 0;

		p->live_usage = !mthpctl_stat_get(buf, "anon", &anon) &&
				!mthpctl_stat_get(buf, "shmem", &shmem);
		p->usage = anon + shmem;
	}
	status_gather_effective(k, p, cg_fd);
	close(cg_fd);
}

/*
 * How many attached cgroups share each policy's object (attach links a
 * cgroup to the loaded object of another with equal parameters): the
 * kernel's count of the object's links (gather_hook()), with or without
 * --cgroup; an attached policy whose count is unknown counts itself.
 */
static void gather_sharing(struct status_policy *pol, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		pol[i].object_cgroups = !pol[i].attached ? 0 :
					pol[i].object_links ? (int)pol[i].object_links : 1;
}

int cmd_status(int argc, char **argv)
{
	struct status_args a = {};
	struct mthpctl_cg_entry **bypath = NULL;
	struct mthpctl_cg_table t = {};
	struct status_policy *pol = NULL;
	const struct mthpctl_kernel *k;
	struct mthpctl_kernel probed;
	char *root = NULL;
	struct status_env e;
	int ret = MTHPCTL_EXIT_OK;
	size_t n, i;
	__u64 only = 0;

	argp_parse(&argp, argc, argv, 0, NULL, &a);
	if (!a.format_set && g.json)
		a.format = STATUS_JSON;
	g.json = a.format == STATUS_JSON;	/* errors follow the format */
	mthpctl_timing(NULL);
	if (a.cgroup) {
		char msg[4400];
		int err;
		enum mthpctl_cg_result cr = mthpctl_cgroup_check(a.cgroup, &mthpctl_real_fsops, &only, &err);

		if (cr != MTHPCTL_CG_OK)
			return mthpctl_error(MTHPCTL_EXIT_CGROUP, "%s",
					     mthpctl_cgroup_describe(a.cgroup, cr, err, msg, sizeof(msg)));
	}
	/* the kernel's features are shown by status of all in text and
	 * JSON; with --cgroup and in metrics they are not (null in JSON) */
	gather_env(&e, !a.cgroup || a.format == STATUS_PROMETHEUS,
		   !a.cgroup && a.format != STATUS_PROMETHEUS);
	mthpctl_timing("hugepages");
	n = status_gather_pin_dirs(only, &pol);
	mthpctl_timing("pins");
	if (n) {
		/* one walk: the subtree of --cgroup, or the whole cgroup2 tree */
		root = a.cgroup ? realpath(a.cgroup, NULL) : e.cg2[0] ? strdup(e.cg2) : NULL;
		if (root && !mthpctl_cgroup_table_build(root, &t) && t.n)
			bypath = malloc(t.n * sizeof(*bypath));
		if (bypath) {
			for (i = 0; i < t.n; i++)
				bypath[i] = &t.e[i];
			qsort(bypath, t.n, sizeof(*bypath), cmp_path);
		}
		mthpctl_timing("walk");
		k = status_gather_programs(&e, pol, n, &probed);
		mthpctl_timing("hooks");
		for (i = 0; bypath && i < n; i++)
			gather_cgroup(&pol[i], &t, bypath, k, a.format != STATUS_PROMETHEUS);
		gather_sharing(pol, n);
		mthpctl_timing("cgroups");
	}

	if (a.format == STATUS_PROMETHEUS)
		ret = status_print_prometheus(&e, pol, n) ?
		      mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory for the metrics of %zu policies", n) :
		      MTHPCTL_EXIT_OK;
	else if (g.json)
		status_print_json(&e, pol, n);
	else
		status_print_plain(&e, pol, n, a.cgroup);
	fflush(stdout);
	mthpctl_timing("print");
	free(bypath);
	mthpctl_cgroup_table_free(&t);
	free(root);
	status_policies_free(pol, n);
	free(e.hp);
	return ret;
}
