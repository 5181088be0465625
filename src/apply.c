// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl apply: read the configuration (mthpctl.conf(5)), resolve its
 * targets, plan against what is attached and what apply attached before
 * (plan.c), then attach, replace and detach, and keep the record of what
 * it attached in /run/mthpctl/applied. The steps' files: apply.h.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "cgroup.h"
#include "mthpctl.h"
#include "pin.h"
#include "status.h"

enum { OPT_DRY_RUN = 'n', OPT_CONFIG = 'f', OPT_UNIT = 'u' };

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

/* --- the run -------------------------------------------------------------- */

static int resolve(struct apply_run *r)
{
	struct mthpctl_conf *c = &r->cfg.conf;
	enum mthpctl_cg_result cr;
	size_t i, k, n = 0;
	char why[4400], memory_thp[64];
	struct mthpctl_thp_off off;
	int ret, e;

	r->ent = calloc(c->n + 1, sizeof(*r->ent));
	r->want = calloc(c->n + 1, sizeof(*r->want));
	r->cgpath = calloc(c->n + 1, sizeof(*r->cgpath));
	r->warning = calloc(c->n + 1, sizeof(*r->warning));
	if (!r->ent || !r->want || !r->cgpath || !r->warning)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	for (i = 0; i < c->n; i++) {
		struct mthpctl_conf_entry *ce = &c->e[i];
		struct mthpctl_want *w = &r->want[n];

		if (r->args->unit && strcmp(ce->target, r->args->unit))
			continue;
		if (ce->is_unit) {
			ret = apply_unit_cgroup(ce, r->cgpath[n], sizeof(r->cgpath[n]),
						memory_thp, sizeof(memory_thp));
			if (ret)
				return ret;
			/* the unit's processes refuse what the section grants */
			mthpctl_memory_thp_warning(ce->target, memory_thp, &ce->params,
						   r->warning[n], sizeof(r->warning[n]));
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
			/* its processes that refuse what it grants (MemoryTHP=
			 * disable, warned of above, says why already) */
			if (!r->warning[n][0] && !mthpctl_thp_off_subtree(w->cgroup, &off))
				mthpctl_thp_off_warning(w->cgroup, &off, &ce->params, r->warning[n],
							sizeof(r->warning[n]));
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

static int gather(struct apply_run *r)
{
	struct status_policy *pol = NULL;
	size_t n, i, bad = 0;
	char *text;

	n = status_gather_pin_dirs(0, &pol);
	r->have = calloc(n + 1, sizeof(*r->have));
	if (!r->have) {
		status_policies_free(pol, n);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	}
	for (i = 0; i < n; i++) {
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
	status_policies_free(pol, n);
	text = apply_read_all(MTHPCTL_STATE_FILE);
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
static int execute(struct apply_run *r)
{
	struct mthpctl_applied *next;
	struct mthpctl_attach_result res;
	char pin[4200];
	size_t i, nn = 0;
	bool stopped = false;
	int ret = 0, err;
	/* in JSON the error goes into apply's one object */
	const struct mthpctl_err_sink into_report = { r->error, sizeof(r->error) };
	const struct mthpctl_err_sink *sink = g.json ? &into_report : NULL;
	/* one session for every attach: a node's worth of cgroups of a few
	 * parameter sets costs a link and pins each, not a load */
	struct mthpctl_attach_session *session;

	next = calloc(r->nact + r->na + 1, sizeof(*next));
	session = mthpctl_attach_session_new();
	if (!next || !session) {
		free(next);
		mthpctl_attach_session_free(session);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
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
			ret = mthpctl_attach_in(session, w->cgroup, &w->params,
						(a->kind == MTHPCTL_ACT_REPLACE ? MTHPCTL_ATTACH_REPLACE : 0) |
						(w->private_obj ? MTHPCTL_ATTACH_PRIVATE : 0), &res, sink);
			if (!ret)
				rec->link_id = res.link_id;
			break;
		case MTHPCTL_ACT_KEEP:
			rec->link_id = r->have[a->have].link_id;
			break;
		case MTHPCTL_ACT_DETACH:
			ret = mthpctl_detach_id(old->cgroup_id, old->target, sink);
			break;
		case MTHPCTL_ACT_FORGET:
			/* the pins of a link whose cgroup is gone: removed
			 * (a pin directory of another cgroup is not apply's) */
			if (!mthpctl_pin_dir(MTHPCTL_PIN_ROOT, old->cgroup_id, NULL, pin, sizeof(pin)) &&
			    !access(pin, F_OK))
				mthpctl_detach_id(old->cgroup_id, old->target, sink);
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
	mthpctl_attach_session_free(session);
	err = apply_write_state(next, nn);
	free(next);
	if (err && !ret)
		ret = r->error_code = mthpctl_error(MTHPCTL_EXIT_FAIL, "policies applied, but writing %s failed: %s",
						    MTHPCTL_STATE_FILE, strerror(-err));
	return ret;
}

static void run_free(struct apply_run *r)
{
	apply_config_free(&r->cfg);
	free(r->ent);
	free(r->want);
	free(r->cgpath);
	free(r->warning);
	free(r->have);
	free(r->applied);
	free(r->act);
	free(r->done);
	free(r->dropins);
}

int cmd_apply(int argc, char **argv)
{
	struct apply_args a = {};
	struct apply_run r = { .args = &a };
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
	ret = apply_read_config(a.config, &r.cfg);
	if (ret)
		goto out;
	ret = mthpctl_check_caps(NULL);
	if (!ret)
		ret = mthpctl_check_bpffs(NULL);
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
	lock_fd = a.dry_run ? -1 : apply_lock_state();
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
	if (!a.unit && apply_systemd_running()) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		mthpctl_dropin_text(n > 0 ? self : "/usr/sbin/mthpctl", r.dropin_text, sizeof(r.dropin_text));
		r.nd = apply_plan_dropins(&r.cfg.conf, r.dropin_text, &r.dropins);
	}
	if (!a.dry_run) {
		ret = execute(&r);
		if (!ret)
			ret = apply_sync_dropins(r.dropins, r.nd, r.dropin_text);
	}
	if (g.json)
		apply_report_json(&r);
	else
		apply_report_plain(&r);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	run_free(&r);
	return ret;
}
