// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl apply: read the configuration (mthpctl.conf(5)), resolve its
 * targets, plan against what is attached and what apply attached before
 * (plan.c), then attach, replace and detach, and keep the record of what
 * it attached in /run/mthpctl/applied.
 */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "conf.h"
#include "mthpctl.h"
#include "pin.h"
#include "plan.h"
#include "status.h"

#define SYSTEMD_RUN_DIR		"/run/systemd/system"	/* sd_booted(3): systemd is PID 1 */
#define DROPIN_NAME		"50-mthpctl.conf"

enum { OPT_DRY_RUN = 'n', OPT_CONFIG = 'f', OPT_UNIT = 'u' };

struct apply_args {
	const char *config;
	const char *unit;
	bool dry_run;
};

static const struct argp_option options[] = {
	{ "config", OPT_CONFIG, "FILE", 0,
	  "read FILE only (default: " MTHPCTL_CONF_FILE " and " MTHPCTL_CONF_DIR "/*.conf)", 0 },
	{ "dry-run", OPT_DRY_RUN, NULL, 0, "print the plan, change nothing", 0 },
	{ "unit", OPT_UNIT, "UNIT", 0,
	  "only the section of this unit, in its cgroup now (what a unit's drop-in runs "
	  "at each start)", 0 },
	{ 0 }
};

static const char doc[] =
	"Make the attached policies what the configuration says: attach what is "
	"missing, replace what differs, detach what an earlier apply attached and the "
	"configuration no longer names. Policies attached by hand to cgroups the "
	"configuration does not name are left alone. A configuration with any error is "
	"refused as a whole (exit 8, FILE:LINE: message) and nothing changes."
	"\v"
	"Examples:\n"
	"  mthpctl apply\n"
	"  mthpctl apply --dry-run\n"
	"  mthpctl -p apply --dry-run --config ./policies.conf\n"
	"  mthpctl apply --unit redis.service";

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct apply_args *a = state->input;

	switch (key) {
	case OPT_CONFIG: a->config = arg; break;
	case OPT_DRY_RUN: a->dry_run = true; break;
	case OPT_UNIT: a->unit = arg; break;
	/* an argument: argp's own "too many arguments" */
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = { options, parse_opt, NULL, doc, mthpctl_subcommand_children, NULL, NULL };

/* The whole file as a string (malloc'd), or NULL with errno. */
static char *read_all(const char *path)
{
	char *buf = NULL;
	size_t cap = 0;
	int failed;
	ssize_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	/* up to the first NUL: a text file has none */
	n = getdelim(&buf, &cap, '\0', f);
	failed = ferror(f);
	fclose(f);
	if (n < 0) {
		free(buf);
		/* an empty file */
		return failed ? (errno = EIO, NULL) : strdup("");
	}
	return buf;
}

/* --- the configuration ---------------------------------------------------- */

struct config {
	struct mthpctl_conf conf;
	char **files;
	size_t nfiles;
};

static int add_file(struct config *c, const char *path)
{
	char err[4400], *text, **nf;
	int ret;

	text = read_all(path);
	if (!text)
		return mthpctl_error(MTHPCTL_EXIT_CONFIG, "cannot read %s: %s", path, strerror(errno));
	ret = mthpctl_conf_parse(&c->conf, path, text, mthpctl_pmd_order(), mthpctl_page_size(),
				 err, sizeof(err));
	free(text);
	if (ret)
		return mthpctl_error(ret, "%s (nothing changed)", err);
	nf = realloc(c->files, (c->nfiles + 1) * sizeof(*nf));
	if (!nf || !(nf[c->nfiles] = strdup(path)))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	c->files = nf;
	c->nfiles++;
	return 0;
}

static void config_free(struct config *c)
{
	size_t i;

	mthpctl_conf_free(&c->conf);
	for (i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
}

/* --config FILE, or the main file and the directory (either may be absent). */
static int read_config(const char *only, struct config *c)
{
	char path[4400], **names = NULL, **nn;
	size_t n = 0, k, i;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	if (only)
		return add_file(c, only);
	if (access(MTHPCTL_CONF_FILE, F_OK) == 0) {
		ret = add_file(c, MTHPCTL_CONF_FILE);
		if (ret)
			return ret;
	}
	d = opendir(MTHPCTL_CONF_DIR);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
			break;
		}
		names = nn;
		n++;
	}
	closedir(d);
	k = ret ? 0 : mthpctl_conf_dir_order(names, n);
	for (i = 0; !ret && i < k; i++) {
		snprintf(path, sizeof(path), "%s/%s", MTHPCTL_CONF_DIR, names[i]);
		ret = add_file(c, path);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* --- systemd -------------------------------------------------------------- */

/* Run argv (no shell, found in PATH), its stdout into out (cut to len);
 * its exit status, or -errno (-ENOENT: no such program). */
static int run_capture(char *const argv[], char *out, size_t len)
{
	posix_spawn_file_actions_t fa;
	char rest[256];
	int pfd[2], status, err;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	/* the copy dup2 makes is not close-on-exec */
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		return -err;
	}
	/* read to the end, keeping what fits: a child blocked on a full pipe
	 * would never exit */
	while ((r = read(pfd[0], got + 1 < len ? out + got : rest,
			 got + 1 < len ? len - 1 - got : sizeof(rest))) > 0 || (r < 0 && errno == EINTR))
		got += got + 1 < len && r > 0 ? (size_t)r : 0;
	close(pfd[0]);
	if (len)
		out[got] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static bool systemd_running(void)
{
	struct stat st;

	return !lstat(SYSTEMD_RUN_DIR, &st) && S_ISDIR(st.st_mode);
}

/* The cgroup2 mount: systemd's ControlGroup is relative to it. */
static void cgroup2_root(char *out, size_t len)
{
	static char buf[65536];
	struct statfs sfs;

	if (!statfs("/sys/fs/cgroup", &sfs) && (unsigned long)sfs.f_type == MTHPCTL_CGROUP2_MAGIC)
		snprintf(out, len, "/sys/fs/cgroup");
	else if (mthpctl_read_file("/proc/self/mountinfo", buf, sizeof(buf)) <= 0 ||
		 mthpctl_find_mount(buf, "cgroup2", out, len))
		out[0] = '\0';
}

/* The unit's cgroup directory, through systemd ("": not running). An exit
 * code (printed, with where in the configuration). */
static int unit_cgroup(const struct mthpctl_conf_entry *e, char *out, size_t len)
{
	char *argv[] = { "systemctl", "show", "-p", "ControlGroup", "--value", "--", e->target, NULL };
	char root[4096], rel[4096];
	int rc;

	out[0] = '\0';
	if (!systemd_running())
		return mthpctl_error(MTHPCTL_EXIT_CGROUP,
				     "%s:%d: [%s]: systemd is not running (no %s), so units have no cgroup "
				     "to resolve; name the cgroup by its path (nothing changed)",
				     e->file, e->line, e->target, SYSTEMD_RUN_DIR);
	rc = run_capture(argv, rel, sizeof(rel));
	if (rc)
		return mthpctl_error(MTHPCTL_EXIT_CGROUP,
				     "%s:%d: [%s]: `systemctl show -p ControlGroup` failed (%s) (nothing changed)",
				     e->file, e->line, e->target,
				     rc == -ENOENT ? "systemctl not found" : rc < 0 ? strerror(-rc) : "see above");
	rel[strcspn(rel, "\n")] = '\0';
	if (!rel[0])
		return 0;	/* not running: no cgroup now */
	cgroup2_root(root, sizeof(root));
	if (!root[0])
		return mthpctl_error(MTHPCTL_EXIT_CGROUP, "%s:%d: [%s]: no cgroup2 mount (nothing changed)",
				     e->file, e->line, e->target);
	snprintf(out, len, "%s%s", root, rel);
	return 0;
}

/* The drop-ins: one per .service target of the configuration (all of it:
 * apply --unit writes none), and none left for units it no longer names. */
struct dropin {
	char unit[256];
	bool want, have, differs;
};

static int is_service(const char *unit)
{
	size_t l = strlen(unit);

	return l > 8 && !strcmp(unit + l - 8, ".service");
}

static size_t plan_dropins(const struct mthpctl_conf *c, const char *text, struct dropin **out)
{
	struct dropin *d = NULL, *nd;
	char path[4400], *cur;
	struct dirent *de;
	size_t n = 0, i;
	DIR *dir;

	for (i = 0; i < c->n; i++) {
		if (!c->e[i].is_unit || !is_service(c->e[i].target) || !(nd = realloc(d, (n + 1) * sizeof(*d))))
			continue;
		d = nd;
		memset(&d[n], 0, sizeof(d[n]));
		snprintf(d[n].unit, sizeof(d[n].unit), "%s", c->e[i].target);
		d[n++].want = true;
	}
	dir = opendir(SYSTEMD_RUN_DIR);
	while (dir && (de = readdir(dir))) {
		size_t l = strlen(de->d_name);

		if (l < 3 || l - 2 >= sizeof(d->unit) || strcmp(de->d_name + l - 2, ".d"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", SYSTEMD_RUN_DIR, de->d_name, DROPIN_NAME);
		if (access(path, F_OK))
			continue;
		for (i = 0; i < n; i++)
			if (!strncmp(d[i].unit, de->d_name, l - 2) && !d[i].unit[l - 2])
				break;
		if (i == n) {
			if (!(nd = realloc(d, (n + 1) * sizeof(*d))))
				continue;
			d = nd;
			memset(&d[n], 0, sizeof(d[n]));
			snprintf(d[n].unit, sizeof(d[n].unit), "%.*s", (int)(l - 2), de->d_name);
			n++;
		}
		d[i].have = true;
		cur = read_all(path);
		d[i].differs = !cur || strcmp(cur, text);
		free(cur);
	}
	if (dir)
		closedir(dir);
	*out = d;
	return n;
}

static bool dropin_changes(const struct dropin *d)
{
	return d->want ? !d->have || d->differs : d->have;
}

static int write_dropin(const struct dropin *d, const char *text)
{
	char dir[4400], path[4600], tmp[4700];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s.d", SYSTEMD_RUN_DIR, d->unit);
	snprintf(path, sizeof(path), "%s/%s", dir, DROPIN_NAME);
	if (!d->want) {
		if (unlink(path) && errno != ENOENT)
			return -errno;
		rmdir(dir);	/* if nothing else is in it */
		return 0;
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	if (fclose(f) || rename(tmp, path))
		return unlink(tmp), -errno;
	return 0;
}

/* --- the state file ------------------------------------------------------- */

static int lock_state(void)
{
	int fd;

	if (mkdir(MTHPCTL_STATE_DIR, 0755) && errno != EEXIST)
		return -errno;
	fd = open(MTHPCTL_STATE_DIR "/apply.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* applies run one at a time (units starting together each run
	 * apply --unit), so that none loses another's record */
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int write_state(const struct mthpctl_applied *r, size_t n)
{
	char line[4400];
	size_t i;
	FILE *f;

	f = fopen(MTHPCTL_STATE_FILE ".tmp", "we");
	if (!f)
		return -errno;
	fprintf(f, "# mthpctl apply: the policies it attached (mthpctl-apply(8)); "
		"cgroup_id link_id private policy max_order top_order window_ns threshold_ns min_usage target\n");
	for (i = 0; i < n; i++)
		if (!mthpctl_applied_format(&r[i], line, sizeof(line)))
			fputs(line, f);
	if (fclose(f) || rename(MTHPCTL_STATE_FILE ".tmp", MTHPCTL_STATE_FILE))
		return unlink(MTHPCTL_STATE_FILE ".tmp"), -errno;
	return 0;
}

/* --- the run -------------------------------------------------------------- */

struct run {
	struct apply_args *args;
	struct config cfg;
	struct mthpctl_conf_entry **ent;	/* of each want */
	struct mthpctl_want *want;
	char (*cgpath)[4096];
	size_t nw;
	struct mthpctl_have *have;
	size_t nh;
	struct mthpctl_applied *applied;
	size_t na;
	struct mthpctl_action *act;
	size_t nact, changes;
	bool *done;
	struct dropin *dropins;
	size_t nd;
	char dropin_text[1024];
	char error[1024];
	int error_code;
};

static int resolve(struct run *r)
{
	struct mthpctl_conf *c = &r->cfg.conf;
	enum mthpctl_cg_result cr;
	size_t i, k, n = 0;
	char why[4400];
	int ret, e;

	r->ent = calloc(c->n + 1, sizeof(*r->ent));
	r->want = calloc(c->n + 1, sizeof(*r->want));
	r->cgpath = calloc(c->n + 1, sizeof(*r->cgpath));
	if (!r->ent || !r->want || !r->cgpath)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	for (i = 0; i < c->n; i++) {
		struct mthpctl_conf_entry *ce = &c->e[i];
		struct mthpctl_want *w = &r->want[n];

		if (r->args->unit && strcmp(ce->target, r->args->unit))
			continue;
		if (ce->is_unit) {
			ret = unit_cgroup(ce, r->cgpath[n], sizeof(r->cgpath[n]));
			if (ret)
				return ret;
		} else {
			snprintf(r->cgpath[n], sizeof(r->cgpath[n]), "%s", ce->target);
		}
		w->target = ce->target;
		w->params = ce->params;
		w->private_obj = ce->private_obj;
		if (r->cgpath[n][0]) {
			cr = mthpctl_cgroup_check(r->cgpath[n], &mthpctl_real_fsops, &w->cgroup_id, &e);
			if (cr != MTHPCTL_CG_OK)
				return mthpctl_error(MTHPCTL_EXIT_CGROUP, "%s:%d: [%s]: %s (nothing changed)",
						     ce->file, ce->line, ce->target,
						     mthpctl_cgroup_describe(r->cgpath[n], cr, e, why, sizeof(why)));
			w->cgroup = r->cgpath[n];
		}
		/* a path and a unit, or two units, naming one cgroup: which
		 * section wins would be an accident of their order */
		for (k = 0; w->cgroup_id && k < n; k++)
			if (r->want[k].cgroup_id == w->cgroup_id)
				return mthpctl_error(MTHPCTL_EXIT_CONFIG,
						     "%s:%d: [%s] is the cgroup %s, as [%s] at %s:%d is "
						     "(one section per cgroup; nothing changed)",
						     ce->file, ce->line, ce->target, w->cgroup,
						     r->ent[k]->target, r->ent[k]->file, r->ent[k]->line);
		r->ent[n++] = ce;
	}
	r->nw = n;
	return 0;
}

static int gather(struct run *r)
{
	struct policy *pol = NULL;
	size_t n, i, bad = 0;
	char *text;

	n = status_gather_pin_dirs(0, &pol);
	r->have = calloc(n + 1, sizeof(*r->have));
	if (!r->have) {
		free(pol);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	}
	for (i = 0; i < n; i++) {
		if (pol[i].cgstate_fd >= 0)
			close(pol[i].cgstate_fd);
		/* stale pins (the cgroup removed, the link gone) count as
		 * nothing attached: attach cleans them up */
		if (!pol[i].attached)
			continue;
		r->have[r->nh].cgroup_id = pol[i].id;
		r->have[r->nh].link_id = pol[i].link.id;
		r->have[r->nh].have_params = pol[i].have_params;
		r->have[r->nh].params = pol[i].params;
		r->nh++;
	}
	free(pol);
	text = read_all(MTHPCTL_STATE_FILE);
	if (text) {
		r->na = mthpctl_applied_parse(text, &r->applied, &bad);
		free(text);
		if (bad && !g.json)
			fprintf(stderr, "mthpctl: warning: %zu lines of %s do not parse; ignored\n",
				bad, MTHPCTL_STATE_FILE);
	}
	r->act = calloc(r->nw + r->na + 1, sizeof(*r->act));
	r->done = calloc(r->nw + r->na + 1, sizeof(*r->done));
	if (!r->act || !r->done)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	r->nact = mthpctl_plan(r->want, r->nw, r->have, r->nh, r->applied, r->na, r->args->unit != NULL,
			       r->act, &r->changes);
	return 0;
}

/* Carry the plan out, in its order; stops at the first failure (its
 * message in r->error, JSON or not). The records of what is attached by
 * apply after it go to the state file either way. */
static int execute(struct run *r)
{
	struct mthpctl_applied *next;
	struct mthpctl_attach_result res;
	char pin[4200];
	size_t i, nn = 0;
	bool stopped = false;
	int ret = 0, err;

	next = calloc(r->nact + r->na + 1, sizeof(*next));
	if (!next)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	/* in JSON the error goes into apply's one object */
	if (g.json) {
		g.error_buf = r->error;
		g.error_len = sizeof(r->error);
	}
	for (i = 0; i < r->nact; i++) {
		const struct mthpctl_action *a = &r->act[i];
		const struct mthpctl_want *w = a->want >= 0 ? &r->want[a->want] : NULL;
		const struct mthpctl_applied *old = a->applied >= 0 ? &r->applied[a->applied] : NULL;
		struct mthpctl_applied *rec = &next[nn];

		if (stopped) {
			/* not done: what apply attached stays on record */
			if (old && a->kind != MTHPCTL_ACT_FORGET && a->kind != MTHPCTL_ACT_LEAVE)
				next[nn++] = *old;
			continue;
		}
		switch (a->kind) {
		case MTHPCTL_ACT_ATTACH:
		case MTHPCTL_ACT_REPLACE:
			ret = mthpctl_attach(w->cgroup, &w->params,
					     (a->kind == MTHPCTL_ACT_REPLACE ? MTHPCTL_ATTACH_REPLACE : 0) |
					     (w->private_obj ? MTHPCTL_ATTACH_PRIVATE : 0), &res);
			if (!ret)
				rec->link_id = res.link_id;
			break;
		case MTHPCTL_ACT_KEEP:
			rec->link_id = r->have[a->have].link_id;
			break;
		case MTHPCTL_ACT_DETACH:
			ret = mthpctl_detach_id(old->cgroup_id, old->target);
			break;
		case MTHPCTL_ACT_FORGET:
			/* the pins of a link whose cgroup is gone: removed
			 * (a pin directory of another cgroup is not apply's) */
			if (!mthpctl_pin_dir(MTHPCTL_PIN_ROOT, old->cgroup_id, NULL, pin, sizeof(pin)) &&
			    !access(pin, F_OK))
				mthpctl_detach_id(old->cgroup_id, old->target);
			break;
		default:
			break;
		}
		if (ret) {
			stopped = true;
			r->error_code = ret;
			/* a failed replace or detach leaves apply's policy
			 * as it was */
			if (old && (a->kind == MTHPCTL_ACT_DETACH || a->kind == MTHPCTL_ACT_REPLACE))
				next[nn++] = *old;
			continue;
		}
		r->done[i] = true;
		if (w && w->cgroup_id) {
			rec->cgroup_id = w->cgroup_id;
			rec->private_obj = w->private_obj;
			rec->params = w->params;
			snprintf(rec->target, sizeof(rec->target), "%s", w->target);
			nn++;
		}
	}
	/* apply --unit: the records of other targets as they were */
	for (i = 0; r->args->unit && i < r->na; i++) {
		size_t k;

		for (k = 0; k < r->nact && r->act[k].applied != (int)i; k++)
			;
		if (k == r->nact && !(r->nw && r->want[0].cgroup_id == r->applied[i].cgroup_id))
			next[nn++] = r->applied[i];
	}
	err = write_state(next, nn);
	free(next);
	g.error_buf = NULL;
	if (err && !ret)
		ret = r->error_code = mthpctl_error(MTHPCTL_EXIT_FAIL, "policies applied, but writing %s failed: %s",
						    MTHPCTL_STATE_FILE, strerror(-err));
	return ret;
}

static int sync_dropins(struct run *r)
{
	char *argv[] = { "systemctl", "daemon-reload", NULL };
	char out[256];
	bool changed = false;
	size_t i;
	int err;

	for (i = 0; i < r->nd; i++) {
		if (!dropin_changes(&r->dropins[i]))
			continue;
		err = write_dropin(&r->dropins[i], r->dropin_text);
		if (err)
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "writing the drop-in of %s failed: %s",
					     r->dropins[i].unit, strerror(-err));
		changed = true;
	}
	/* systemd reads drop-ins at a reload only */
	if (changed && run_capture(argv, out, sizeof(out)))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "systemctl daemon-reload failed (the drop-ins are written)");
	return 0;
}

/* --- report --------------------------------------------------------------- */

static const char *past(enum mthpctl_action_kind k)
{
	switch (k) {
	case MTHPCTL_ACT_ATTACH: return "attached";
	case MTHPCTL_ACT_REPLACE: return "replaced";
	case MTHPCTL_ACT_DETACH: return "detached";
	default: return mthpctl_action_name(k);
	}
}

static const char *why(const struct run *r, const struct mthpctl_action *a)
{
	switch (a->kind) {
	case MTHPCTL_ACT_SKIP: return "no cgroup now: not running, or no such unit (a service's drop-in "
				      "attaches at its start)";
	case MTHPCTL_ACT_LEAVE: return "no longer configured, but attached or replaced by hand since: left alone";
	case MTHPCTL_ACT_FORGET: return "its cgroup is gone: record dropped";
	case MTHPCTL_ACT_DETACH: return a->applied >= 0 && r->args->unit ? "the unit's earlier cgroup" :
					"no longer in the configuration";
	case MTHPCTL_ACT_KEEP: return "as configured";
	default: return NULL;
	}
}

static void report_json(const struct run *r)
{
	char src[4200];
	size_t i;

	mthpctl_json_begin();
	jw_obj_open(&g.jw);
	jw_kbool(&g.jw, "dry_run", r->args->dry_run);
	jw_key(&g.jw, "config");
	jw_arr_open(&g.jw);
	for (i = 0; i < r->cfg.nfiles; i++)
		jw_str(&g.jw, r->cfg.files[i]);
	jw_arr_close(&g.jw);
	jw_ku64(&g.jw, "changes", r->changes);
	jw_key(&g.jw, "actions");
	jw_arr_open(&g.jw);
	for (i = 0; i < r->nact; i++) {
		const struct mthpctl_action *a = &r->act[i];
		const struct mthpctl_applied *old = a->applied >= 0 ? &r->applied[a->applied] : NULL;

		jw_obj_open(&g.jw);
		jw_kstr(&g.jw, "action", mthpctl_action_name(a->kind));
		if (a->want >= 0) {
			const struct mthpctl_want *w = &r->want[a->want];

			jw_kstr(&g.jw, "target", w->target);
			jw_kstr(&g.jw, "cgroup", w->cgroup);
			jw_ku64(&g.jw, "cgroup_id", w->cgroup_id);
			snprintf(src, sizeof(src), "%s:%d", r->ent[a->want]->file, r->ent[a->want]->line);
			jw_kstr(&g.jw, "source", src);
			mthpctl_params_json(&g.jw, &w->params);
			jw_kbool(&g.jw, "private", w->private_obj);
		} else {
			jw_kstr(&g.jw, "target", old->target);
			jw_ku64(&g.jw, "cgroup_id", old->cgroup_id);
		}
		if (a->have >= 0 && a->kind == MTHPCTL_ACT_REPLACE) {
			jw_key(&g.jw, "from");
			jw_obj_open(&g.jw);
			mthpctl_params_json(&g.jw, &r->have[a->have].params);
			jw_obj_close(&g.jw);
		}
		jw_kstr(&g.jw, "reason", why(r, a));
		jw_kbool(&g.jw, "done", r->done[i]);
		jw_obj_close(&g.jw);
	}
	jw_arr_close(&g.jw);
	jw_key(&g.jw, "dropins");
	jw_arr_open(&g.jw);
	for (i = 0; i < r->nd; i++) {
		jw_obj_open(&g.jw);
		jw_kstr(&g.jw, "unit", r->dropins[i].unit);
		jw_kstr(&g.jw, "action", !dropin_changes(&r->dropins[i]) ? "keep" :
			    r->dropins[i].want ? "write" : "remove");
		jw_obj_close(&g.jw);
	}
	jw_arr_close(&g.jw);
	if (r->error_code) {
		jw_kstr(&g.jw, "error", r->error);
		jw_ku64(&g.jw, "exit_code", r->error_code);
	}
	jw_obj_close(&g.jw);
}

static void report_plain(const struct run *r)
{
	size_t i, counts[MTHPCTL_ACT_FORGET + 1] = {}, dropins = 0;
	char desc[256], from[256];
	bool dry = r->args->dry_run;

	for (i = 0; i < r->nact; i++) {
		const struct mthpctl_action *a = &r->act[i];
		const char *what = dry ? mthpctl_action_name(a->kind) : r->done[i] ? past(a->kind) : NULL;
		const char *reason = why(r, a);

		if (!what)
			continue;	/* not reached: the error said where it stopped */
		counts[a->kind]++;
		if (a->want >= 0) {
			const struct mthpctl_want *w = &r->want[a->want];
			bool same = w->cgroup && !strcmp(w->cgroup, w->target);

			mthpctl_params_str(&w->params, desc, sizeof(desc));
			printf("%-9s %s%s%s%s: %s%s", what, w->target, same || !w->cgroup ? "" : " (",
			       same || !w->cgroup ? "" : w->cgroup, same || !w->cgroup ? "" : ")",
			       desc, w->private_obj ? ", private" : "");
			if (a->kind == MTHPCTL_ACT_REPLACE && r->have[a->have].have_params)
				printf(", was %s", mthpctl_params_str(&r->have[a->have].params, from, sizeof(from)));
			printf("%s%s\n", reason ? "; " : "", reason ? reason : "");
		} else {
			const struct mthpctl_applied *o = &r->applied[a->applied];

			printf("%-9s %s (cgroup id %llu): %s\n", what, o->target,
			       (unsigned long long)o->cgroup_id, reason);
		}
	}
	for (i = 0; i < r->nd; i++) {
		if (!dropin_changes(&r->dropins[i]))
			continue;
		dropins++;
		printf("%-9s %s/%s.d/%s\n", r->dropins[i].want ? (dry ? "write" : "wrote") :
		       (dry ? "remove" : "removed"), SYSTEMD_RUN_DIR, r->dropins[i].unit, DROPIN_NAME);
	}
	if (r->error_code) {
		printf("stopped at the error above: %zu attached, %zu replaced, %zu detached before it\n",
		       counts[MTHPCTL_ACT_ATTACH], counts[MTHPCTL_ACT_REPLACE], counts[MTHPCTL_ACT_DETACH]);
	} else if (!r->changes && !dropins) {
		printf("nothing to change (%zu %s as configured)\n", counts[MTHPCTL_ACT_KEEP],
		       counts[MTHPCTL_ACT_KEEP] == 1 ? "policy" : "policies");
	} else {
		printf("%s%zu to attach, %zu to replace, %zu to detach, %zu unchanged%s\n",
		       dry ? "dry run, nothing changed: " : "", counts[MTHPCTL_ACT_ATTACH],
		       counts[MTHPCTL_ACT_REPLACE], counts[MTHPCTL_ACT_DETACH], counts[MTHPCTL_ACT_KEEP],
		       dry ? "" : " (done)");
	}
}

static void run_free(struct run *r)
{
	config_free(&r->cfg);
	free(r->ent);
	free(r->want);
	free(r->cgpath);
	free(r->have);
	free(r->applied);
	free(r->act);
	free(r->done);
	free(r->dropins);
}

int cmd_apply(int argc, char **argv)
{
	struct apply_args a = {};
	struct run r = { .args = &a };
	char self[4096];
	ssize_t n;
	int ret, lock_fd = -1;
	size_t i;

	argp_parse(&argp, argc, argv, 0, NULL, &a);
	if (a.unit) {
		const char *reason;

		if (mthpctl_unit_name_check(a.unit, &reason))
			return mthpctl_error(MTHPCTL_EXIT_USAGE, "bad --unit '%s': %s", a.unit, reason);
	}
	/* the file first: a bad one is refused before anything else */
	ret = read_config(a.config, &r.cfg);
	if (ret)
		goto out;
	ret = mthpctl_check_caps();
	if (!ret)
		ret = mthpctl_check_bpffs();
	if (ret)
		goto out;
	if (a.unit) {
		for (i = 0; i < r.cfg.conf.n && strcmp(r.cfg.conf.e[i].target, a.unit); i++)
			;
		if (i == r.cfg.conf.n) {
			/* a drop-in the next full apply removes */
			if (g.json) {
				mthpctl_json_begin();
				jw_obj_open(&g.jw);
				jw_kstr(&g.jw, "unit", a.unit);
				jw_kbool(&g.jw, "configured", false);
				jw_obj_close(&g.jw);
			} else {
				printf("%s is not in the configuration: nothing to do\n", a.unit);
			}
			goto out;
		}
	}
	/* a dry run only reads the state file, which is replaced whole */
	lock_fd = a.dry_run ? -1 : lock_state();
	if (!a.dry_run && lock_fd < 0) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot lock %s/apply.lock: %s",
				    MTHPCTL_STATE_DIR, strerror(-lock_fd));
		goto out;
	}
	ret = resolve(&r);
	if (!ret)
		ret = gather(&r);
	if (ret)
		goto out;
	if (!a.unit && systemd_running()) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		mthpctl_dropin_text(n > 0 ? self : "/usr/sbin/mthpctl", r.dropin_text, sizeof(r.dropin_text));
		r.nd = plan_dropins(&r.cfg.conf, r.dropin_text, &r.dropins);
	}
	if (!a.dry_run) {
		ret = execute(&r);
		if (!ret)
			ret = sync_dropins(&r);
	}
	if (g.json)
		report_json(&r);
	else
		report_plain(&r);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	run_free(&r);
	return ret;
}
