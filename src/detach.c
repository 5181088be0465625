// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl detach: detach the link, remove the pins. */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "mthpctl.h"
#include "pin.h"

struct detach_args {
	const char *cgroup;
	const char *cgroup_id;
	bool all;
};

static const struct argp_option options[] = {
	{ "cgroup", 'c', "PATH", 0, "cgroup2 directory whose policy to detach", 0 },
	{ "cgroup-id", 'i', "ID", 0, "the policy of a removed cgroup, by the id status shows", 0 },
	{ "all", 'a', NULL, 0, "detach every policy mthpctl attached", 0 },
	{ 0 }
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct detach_args *a = state->input;

	switch (key) {
	case 'c': a->cgroup = arg; break;
	case 'i': a->cgroup_id = arg; break;
	case 'a': a->all = true; break;
	case ARGP_KEY_ARG: argp_error(state, "unexpected argument '%s'", arg); break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char doc[] =
	"Detach a cgroup's policy and remove its pins; the cgroup returns to the "
	"global THP settings."
	"\v"
	"Examples:\n"
	"  mthpctl detach --cgroup /sys/fs/cgroup/redis\n"
	"  mthpctl detach --cgroup-id 4242\n"
	"  mthpctl detach --all";

static const struct argp argp = { options, parse_opt, NULL, doc, mthpctl_subcommand_children, NULL, NULL };

/* Detach the link pinned in dir (if any) and remove the pins. */
static int detach_dir(const char *dir)
{
	int fd = mthpctl_pin_get(dir, "link");

	if (fd >= 0) {
		/* detach now even if someone else holds the link open */
		bpf_link_detach(fd);
		close(fd);
	}
	return mthpctl_rm_pin_dir(dir);
}

static int detach_all(void)
{
	char dir[4096];
	struct dirent *de;
	int n = 0, failed = 0, err;
	DIR *d;

	d = opendir(MTHPCTL_PIN_ROOT);
	if (d) {
		while ((de = readdir(d))) {
			__u64 id;
			bool main = !mthpctl_pin_parse(de->d_name, &id);

			if (!main && !mthpctl_pin_is_leftover(de->d_name))
				continue;
			snprintf(dir, sizeof(dir), "%s/%s", MTHPCTL_PIN_ROOT, de->d_name);
			err = detach_dir(dir);
			if (err) {
				failed++;
				if (!g.json)
					fprintf(stderr, "mthpctl: cannot remove %s: %s\n", dir, strerror(-err));
			} else if (main) {
				n++;
			}
		}
		closedir(d);
	}
	if (failed)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "%d pin directories under %s could not be removed",
				     failed, MTHPCTL_PIN_ROOT);
	if (g.json) {
		mthpctl_json_begin();
		jw_obj_open(&g.jw);
		jw_kstr(&g.jw, "action", "detached");
		jw_ku64(&g.jw, "count", n);
		jw_obj_close(&g.jw);
	} else {
		printf("detached %d %s\n", n, n == 1 ? "policy" : "policies");
	}
	return MTHPCTL_EXIT_OK;
}

/* Detach the policy of cgroup id (named name in messages) and the
 * leftovers of its interrupted operations, under the lock. */
/* A link detached whose pins cannot be removed would stay behind as a
 * stale pin: on a read-only bpffs nothing is changed. 0 or an exit code. */
static int refuse_read_only(const struct mthpctl_err_sink *sink)
{
	if (access(MTHPCTL_PIN_ROOT, W_OK) == 0 || errno != EROFS)
		return 0;
	return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL,
			    "%s is on a read-only mount: nothing detached (mount -o remount,rw %s)",
			    MTHPCTL_PIN_ROOT, MTHPCTL_BPFFS);
}

int mthpctl_detach_id(__u64 id, const char *name, const struct mthpctl_err_sink *sink)
{
	char dir[4096];
	int err, lock_fd;

	/* serialized with attach (no pin root: nothing to detach, nothing
	 * to lock; the check below says so) */
	lock_fd = mthpctl_lock_pins(false);
	if (lock_fd < 0 && lock_fd != -ENOENT)
		return mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "cannot lock %s: %s",
				    MTHPCTL_PIN_ROOT, strerror(-lock_fd));
	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, NULL, dir, sizeof(dir));
	err = refuse_read_only(sink);
	if (err)
		goto out;
	if (access(dir, F_OK)) {
		err = mthpctl_fail(sink, MTHPCTL_EXIT_STATE, "%s has no policy attached by mthpctl (see mthpctl status)",
				   name);
		goto out;
	}
	err = detach_dir(dir);
	if (err) {
		err = mthpctl_fail(sink, MTHPCTL_EXIT_FAIL, "cannot remove %s: %s", dir, strerror(-err));
		goto out;
	}
	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, "_new", dir, sizeof(dir));
	detach_dir(dir);
	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, id, "_old", dir, sizeof(dir));
	detach_dir(dir);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	return err;
}

int mthpctl_detach(const char *cgroup, __u64 *id, const struct mthpctl_err_sink *sink)
{
	enum mthpctl_cg_result cr;
	char msg[4400];
	int e;

	cr = mthpctl_cgroup_check(cgroup, &mthpctl_real_fsops, id, &e);
	if (cr != MTHPCTL_CG_OK)
		return mthpctl_fail(sink, MTHPCTL_EXIT_CGROUP, "%s%s",
				    mthpctl_cgroup_describe(cgroup, cr, e, msg, sizeof(msg)),
				    cr == MTHPCTL_CG_MISSING ?
				    "; a removed cgroup's policy goes with detach --cgroup-id ID "
				    "(the cgroup_id of mthpctl -j status) or --all" : "");
	return mthpctl_detach_id(*id, cgroup, sink);
}

/* What detach --cgroup and --cgroup-id print (cgroup: NULL for a
 * removed one). */
static void print_detached(const char *cgroup, __u64 id)
{
	if (g.json) {
		mthpctl_json_begin();
		jw_obj_open(&g.jw);
		jw_kstr(&g.jw, "action", "detached");
		if (cgroup)
			jw_kstr(&g.jw, "cgroup", cgroup);
		jw_ku64(&g.jw, "cgroup_id", id);
		jw_obj_close(&g.jw);
	} else if (cgroup) {
		printf("detached the policy of %s (cgroup id %llu)\n", cgroup, (unsigned long long)id);
	} else {
		printf("detached the policy of cgroup id %llu\n", (unsigned long long)id);
	}
}

static int detach_one(const char *cgroup)
{
	__u64 id;
	int ret;

	ret = mthpctl_detach(cgroup, &id, NULL);
	if (ret)
		return ret;
	print_detached(cgroup, id);
	return MTHPCTL_EXIT_OK;
}

/* --cgroup-id's value: a cgroup id is a positive decimal number. */
static int parse_cgroup_id(const char *arg, __u64 *id)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || !*arg || *end || !v || *arg == '-' || *arg == '+')
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "bad --cgroup-id '%s' (the cgroup_id mthpctl -j status shows, e.g. 4242)", arg);
	*id = v;
	return 0;
}

/* A removed cgroup's policy, by its id (status: "cgroup": null): the
 * pins of a cgroup that is gone, without detach --all's removal of every
 * other policy. */
static int detach_by_id(__u64 id)
{
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "cgroup id %llu", (unsigned long long)id);
	ret = mthpctl_detach_id(id, name, NULL);
	if (ret)
		return ret;
	print_detached(NULL, id);
	return MTHPCTL_EXIT_OK;
}

int cmd_detach(int argc, char **argv)
{
	struct detach_args a = {};
	int ret, lock_fd;
	__u64 id = 0;

	argp_parse(&argp, argc, argv, 0, NULL, &a);
	if (!!a.all + !!a.cgroup + !!a.cgroup_id != 1)
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "give one of --cgroup PATH, --cgroup-id ID or --all");
	if (a.cgroup_id) {
		ret = parse_cgroup_id(a.cgroup_id, &id);
		if (ret)
			return ret;
	}
	ret = mthpctl_check_caps(NULL);
	if (ret)
		return ret;
	ret = mthpctl_check_bpffs(NULL);
	if (ret)
		return ret;
	if (a.cgroup)
		return detach_one(a.cgroup);	/* locks for itself */
	if (a.cgroup_id)
		return detach_by_id(id);	/* so does this */
	lock_fd = mthpctl_lock_pins(false);
	if (lock_fd < 0 && lock_fd != -ENOENT)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot lock %s: %s",
				     MTHPCTL_PIN_ROOT, strerror(-lock_fd));
	ret = refuse_read_only(NULL);
	if (!ret)
		ret = detach_all();
	if (lock_fd >= 0)
		close(lock_fd);
	return ret;
}
