// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl apply: the report of what it did (or, with --dry-run, would do). */
#include <stdio.h>
#include <string.h>

#include "apply.h"
#include "mthpctl.h"
#include "sysfs.h"

static const char *past(enum mthpctl_action_kind k)
{
	switch (k) {
	case MTHPCTL_ACT_ATTACH: return "attached";
	case MTHPCTL_ACT_REPLACE: return "replaced";
	case MTHPCTL_ACT_DETACH: return "detached";
	default: return mthpctl_action_name(k);
	}
}

static const char *why(const struct apply_run *r, const struct mthpctl_action *a)
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

void apply_report_json(const struct apply_run *r)
{
	struct mthpctl_host_sizes host;
	char src[4200];
	size_t i;

	mthpctl_read_host_sizes(&host);
	mthpctl_json_begin();
	jw_obj_open(&g.jw);
	jw_kbool(&g.jw, "dry_run", r->args->dry_run);
	jw_key(&g.jw, "config");
	jw_arr_open(&g.jw);
	for (i = 0; i < r->cfg.nfiles; i++)
		jw_str(&g.jw, r->cfg.files[i]);
	jw_arr_close(&g.jw);
	jw_ku64(&g.jw, "changes", r->changes);
	mthpctl_host_sizes_json(&g.jw, &host);
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
		if (a->want >= 0)
			mthpctl_size_list_json(&g.jw, "granted_sizes_kb",
					       mthpctl_policy_grants(&host, &r->want[a->want].params));
		jw_kstr(&g.jw, "reason", why(r, a));
		if (a->want >= 0 && r->warning[a->want][0])
			jw_kstr(&g.jw, "warning", r->warning[a->want]);
		jw_kbool(&g.jw, "done", r->done[i]);
		jw_obj_close(&g.jw);
	}
	jw_arr_close(&g.jw);
	jw_key(&g.jw, "dropins");
	jw_arr_open(&g.jw);
	for (i = 0; i < r->nd; i++) {
		jw_obj_open(&g.jw);
		jw_kstr(&g.jw, "unit", r->dropins[i].unit);
		jw_kstr(&g.jw, "action", !apply_dropin_changes(&r->dropins[i]) ? "keep" :
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

void apply_report_plain(const struct apply_run *r)
{
	size_t i, counts[MTHPCTL_ACT_FORGET + 1] = {}, dropins = 0;
	char desc[256], from[256], sizes[256];
	struct mthpctl_host_sizes host;
	bool dry = r->args->dry_run;
	__u64 grants;

	mthpctl_read_host_sizes(&host);
	for (i = 0; i < r->nw; i++)
		if (r->warning[i][0])
			fprintf(stderr, "mthpctl: warning: %s:%d: %s\n", r->ent[i]->file, r->ent[i]->line,
				r->warning[i]);
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
			/* what the policy gives beyond the host's default,
			 * where it is (or is to be) attached */
			grants = a->kind == MTHPCTL_ACT_SKIP ? 0 : mthpctl_policy_grants(&host, &w->params);
			if (grants)
				printf("; grants %s (left at madvise on this host)",
				       mthpctl_size_list(grants, "", sizes, sizeof(sizes)));
			printf("%s%s\n", reason ? "; " : "", reason ? reason : "");
		} else {
			const struct mthpctl_applied *o = &r->applied[a->applied];

			printf("%-9s %s (cgroup id %llu): %s\n", what, o->target,
			       (unsigned long long)o->cgroup_id, reason);
		}
	}
	for (i = 0; i < r->nd; i++) {
		if (!apply_dropin_changes(&r->dropins[i]))
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
