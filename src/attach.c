// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl attach: open -> set rodata -> load -> attach/replace -> pin. */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "mthp_policy.h"
#include "mthp.skel.h"
#include "mthpctl.h"
#include "parse.h"
#include "pin.h"
#include "sysfs.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* kernel-internal, may reach user space */
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

enum { OPT_THRESHOLD = 0x100, OPT_WINDOW, OPT_MIN_USAGE, OPT_MAX_SIZE, OPT_REPLACE };

struct attach_args {
	const char *cgroup;
	const char *policy;
	const char *threshold, *window, *min_usage, *max_size;
	bool replace;
};

static const struct argp_option options[] = {
	{ "cgroup", 'c', "PATH", 0, "cgroup2 directory to attach to (required)", 0 },
	{ "policy", 'P', "NAME", 0, "auto (default), fixed or never", 0 },
	{ "threshold", OPT_THRESHOLD, "DURATION", 0,
	  "auto: memory-full stall per window meaning pressure (default 100ms)", 1 },
	{ "window", OPT_WINDOW, "DURATION", 0,
	  "auto: sampling window, 10ms..60s (default 1s)", 1 },
	{ "min-usage", OPT_MIN_USAGE, "SIZE", 0,
	  "auto: anon+shmem below which only 4K is used, 0 = off (default 16M)", 1 },
	{ "max-size", OPT_MAX_SIZE, "SIZE", 0,
	  "largest folio size allowed (required for fixed, optional for auto)", 1 },
	{ "replace", OPT_REPLACE, NULL, 0,
	  "swap the policy of an attached cgroup atomically", 2 },
	{ 0 }
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct attach_args *a = state->input;

	switch (key) {
	case 'c': a->cgroup = arg; break;
	case 'P': a->policy = arg; break;
	case OPT_THRESHOLD: a->threshold = arg; break;
	case OPT_WINDOW: a->window = arg; break;
	case OPT_MIN_USAGE: a->min_usage = arg; break;
	case OPT_MAX_SIZE: a->max_size = arg; break;
	case OPT_REPLACE: a->replace = true; break;
	case ARGP_KEY_ARG: argp_error(state, "unexpected argument '%s'", arg); break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char doc[] =
	"Load a policy and attach it to a cgroup. The policy is pinned under "
	MTHPCTL_PIN_ROOT "/cg-<cgroup id>/ and keeps working after mthpctl exits."
	"\v"
	"Units: durations need one of ns, us, ms, s, min; sizes take K, M, G "
	"(binary) or bytes.\n"
	"\n"
	"Examples:\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/redis\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/redis --threshold 50ms --window 500ms\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/batch --policy fixed --max-size 64K\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/redis --policy never --replace";

static const struct argp argp = { options, parse_opt, NULL, doc, mthpctl_subcommand_children, NULL, NULL };

static int pick_policy(const char *name, __u32 *policy)
{
	static const char *const names[] = { "auto", "fixed", "never" };
	static const __u32 ids[] = { MTHPCTL_POLICY_AUTO, MTHPCTL_POLICY_FIXED, MTHPCTL_POLICY_NEVER };
	int i, n = 0;

	for (i = 0; i < 3; i++)
		if (!strncmp(names[i], name, strlen(name)) && *name) {
			*policy = ids[i];
			n++;
		}
	return n == 1 ? 0 : -EINVAL;
}

/* The PMD order of this kernel: the top of the auto policy's size ladder. */
static __u32 pmd_order(void)
{
	char buf[64];
	__u64 v;
	int order;

	if (mthpctl_read_file(MTHPCTL_THP_DIR "/hpage_pmd_size", buf, sizeof(buf)) <= 0)
		return MTHPCTL_DEFAULT_TOP_ORDER;
	v = strtoull(buf, NULL, 10);
	order = mthpctl_size_to_order(v, mthpctl_page_size());
	return order > 0 ? order : MTHPCTL_DEFAULT_TOP_ORDER;
}

/* Validate options into params; returns 0 or an exit code (printed). */
static int build_params(const struct attach_args *a, struct mthpctl_params *p)
{
	char desc[32];
	__u64 v;
	int order;

	memset(p, 0, sizeof(*p));
	p->magic = MTHPCTL_PARAMS_MAGIC;
	p->policy = MTHPCTL_POLICY_AUTO;
	p->max_order = MTHPCTL_NO_CAP;
	p->top_order = pmd_order();
	p->window_ns = MTHPCTL_DEFAULT_WINDOW_NS;
	p->threshold_ns = MTHPCTL_DEFAULT_THRESHOLD_NS;
	p->min_usage = MTHPCTL_DEFAULT_MIN_USAGE;

	if (!a->cgroup)
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "--cgroup PATH is required");
	if (a->policy && pick_policy(a->policy, &p->policy))
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "unknown policy '%s' (use auto, fixed or never)", a->policy);
	if (p->policy != MTHPCTL_POLICY_AUTO && (a->threshold || a->window || a->min_usage))
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "--threshold, --window and --min-usage apply to --policy auto only");
	if (p->policy == MTHPCTL_POLICY_NEVER && a->max_size)
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "--max-size does not apply to --policy never (use fixed)");
	if (p->policy == MTHPCTL_POLICY_FIXED && !a->max_size)
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "--policy fixed needs --max-size SIZE (e.g. 64K)");
	if (a->window) {
		if (mthpctl_parse_duration(a->window, &v) || v < 10000000ULL || v > 60000000000ULL)
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "bad --window '%s' (a duration from 10ms to 60s, e.g. 1s)",
					     a->window);
		p->window_ns = v;
	}
	if (a->threshold) {
		if (mthpctl_parse_duration(a->threshold, &v) || !v)
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "bad --threshold '%s' (a duration above 0, e.g. 100ms)",
					     a->threshold);
		p->threshold_ns = v;
	}
	if (p->threshold_ns > p->window_ns)
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "--threshold must not exceed --window (stall per window)");
	if (a->min_usage) {
		if (mthpctl_parse_size(a->min_usage, &v))
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "bad --min-usage '%s' (a size, e.g. 16M; 0 turns the rule off)",
					     a->min_usage);
		p->min_usage = v;
	}
	if (a->max_size) {
		order = -EINVAL;
		if (!mthpctl_parse_size(a->max_size, &v))
			order = mthpctl_size_to_order(v, mthpctl_page_size());
		if (order < 0)
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "bad --max-size '%s' (a power of two from 4K, e.g. 64K or 2M)",
					     a->max_size);
		/* no anonymous folio is larger than a PMD: a larger cap would
		 * read as a limit but limit nothing */
		if ((__u32)order > p->top_order)
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "bad --max-size '%s': above %s, the largest THP size of "
					     "this kernel (hpage_pmd_size); leave it out for no cap",
					     a->max_size, mthpctl_format_size(mthpctl_page_size() <<
									p->top_order, desc, sizeof(desc)));
		p->max_order = order;
	}
	return 0;
}

static int load_error(int err, const char *what)
{
	/* capabilities were checked first: EACCES at load is the verifier
	 * refusing the program, not a missing privilege */
	if (err == -EACCES)
		return mthpctl_error(MTHPCTL_EXIT_FAIL,
				     "%s: the kernel's verifier refused the program (%s; libbpf "
				     "printed the verifier's log above)", what, strerror(-err));
	if (err == -EPERM)
		return mthpctl_error(MTHPCTL_EXIT_PERM, "%s: %s (run as root)", what, strerror(-err));
	if (err == -EOPNOTSUPP || err == -ENOTSUPP)
		return mthpctl_error(MTHPCTL_EXIT_UNSUPPORTED,
				     "%s: the kernel refused bpf_mthp_ops on a cgroup (apply kernel/)", what);
	/* libbpf prints its warnings, and a refused program's verifier log */
	return mthpctl_error(MTHPCTL_EXIT_FAIL, "%s: %s (libbpf's warnings, if any, are above%s)",
			     what, strerror(-err), g.verbose ? "" : "; -v adds its debug output");
}

static int pin_maps(struct mthp_bpf *skel, const char *dir)
{
	struct { const char *name; struct bpf_map *map; } m[] = {
		{ "conf", skel->maps.rodata },
		{ "cgstate", skel->maps.cgstate },
		/* a map holding a bpf_wq must keep a user reference (pinned),
		 * or the kernel refuses to set the work item up */
		{ "sampler", skel->maps.sampler },
		{ "pending", skel->maps.pending },
		{ "totals", skel->maps.totals },
	};
	char path[4096];
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		mthpctl_pin_path(dir, m[i].name, path, sizeof(path));
		if (bpf_obj_pin(bpf_map__fd(m[i].map), path))
			return -errno;
	}
	return 0;
}

static int do_attach(const struct attach_args *a, const struct mthpctl_params *p)
{
	char dir[4096], tmp[4096], path[4096], desc[256];
	struct mthpctl_link old = {}, now = {};
	struct mthpctl_kernel k;
	struct mthp_bpf *skel = NULL;
	int cg_fd = -1, old_fd = -1, old_map_fd = -1, link_fd = -1, lock_fd;
	bool have_tmp = false, replaced = false;
	enum mthpctl_cg_result cr;
	__u64 id = 0;
	int ret, err, e;

	mthpctl_timing(NULL);
	ret = mthpctl_check_caps();
	if (ret)
		return ret;
	cr = mthpctl_cgroup_check(a->cgroup, &mthpctl_real_fsops, &id, &e);
	if (cr != MTHPCTL_CG_OK)
		return mthpctl_error(MTHPCTL_EXIT_CGROUP, "%s",
				     mthpctl_cgroup_describe(a->cgroup, cr, e, path, sizeof(path)));
	ret = mthpctl_check_bpffs();
	if (ret)
		return ret;
	mthpctl_timing("checks");
	mthpctl_probe_kernel(&k);
	mthpctl_timing("probe");
	if (!k.btf)
		return mthpctl_error(MTHPCTL_EXIT_UNSUPPORTED,
				     "this kernel has no BTF (/sys/kernel/btf/vmlinux; build with CONFIG_DEBUG_INFO_BTF)");
	if (!k.feat.mthp_ops)
		return mthpctl_error(MTHPCTL_EXIT_UNSUPPORTED,
				     "this kernel lacks bpf_mthp_ops (apply kernel/)");
	/* a concurrent attach or detach finishes first: then the checks
	 * below see what it did */
	lock_fd = mthpctl_lock_pins(true);
	if (lock_fd < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create or lock %s: %s",
				     MTHPCTL_PIN_ROOT, strerror(-lock_fd));

	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, NULL, dir, sizeof(dir));
	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, "_new", tmp, sizeof(tmp));
	mthpctl_rm_pin_dir(tmp);	/* leftover of an interrupted run */

	/* Is the cgroup attached already? The kernel's link is the truth. */
	mthpctl_pin_path(dir, "link", path, sizeof(path));
	old_fd = bpf_obj_get(path);
	if (old_fd >= 0 && (mthpctl_link_query(old_fd, &old) || !old.map_id ||
			    old.cgroup_id != id)) {
		/* stale: detached (cgroup removed) or not ours */
		close(old_fd);
		old_fd = -1;
		mthpctl_rm_pin_dir(dir);
	} else if (old_fd < 0 && access(dir, F_OK) == 0) {
		mthpctl_rm_pin_dir(dir);	/* pins without a link */
	}
	if (old_fd >= 0 && !a->replace) {
		ret = mthpctl_error(MTHPCTL_EXIT_STATE,
				    "%s already has a policy (link id %u); use --replace or detach it first",
				    a->cgroup, old.id);
		goto out;
	}

	cg_fd = open(a->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		ret = mthpctl_error(MTHPCTL_EXIT_CGROUP, "cannot open %s: %s", a->cgroup, strerror(errno));
		goto out;
	}

	mthpctl_timing("pins");
	skel = mthp_bpf__open();
	if (!skel) {
		ret = load_error(-errno, "opening the BPF policy failed");
		goto out;
	}
	memcpy((void *)&skel->rodata->params, p, sizeof(*p));
	skel->rodata->page_shift = __builtin_ctzl(mthpctl_page_size());
	mthpctl_timing("open");
	err = mthp_bpf__load(skel);
	if (err) {
		ret = load_error(err, "loading the BPF policy failed");
		goto out;
	}
	mthpctl_timing("load");	/* libbpf's BTF work and the verifier */

	if (mkdir(tmp, 0700)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	have_tmp = true;
	err = pin_maps(skel, tmp);
	if (err) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pinning in %s failed: %s", tmp, strerror(-err));
		goto out;
	}
	mthpctl_pin_path(tmp, "link", path, sizeof(path));
	err = mthpctl_struct_ops_ready(&k, bpf_map__fd(skel->maps.mthpctl_ops),
				       bpf_map__value_size(skel->maps.mthpctl_ops),
				       bpf_program__fd(skel->progs.choose_orders));
	if (err) {
		ret = load_error(err, "preparing the policy failed");
		goto out;
	}
	mthpctl_timing("pin");

	if (old_fd >= 0) {
		LIBBPF_OPTS(bpf_link_update_opts, uopts, .flags = BPF_F_REPLACE);

		old_map_fd = bpf_map_get_fd_by_id(old.map_id);
		if (old_map_fd >= 0)
			uopts.old_map_fd = old_map_fd;
		else
			uopts.flags = 0;
		if (bpf_obj_pin(old_fd, path)) {
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pinning %s failed: %s", path, strerror(errno));
			goto out;
		}
		if (bpf_link_update(old_fd, bpf_map__fd(skel->maps.mthpctl_ops), &uopts)) {
			ret = load_error(-errno, "replacing the policy failed");
			goto out;
		}
		replaced = true;
		link_fd = old_fd;
		old_fd = -1;
		/* new pins in place, old ones to tmp, then drop them */
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
			mthpctl_rm_pin_dir(tmp);
		} else {
			mthpctl_rm_pin_dir(dir);
			if (rename(tmp, dir)) {
				ret = mthpctl_error(MTHPCTL_EXIT_FAIL,
						    "policy replaced but moving pins to %s failed: %s (pins are in %s)",
						    dir, strerror(errno), tmp);
				have_tmp = false;
				goto out;
			}
		}
		have_tmp = false;
	} else {
		/* the UAPI of upstream's cgroup struct_ops: the cgroup is the
		 * target, no flag; appended after the cgroup's other policies */
		link_fd = bpf_link_create(bpf_map__fd(skel->maps.mthpctl_ops), cg_fd,
					  BPF_STRUCT_OPS, NULL);
		if (link_fd < 0) {
			ret = load_error(-errno, "attaching the policy failed");
			goto out;
		}
		if (bpf_obj_pin(link_fd, path) || rename(tmp, dir)) {
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pinning %s failed: %s", path, strerror(errno));
			goto out;	/* closing link_fd detaches: nothing left */
		}
		have_tmp = false;
	}

	mthpctl_timing("link");
	mthpctl_link_query(link_fd, &now);
	mthpctl_params_str(p, desc, sizeof(desc));
	if (g.json) {
		mthpctl_json_begin();
		jw_obj_open(&g.jw);
		jw_kstr(&g.jw, "action", replaced ? "replaced" : "attached");
		jw_kstr(&g.jw, "cgroup", a->cgroup);
		jw_ku64(&g.jw, "cgroup_id", id);
		mthpctl_params_json(&g.jw, p);
		jw_ku64(&g.jw, "link_id", now.id);
		jw_kstr(&g.jw, "pin", dir);
		jw_obj_close(&g.jw);
	} else {
		printf("%s policy %s to %s (cgroup id %llu, link id %u), pinned at %s\n",
		       replaced ? "replaced: now" : "attached", desc, a->cgroup,
		       (unsigned long long)id, now.id, dir);
	}
	ret = MTHPCTL_EXIT_OK;
out:
	if (have_tmp)
		mthpctl_rm_pin_dir(tmp);
	if (link_fd >= 0)
		close(link_fd);
	if (old_fd >= 0)
		close(old_fd);
	if (old_map_fd >= 0)
		close(old_map_fd);
	if (cg_fd >= 0)
		close(cg_fd);
	mthp_bpf__destroy(skel);
	close(lock_fd);
	mthpctl_timing("cleanup");
	return ret;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_args a = {};
	struct mthpctl_params p;
	int ret;

	argp_parse(&argp, argc, argv, 0, NULL, &a);
	ret = build_params(&a, &p);
	if (ret)
		return ret;
	return do_attach(&a, &p);
}
