// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl attach: checks -> open, set rodata -> share an attached object
 * with equal rodata, or load -> pin -> new link or replace -> report. With
 * --object the user's object is opened and loaded by attach_object.c
 * instead, and linked and pinned here by the same steps.
 *
 * Above 500 lines on purpose: every step works on one struct policy_obj
 * and on one pin protocol (a _new directory filled, then renamed or
 * exchanged into place under the pin lock) that detach, status and the
 * crash tests (MTHPCTL_DEBUG_KILL_AT) rely on; an attach session (apply's
 * many cgroups in one process) keeps policy_objs' fds between attaches.
 * Split, that protocol would be spread over files and policy_obj exported
 * with no second user. Errors go to the caller's sink (struct
 * mthpctl_err_sink; NULL: printed), so apply and bench report them inside
 * their own output.
 */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "compat.h"
#include "mthp_policy.h"
#include "mthp_stats.h"
#include "mthp.skel.h"
#include "mthpctl.h"
#include "object.h"
#include "parse.h"
#include "pin.h"
#include "plan.h"
#include "sysfs.h"


/* The keys of the options without a short one: the spec's options by their
 * field, the switches and the rest after them. */
enum {
	OPT_SPEC = 0x100,
	OPT_SWITCH = OPT_SPEC + MTHPCTL_NR_SPEC,
#define SWITCH_KEY(flag, name, help)	OPT_SWITCH_##flag,
	MTHPCTL_ATTACH_SWITCHES(SWITCH_KEY)
#undef SWITCH_KEY
	OPT_OBJECT, OPT_OPS,
};
#define SPEC_KEY(id, key)	((key) ? (key) : OPT_SPEC + (id))

struct attach_args {
	const char *cgroup;
	struct mthpctl_policy_spec spec;	/* the built-in policy's options */
	unsigned int flags;			/* MTHPCTL_ATTACH_* */
	const char *object, *ops;		/* --object FILE, --ops NAME */
};

static const struct argp_option options[] = {
	{ "cgroup", 'c', "PATH", 0, "cgroup2 directory to attach to (required)", 0 },
#define SPEC_OPTION(id, member, name, key, arg, help)	{ name, SPEC_KEY(id, key), arg, 0, help, 1 },
	MTHPCTL_SPEC_OPTIONS(SPEC_OPTION)
#undef SPEC_OPTION
#define SWITCH_OPTION(flag, name, help)			{ name, OPT_SWITCH_##flag, NULL, 0, help, 2 },
	MTHPCTL_ATTACH_SWITCHES(SWITCH_OPTION)
#undef SWITCH_OPTION
	{ "object", OPT_OBJECT, "FILE", 0,
	  "load a policy of your own: a BPF object with a bpf_mthp_ops struct_ops map "
	  "(instead of the built-in policies and their options)", 3 },
	{ "ops", OPT_OPS, "NAME", 0,
	  "the struct_ops map of --object's file to attach, when it has several", 3 },
	{ 0 }
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	static const int spec_keys[] = {
#define SPEC_KEY_OF(id, member, name, k, arg, help)	[id] = SPEC_KEY(id, k),
		MTHPCTL_SPEC_OPTIONS(SPEC_KEY_OF)
#undef SPEC_KEY_OF
	};
	struct attach_args *a = state->input;
	int f;

	for (f = 0; f < MTHPCTL_NR_SPEC; f++)
		if (key == spec_keys[f]) {
			*mthpctl_spec_option(&a->spec, f) = arg;
			return 0;
		}
	switch (key) {
	case 'c': a->cgroup = arg; break;
#define SWITCH_CASE(flag, name, help)	case OPT_SWITCH_##flag: a->flags |= (flag); break;
	MTHPCTL_ATTACH_SWITCHES(SWITCH_CASE)
#undef SWITCH_CASE
	case OPT_OBJECT: a->object = arg; break;
	case OPT_OPS: a->ops = arg; break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char doc[] =
	"Load a policy and attach it to a cgroup. The policy is pinned under "
	MTHPCTL_PIN_ROOT "/cg-<cgroup id>/ and keeps working after mthpctl exits. "
	"Cgroups attached with equal parameters share one loaded policy object "
	"(and its counters) unless --private is given. --object FILE loads a policy "
	"of your own instead (see mthpctl-policies(7), WRITING A POLICY)."
	"\v"
	"Units: durations need one of ns, us, ms, s, min; sizes take K, M, G "
	"(binary) or bytes.\n"
	"\n"
	"Examples:\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/redis\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/redis --threshold 50ms --window 500ms\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/batch --policy fixed --max-size 64K\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/redis --policy never --replace\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/db --private\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/app --object my.bpf.o --ops my_ops";

static const struct argp argp = { options, parse_opt, NULL, doc, mthpctl_subcommand_children, NULL, NULL };

/* The PMD order of this kernel: the top of the auto policy's size ladder. */
__u32 mthpctl_pmd_order(void)
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

/* The policy options into params: 0, or MTHPCTL_EXIT_USAGE with why in err. */
static int build_spec(const struct attach_args *a, struct mthpctl_params *p, char *err, size_t len)
{
	return mthpctl_policy_build(&a->spec, mthpctl_pmd_order(), mthpctl_page_size(), "--", p,
				    err, len, NULL) ? MTHPCTL_EXIT_USAGE : 0;
}

/* Validate options into params; returns 0 or an exit code (printed). */
static int build_params(struct attach_args *a, struct mthpctl_params *p)
{
	char err[512];
	int f;

	if (!a->cgroup)
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "--cgroup PATH is required");
	if (a->ops && !a->object)
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "--ops names a map of --object's file (add --object FILE)");
	if (a->object) {
		for (f = 0; f < MTHPCTL_NR_SPEC; f++)
			if (*mthpctl_spec_option(&a->spec, f))
				return mthpctl_error(MTHPCTL_EXIT_USAGE,
						     "--%s is an option of the built-in policies, not "
						     "of --object's (drop --%s, or --object)",
						     mthpctl_spec_option_name(f),
						     mthpctl_spec_option_name(f));
		return 0;
	}
	if (build_spec(a, p, err, sizeof(err)))
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "%s", err);
	return 0;
}

/* The maps pinned beside the link, by their pin names: the built-in
 * policy's (all of them up to PIN_TOTALS), and the record of a user's
 * object (with its totals, if it has them). The program is pinned too
 * ("prog"): see policy_obj.prog_fd. */
enum { PIN_CONF, PIN_CGSTATE, PIN_SAMPLER, PIN_PENDING, PIN_TOTALS, PIN_OBJECT, NR_MAP_PINS };
static const char *const map_pin_names[NR_MAP_PINS] = {
	"conf", "cgstate", "sampler", "pending", "totals", "object",
};

/*
 * The policy object a cgroup is linked to: loaded by this attach, or the
 * one that an attached cgroup with the same parameters uses already. A
 * struct_ops map can be linked to any number of cgroups and the policy keeps
 * its per-cgroup state in cgroup storage, so one object serves them all and
 * the kernel holds its BTF, program, trampoline and maps once.
 */
struct policy_obj {
	struct mthp_bpf *skel;		/* opened, rodata set, loaded; NULL if shared */
	struct mthpctl_user_obj user;	/* --object's; user.obj NULL if not */
	int ops_fd;			/* the struct_ops map */
	int map_fds[NR_MAP_PINS];
	/*
	 * Its choose_orders program, found in the struct_ops map's value and
	 * pinned as "prog": status reads the program's id, run statistics
	 * and struct_ops type from it without the kernel's BTF, which is
	 * most of a status of one cgroup. An fd of its own; -1: not found.
	 */
	int prog_fd;
	bool shared;
	bool borrowed;			/* the fds are the session's (kept_obj) */
	__u64 shared_with;		/* the cgroup id whose pins led to it */
};

/* Let go of a shared object's fds (the skeleton's are its own, a borrowed
 * object's the session's). */
static void drop_shared(struct policy_obj *o)
{
	bool own = o->shared && !o->borrowed;
	int i;

	for (i = 0; i < NR_MAP_PINS; i++) {
		if (own && o->map_fds[i] >= 0)
			close(o->map_fds[i]);
		o->map_fds[i] = -1;
	}
	if (own && o->ops_fd >= 0)
		close(o->ops_fd);
	o->ops_fd = -1;
	o->shared = false;
	o->shared_with = 0;
}

static void policy_obj_close(struct policy_obj *o)
{
	if (o->prog_fd >= 0 && !o->borrowed)
		close(o->prog_fd);
	o->prog_fd = -1;
	drop_shared(o);
	o->borrowed = false;
	mthp_bpf__destroy(o->skel);
	o->skel = NULL;
	mthpctl_object_close(&o->user);
}

/*
 * A policy object an attach session loaded or found, kept for the next
 * cgroup of equal parameters: the fds are the session's own (dups), so
 * the maps and program stay loaded until the session ends even if every
 * cgroup linked to them is detached meanwhile.
 */
struct kept_obj {
	struct mthpctl_params params;
	__u64 cgroup_id;		/* the first cgroup linked to it */
	__u32 ops_map_id;
	int ops_fd, prog_fd;
	int map_fds[NR_MAP_PINS];
};

struct mthpctl_attach_session {
	bool caps_ok, bpffs_ok;		/* the checks of attach_checks() passed */
	bool kernel_ok;			/* session_kernel() found the series */
	struct mthpctl_kernel k;
	struct kept_obj *kept;
	size_t nr_kept;
};

struct mthpctl_attach_session *mthpctl_attach_session_new(void)
{
	return calloc(1, sizeof(struct mthpctl_attach_session));
}

static void kept_obj_close(struct kept_obj *ko)
{
	int i;

	for (i = 0; i < NR_MAP_PINS; i++)
		if (ko->map_fds[i] >= 0)
			close(ko->map_fds[i]);
	if (ko->ops_fd >= 0)
		close(ko->ops_fd);
	if (ko->prog_fd >= 0)
		close(ko->prog_fd);
}

void mthpctl_attach_session_free(struct mthpctl_attach_session *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_kept; i++)
		kept_obj_close(&s->kept[i]);
	free(s->kept);
	free(s);
}

/* The session's object of parameters p (compared as bytes, as the rodata
 * is), unless it is the one the cgroup is linked to already (old_map_id:
 * a --replace by equal parameters loads afresh, as find_shared() does). */
static struct kept_obj *session_find(struct mthpctl_attach_session *s,
				     const struct mthpctl_params *p, __u32 old_map_id)
{
	size_t i;

	for (i = 0; i < s->nr_kept; i++)
		if (!memcmp(&s->kept[i].params, p, sizeof(*p)) &&
		    s->kept[i].ops_map_id != old_map_id)
			return &s->kept[i];
	return NULL;
}

/* Link o to the session's object ko: its fds, not closed by o. */
static void borrow_kept(struct policy_obj *o, const struct kept_obj *ko)
{
	memcpy(o->map_fds, ko->map_fds, sizeof(o->map_fds));
	o->ops_fd = ko->ops_fd;
	o->prog_fd = ko->prog_fd;
	o->shared = o->borrowed = true;
	o->shared_with = ko->cgroup_id;
}

static int dup_fd(int fd)
{
	return fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
}

/* Keep the object o that cgroup id was just linked to (map ops_map_id)
 * for the session's next cgroups of parameters p; if it cannot be kept,
 * the next attach finds it among the pins as a new process would. */
static void session_keep(struct mthpctl_attach_session *s, const struct mthpctl_params *p,
			 const struct policy_obj *o, __u64 id, __u32 ops_map_id)
{
	struct kept_obj *nk, *ko;
	int i;

	nk = realloc(s->kept, (s->nr_kept + 1) * sizeof(*nk));
	if (!nk)
		return;
	s->kept = nk;
	ko = &nk[s->nr_kept];
	ko->params = *p;
	ko->cgroup_id = o->shared ? o->shared_with : id;
	ko->ops_map_id = ops_map_id;
	ko->ops_fd = dup_fd(o->ops_fd);
	ko->prog_fd = dup_fd(o->prog_fd);
	for (i = 0; i < NR_MAP_PINS; i++)
		ko->map_fds[i] = dup_fd(o->map_fds[i]);
	if (ko->ops_fd < 0 || (o->prog_fd >= 0 && ko->prog_fd < 0)) {
		kept_obj_close(ko);
		return;
	}
	for (i = 0; i < NR_MAP_PINS; i++)
		if (o->map_fds[i] >= 0 && ko->map_fds[i] < 0) {
			kept_obj_close(ko);
			return;
		}
	s->nr_kept++;
}

/* FNV-1a of the BPF object, 8 bytes a step (it is ~50 KB and every attach
 * hashes it), part of the rodata compared for sharing: an object of
 * another mthpctl build is never shared. */
__u64 mthpctl_builtin_object_hash(void)
{
	const void *b;
	size_t n;

	b = mthp_bpf__elf_bytes(&n);
	return mthpctl_hash_bytes(b, n);
}

/* o empty (no skeleton, no fds) */
static void policy_obj_init(struct policy_obj *o)
{
	memset(o, 0, sizeof(*o));
	drop_shared(o);		/* the fds to -1 */
	o->prog_fd = -1;
	o->user.info_fd = -1;
}

/* Slots of the policy's cpu_slots array: a power of two >= the possible
 * CPUs, so that the BPF program bounds a CPU number with a mask. */
static __u32 cpu_slots_count(void)
{
	int cpus = libbpf_num_possible_cpus();
	__u32 n = 1;

	while (cpus > 0 && n < (__u32)cpus && n < (1u << 20))
		n <<= 1;
	return n;
}

/* What mthpctl sets in the policy's .rodata before a load with p. */
static void set_rodata(struct mthp_bpf__rodata *r, const struct mthpctl_params *p)
{
	memcpy(&r->params, p, sizeof(*p));
	r->page_shift = __builtin_ctzl(mthpctl_page_size());
	r->object_hash = mthpctl_builtin_object_hash();
	r->cpu_slots_mask = cpu_slots_count() - 1;
}

static int open_policy(const struct mthpctl_params *p, struct policy_obj *o,
		       const struct mthpctl_err_sink *sink)
{
	int err;

	o->skel = mthp_bpf__open();
	if (!o->skel)
		return mthpctl_load_error(sink, -errno, "opening the BPF policy failed");
	set_rodata(o->skel->rodata, p);
	err = bpf_map__set_value_size(o->skel->maps.data_slots,
				      (o->skel->rodata->cpu_slots_mask + 1) *
				      sizeof(struct mthpctl_cpu_slot));
	if (err)
		return mthpctl_load_error(sink, err, "sizing the policy's per-CPU slots failed");
	return 0;
}

/* The link pinned in dir, if it is attached to cgroup id (its info in *l):
 * an fd, or -1 (no pin, a detached link, or another cgroup's). */
static int attached_link(const char *dir, __u64 id, struct mthpctl_link *l)
{
	int fd = mthpctl_pin_get(dir, "link");

	if (fd >= 0 && (mthpctl_link_query(fd, l) || !l->map_id || l->cgroup_id != id)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Is the policy pinned in dir attached to cgroup id and made of this object
 * with this rodata? Then take its maps into o. */
static bool share_from(struct policy_obj *o, const char *dir, __u64 id, const void *want,
		       size_t len)
{
	struct mthpctl_link l = {};
	struct bpf_map_info info;
	char val[4096];
	__u32 zero = 0;
	bool same;
	int fd, i;

	fd = attached_link(dir, id, &l);
	if (fd < 0)
		return false;
	close(fd);
	/* the whole section: it also holds what the skeleton does not show */
	fd = mthpctl_pin_get(dir, "conf");
	same = want && mthpctl_map_info(fd, &info) && info.value_size == len && len <= sizeof(val) &&
	       !bpf_map_lookup_elem(fd, &zero, val) && !memcmp(val, want, len);
	o->shared = true;
	o->map_fds[PIN_CONF] = fd;
	for (i = PIN_CONF + 1; same && i <= PIN_TOTALS; i++) {
		o->map_fds[i] = mthpctl_pin_get(dir, map_pin_names[i]);
		same = o->map_fds[i] >= 0;
	}
	if (same) {
		o->ops_fd = bpf_map_get_fd_by_id(l.map_id);
		same = o->ops_fd >= 0;
	}
	if (!same) {
		drop_shared(o);
		return false;
	}
	o->shared_with = id;
	/* its program, pinned by the attach that made these pins: then the
	 * kernel's BTF is not needed to find it (find_prog()) */
	o->prog_fd = mthpctl_pin_get(dir, "prog");
	return true;
}

/* An attached policy among the pins, other than the cgroup's own (a
 * --replace by equal parameters loads afresh), whose rodata is what the
 * opened, not yet loaded, object o would load with: the whole section, as
 * libbpf will write it, the parameters and the object's hash among it. */
static bool find_shared(struct policy_obj *o, __u64 own_id)
{
	size_t len = 0;
	const void *want;
	char dir[4200];
	struct dirent *d;
	bool found = false;
	DIR *root;
	__u64 id;

	want = bpf_map__initial_value(o->skel->maps.rodata, &len);
	root = want ? opendir(MTHPCTL_PIN_ROOT) : NULL;
	if (!root)
		return false;
	while (!found && (d = readdir(root))) {
		if (mthpctl_pin_parse(d->d_name, &id) || id == own_id)
			continue;
		mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, NULL, dir, sizeof(dir));
		found = share_from(o, dir, id, want, len);
	}
	closedir(root);
	return found;
}

static int load_policy(const struct mthpctl_kernel *k, struct policy_obj *o,
		       const struct mthpctl_err_sink *sink)
{
	struct mthp_bpf *s = o->skel;
	int err;

	err = mthp_bpf__load(s);
	if (err)
		return mthpctl_load_error(sink, err, "loading the BPF policy failed");
	mthpctl_timing("load");	/* libbpf's BTF work and the verifier */
	err = mthpctl_struct_ops_ready(k, bpf_map__fd(s->maps.mthpctl_ops),
				       bpf_map__value_size(s->maps.mthpctl_ops),
				       bpf_program__fd(s->progs.choose_orders));
	if (err)
		return mthpctl_load_error(sink, err, "preparing the policy failed");
	o->ops_fd = bpf_map__fd(s->maps.mthpctl_ops);
	o->map_fds[PIN_CONF] = bpf_map__fd(s->maps.rodata);
	o->map_fds[PIN_CGSTATE] = bpf_map__fd(s->maps.cgstate);
	/* a map holding a bpf_wq must keep a user reference (pinned), or the
	 * kernel refuses to set the work item up */
	o->map_fds[PIN_SAMPLER] = bpf_map__fd(s->maps.sampler);
	o->map_fds[PIN_PENDING] = bpf_map__fd(s->maps.pending);
	o->map_fds[PIN_TOTALS] = bpf_map__fd(s->maps.data_slots);
	return 0;
}

static int pin_maps(const struct policy_obj *o, const char *dir, const struct mthpctl_err_sink *sink)
{
	char path[4200];
	int i;

	for (i = 0; i < NR_MAP_PINS; i++) {
		if (o->map_fds[i] < 0)
			continue;	/* not a pin of this kind of policy */
		mthpctl_pin_path(dir, map_pin_names[i], path, sizeof(path));
		if (bpf_obj_pin(o->map_fds[i], path))
			return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "pinning %s failed: %s", path,
					    strerror(errno));
	}
	mthpctl_pin_path(dir, "prog", path, sizeof(path));
	if (o->prog_fd >= 0 && bpf_obj_pin(o->prog_fd, path))
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "pinning %s failed: %s", path,
				    strerror(errno));
	return 0;
}

/*
 * The kernel's BTF, read once a session: what a load needs (the offsets
 * of the struct_ops value) and the check that the kernel has the series.
 * Linking a cgroup to an object loaded already needs none of it, and
 * reading it is most of such an attach (27 of 68 ms in the VM).
 */
static int session_kernel(struct mthpctl_attach_session *s, const struct mthpctl_err_sink *sink)
{
	struct mthpctl_kernel *k = &s->k;

	if (s->kernel_ok)
		return 0;
	mthpctl_probe_kernel(k);
	mthpctl_timing("probe");
	if (!k->btf)
		return mthpctl_fail(sink, MTHPCTL_EXIT_UNSUPPORTED,
				    "this kernel has no BTF (/sys/kernel/btf/vmlinux; build with CONFIG_DEBUG_INFO_BTF)");
	if (!k->feat.mthp_ops)
		return mthpctl_fail(sink, MTHPCTL_EXIT_UNSUPPORTED,
				    "this kernel lacks bpf_mthp_ops (apply kernel/)");
	s->kernel_ok = true;
	return 0;
}

/* The choose_orders program of o's struct_ops map (o->prog_fd), from the
 * map's value where no pin gave it. Not finding it costs status the
 * kernel's BTF later, not the attach. */
static void find_prog(struct mthpctl_attach_session *s, struct policy_obj *o)
{
	char msg[256];
	const struct mthpctl_err_sink quiet = { msg, sizeof(msg) };
	__u32 prog_id, links;

	if (o->prog_fd >= 0 || session_kernel(s, &quiet))
		return;
	if (!mthpctl_struct_ops_read(&s->k, o->ops_fd, &prog_id, &links) && prog_id)
		o->prog_fd = bpf_prog_get_fd_by_id(prog_id);
}

/* Checks before anything changes: privileges, the cgroup, bpffs (the
 * kernel: session_kernel()); those of the machine once a session. */
static int attach_checks(struct mthpctl_attach_session *s, const char *cgroup, __u64 *id,
			 const struct mthpctl_err_sink *sink)
{
	enum mthpctl_cg_result cr;
	char why[4200];
	int ret, e;

	if (!s->caps_ok) {
		ret = mthpctl_check_caps(sink);
		if (ret)
			return ret;
		s->caps_ok = true;
	}
	cr = mthpctl_cgroup_check(cgroup, &mthpctl_real_fsops, id, &e);
	if (cr != MTHPCTL_CG_OK)
		return mthpctl_fail(sink, MTHPCTL_EXIT_CGROUP, "%s",
				    mthpctl_cgroup_describe(cgroup, cr, e, why, sizeof(why)));
	if (s->bpffs_ok)
		return 0;
	ret = mthpctl_check_bpffs(sink);
	if (ret)
		return ret;
	s->bpffs_ok = true;
	mthpctl_timing("checks");
	return 0;
}

/* The cgroup's attached policy, if any: the kernel's link is the truth;
 * stale pins (cgroup removed and re-created, link detached, or no link)
 * are removed. */
static int find_attached(const char *dir, __u64 id, struct mthpctl_link *old)
{
	int fd = attached_link(dir, id, old);

	if (fd < 0 && access(dir, F_OK) == 0)
		mthpctl_rm_pin_dir(dir);
	return fd;
}

/* Point the cgroup's link at the new object (*replaced from then on), then
 * swap the pin dirs: the old pins end up in tmp and are removed. */
static int link_replace(int old_fd, const struct mthpctl_link *old, const struct policy_obj *o,
			const char *tmp, const char *dir, bool *replaced,
			const struct mthpctl_err_sink *sink)
{
	LIBBPF_OPTS(bpf_link_update_opts, uopts, .flags = BPF_F_REPLACE);
	char path[4200];
	int old_map_fd, err;

	mthpctl_pin_path(tmp, "link", path, sizeof(path));
	if (bpf_obj_pin(old_fd, path))
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "pinning %s failed: %s", path, strerror(errno));
	old_map_fd = bpf_map_get_fd_by_id(old->map_id);
	if (old_map_fd >= 0)
		uopts.old_map_fd = old_map_fd;
	else
		uopts.flags = 0;
	err = bpf_link_update(old_fd, o->ops_fd, &uopts) ? -errno : 0;
	if (old_map_fd >= 0)
		close(old_map_fd);
	if (err)
		return mthpctl_load_error(sink, err, "replacing the policy failed");
	*replaced = true;
	/* new pins in place, old ones to tmp, then drop them */
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0)
		return mthpctl_rm_pin_dir(tmp), 0;
	mthpctl_rm_pin_dir(dir);
	if (rename(tmp, dir))
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL,
				    "policy replaced but moving pins to %s failed: %s (pins are in %s)",
				    dir, strerror(errno), tmp);
	return 0;
}

/* A new link; closing it on a later failure detaches, nothing is left. */
static int link_new(int cg_fd, const struct policy_obj *o, const char *tmp, const char *dir,
		    int *link_fd, const struct mthpctl_err_sink *sink)
{
	char path[4200];

	/* the UAPI of upstream's cgroup struct_ops: the cgroup is the target,
	 * no flag; appended after the cgroup's other policies */
	*link_fd = bpf_link_create(o->ops_fd, cg_fd, BPF_STRUCT_OPS, NULL);
	if (*link_fd < 0)
		return mthpctl_load_error(sink, -errno, "attaching the policy failed");
	mthpctl_pin_path(tmp, "link", path, sizeof(path));
	if (bpf_obj_pin(*link_fd, path) || rename(tmp, dir))
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "pinning %s failed: %s", path, strerror(errno));
	return 0;
}

/* The user's object (opened by attach_to()) loaded into o: its map to link,
 * the record and its counters (if any) to pin. */
static int load_user(const struct mthpctl_kernel *k, struct policy_obj *o,
		     const struct mthpctl_err_sink *sink)
{
	int ret = mthpctl_object_load(k, &o->user, sink);

	if (ret)
		return ret;
	o->ops_fd = mthpctl_object_ops_fd(&o->user);
	o->map_fds[PIN_OBJECT] = o->user.info_fd;
	o->map_fds[PIN_TOTALS] = mthpctl_object_stats_fd(&o->user);
	return 0;
}

/* Attach the built-in policy of parameters p, or (file set) the bpf_mthp_ops
 * map ops of the user's object file. */
static int attach_to(struct mthpctl_attach_session *s, const char *cgroup,
		     const struct mthpctl_params *p, const char *file, const char *ops,
		     unsigned int flags, struct mthpctl_attach_result *res,
		     const struct mthpctl_err_sink *sink)
{
	char dir[4096], tmp[4096];
	struct mthpctl_link old = {}, now = {};
	struct policy_obj o;
	struct kept_obj *ko = NULL;
	int cg_fd = -1, old_fd = -1, link_fd = -1, lock_fd;
	bool have_tmp = false;
	__u64 id = 0;
	int ret;

	memset(res, 0, sizeof(*res));
	policy_obj_init(&o);
	mthpctl_timing(NULL);
	ret = attach_checks(s, cgroup, &id, sink);
	/* a policy of the user's is loaded whatever the pins hold: the
	 * kernel first, as before its file */
	if (!ret && file)
		ret = session_kernel(s, sink);
	if (ret)
		return ret;
	/* a file that is no policy is refused before anything changes */
	if (file && (ret = mthpctl_object_open(file, ops, &o.user, sink))) {
		policy_obj_close(&o);
		return ret;
	}
	/* a concurrent attach or detach finishes first: then the checks
	 * below see what it did */
	lock_fd = mthpctl_lock_pins(true);
	if (lock_fd < 0) {
		policy_obj_close(&o);
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "cannot create or lock %s: %s",
				    MTHPCTL_PIN_ROOT, strerror(-lock_fd));
	}

	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, NULL, dir, sizeof(dir));
	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, "_new", tmp, sizeof(tmp));
	mthpctl_rm_pin_dir(tmp);	/* leftover of an interrupted run */
	old_fd = find_attached(dir, id, &old);
	if (old_fd >= 0 && !(flags & MTHPCTL_ATTACH_REPLACE)) {
		ret = mthpctl_fail(sink, MTHPCTL_EXIT_STATE,
				   "%s already has a policy (link id %u); use --replace or detach it first",
				   cgroup, old.id);
		goto out;
	}
	cg_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		ret = mthpctl_fail(sink, MTHPCTL_EXIT_CGROUP, "cannot open %s: %s", cgroup, strerror(errno));
		goto out;
	}
	mthpctl_timing("pins");

	if (file) {
		/* never shared: mthpctl cannot know whether the object keeps
		 * its state per cgroup (mthpctl-attach(8), --object) */
		ret = load_user(&s->k, &o, sink);
		if (ret)
			goto out;
		mthpctl_timing("ready");
	} else if (!(flags & MTHPCTL_ATTACH_PRIVATE) &&
		   (ko = session_find(s, p, old_fd >= 0 ? old.map_id : 0))) {
		/* the session loaded or found it for an earlier cgroup:
		 * no skeleton to open, no pins to search */
		borrow_kept(&o, ko);
		mthpctl_timing("share");
	} else {
		ret = open_policy(p, &o, sink);
		if (ret)
			goto out;
		mthpctl_timing("open");
		if (!(flags & MTHPCTL_ATTACH_PRIVATE) && find_shared(&o, id)) {
			/* the shared object's maps are taken: this one goes */
			mthp_bpf__destroy(o.skel);
			o.skel = NULL;
			mthpctl_timing("share");
		} else {
			ret = session_kernel(s, sink);
			if (!ret)
				ret = load_policy(&s->k, &o, sink);
			if (ret)
				goto out;
			mthpctl_timing("ready");
		}
	}
	find_prog(s, &o);
	if (mkdir(tmp, 0700)) {
		ret = mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	have_tmp = true;
	ret = pin_maps(&o, tmp, sink);
	if (ret)
		goto out;
	mthpctl_timing("pin");

	if (old_fd >= 0) {
		ret = link_replace(old_fd, &old, &o, tmp, dir, &res->replaced, sink);
		if (res->replaced) {
			/* tmp is gone or holds the only pins (said) */
			have_tmp = false;
			link_fd = old_fd;
			old_fd = -1;
		}
		if (ret)
			goto out;
	} else {
		ret = link_new(cg_fd, &o, tmp, dir, &link_fd, sink);
		if (ret)
			goto out;
		have_tmp = false;
	}
	mthpctl_timing("link");

	mthpctl_link_query(link_fd, &now);
	res->cgroup_id = id;
	res->link_id = now.id;
	res->ops_map_id = now.map_id;
	res->shared = o.shared;
	res->shared_with = o.shared_with;
	snprintf(res->ops, sizeof(res->ops), "%s", o.user.info.ops);
	snprintf(res->pin, sizeof(res->pin), "%s", dir);
	if (!file && !ko && !(flags & MTHPCTL_ATTACH_PRIVATE))
		session_keep(s, p, &o, id, now.map_id);
	ret = MTHPCTL_EXIT_OK;
out:
	if (have_tmp)
		mthpctl_rm_pin_dir(tmp);
	if (link_fd >= 0)
		close(link_fd);
	if (old_fd >= 0)
		close(old_fd);
	if (cg_fd >= 0)
		close(cg_fd);
	policy_obj_close(&o);
	close(lock_fd);
	mthpctl_timing("cleanup");
	return ret;
}

int mthpctl_attach_in(struct mthpctl_attach_session *s, const char *cgroup,
		      const struct mthpctl_params *p, unsigned int flags,
		      struct mthpctl_attach_result *res, const struct mthpctl_err_sink *sink)
{
	return attach_to(s, cgroup, p, NULL, NULL, flags, res, sink);
}

/* One attach, one session: nothing kept beyond it. */
static int attach_alone(const char *cgroup, const struct mthpctl_params *p, const char *file,
			const char *ops, unsigned int flags, struct mthpctl_attach_result *res,
			const struct mthpctl_err_sink *sink)
{
	struct mthpctl_attach_session *s = mthpctl_attach_session_new();
	int ret;

	if (!s)
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "out of memory");
	ret = attach_to(s, cgroup, p, file, ops, flags, res, sink);
	mthpctl_attach_session_free(s);
	return ret;
}

int mthpctl_attach(const char *cgroup, const struct mthpctl_params *p, unsigned int flags,
		   struct mthpctl_attach_result *res, const struct mthpctl_err_sink *sink)
{
	return attach_alone(cgroup, p, NULL, NULL, flags, res, sink);
}

int mthpctl_attach_object(const char *cgroup, const char *file, const char *ops, unsigned int flags,
			  struct mthpctl_attach_result *res, const struct mthpctl_err_sink *sink)
{
	return attach_alone(cgroup, NULL, file, ops, flags, res, sink);
}

/* What the policy can do on this host beyond taking sizes away: the sizes
 * left at madvise it grants, those at never it cannot have. */
static void print_host_reach(const struct mthpctl_params *p)
{
	struct mthpctl_host_sizes h;
	char sizes[256];
	__u64 grants;

	if (mthpctl_read_host_sizes(&h))
		return;
	grants = mthpctl_policy_grants(&h, p);
	if (grants)
		printf("  grants %s (left at madvise on this host) to the cgroup's processes, "
		       "except those with PR_SET_THP_DISABLE and MADV_NOHUGEPAGE memory\n",
		       mthpctl_size_list(grants, "", sizes, sizeof(sizes)));
	if (h.never)
		printf("  %s: at never on this host, out of any policy's reach\n",
		       mthpctl_size_list(h.never, "", sizes, sizeof(sizes)));
}

/* The same as JSON: "thp_sizes_kb" and, for a built-in policy,
 * "granted_sizes_kb". */
static void host_reach_json(const struct mthpctl_params *p)
{
	struct mthpctl_host_sizes h;

	if (mthpctl_read_host_sizes(&h))
		return;
	mthpctl_host_sizes_json(&g.jw, &h);
	if (p)
		mthpctl_size_list_json(&g.jw, "granted_sizes_kb", mthpctl_policy_grants(&h, p));
}

/* p: the built-in policy's parameters; NULL: --object's a (the file, the
 * map) */
static void attach_report(const char *cgroup, const struct mthpctl_params *p,
			  const struct attach_args *a, const struct mthpctl_attach_result *r)
{
	char desc[4400], warning[4800];
	struct mthpctl_thp_off off;
	bool counted = !mthpctl_thp_off_subtree(cgroup, &off);

	/* processes already in the cgroup that refuse what it grants */
	if (!counted || mthpctl_thp_off_warning(cgroup, &off, p, warning, sizeof(warning)) <= 0)
		warning[0] = '\0';
	if (p)
		mthpctl_params_str(p, desc, sizeof(desc));
	else
		snprintf(desc, sizeof(desc), "object %s (ops %s)", a->object, r->ops);
	if (g.json) {
		mthpctl_json_begin();
		jw_obj_open(&g.jw);
		jw_kstr(&g.jw, "action", r->replaced ? "replaced" : "attached");
		jw_kstr(&g.jw, "cgroup", cgroup);
		jw_ku64(&g.jw, "cgroup_id", r->cgroup_id);
		if (p) {
			mthpctl_params_json(&g.jw, p);
		} else {
			jw_kstr(&g.jw, "policy", "object");
			jw_kstr(&g.jw, "object", a->object);
			jw_kstr(&g.jw, "ops", r->ops);
		}
		jw_ku64(&g.jw, "link_id", r->link_id);
		jw_ku64(&g.jw, "object_id", r->ops_map_id);
		jw_kbool(&g.jw, "shared", r->shared);
		jw_kstr(&g.jw, "pin", r->pin);
		host_reach_json(p);
		jw_key(&g.jw, "thp_disabled_processes");
		if (counted)
			jw_u64(&g.jw, off.disabled);
		else
			jw_null(&g.jw);
		if (warning[0])
			jw_kstr(&g.jw, "warning", warning);
		jw_obj_close(&g.jw);
		return;
	}
	if (warning[0])
		fprintf(stderr, "mthpctl: warning: %s\n", warning);
	printf("%s policy %s to %s (cgroup id %llu, link id %u), pinned at %s\n",
	       r->replaced ? "replaced: now" : "attached", desc, cgroup,
	       (unsigned long long)r->cgroup_id, r->link_id, r->pin);
	if (r->shared)
		printf("  shares the policy object (struct_ops map id %u) of cgroup id %llu: "
		       "equal parameters; --private loads its own\n",
		       r->ops_map_id, (unsigned long long)r->shared_with);
	if (p)
		print_host_reach(p);
}

int cmd_attach(int argc, char **argv)
{
	struct attach_args a = {};
	struct mthpctl_attach_result r;
	struct mthpctl_params p;
	int ret;

	argp_parse(&argp, argc, argv, 0, NULL, &a);
	ret = build_params(&a, &p);
	if (ret)
		return ret;
	if (a.object)
		ret = mthpctl_attach_object(a.cgroup, a.object, a.ops, a.flags, &r, NULL);
	else
		ret = mthpctl_attach(a.cgroup, &p, a.flags, &r, NULL);
	if (ret)
		return ret;
	attach_report(a.cgroup, a.object ? NULL : &p, &a, &r);
	return MTHPCTL_EXIT_OK;
}
