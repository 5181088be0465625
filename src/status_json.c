// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl status -j (--format=json): what status.c gathered, as one JSON
 * object; its keys are documented in mthpctl-status(8).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mthp_stats.h"
#include "mthpctl.h"
#include "status.h"
#include "sysfs.h"

static void jw_kbool_or_null(struct jw *w, const char *k, bool known, bool v)
{
	jw_key(w, k);
	if (known) jw_bool(w, v); else jw_null(w);
}

void status_kernel_json(struct jw *w, const struct status_env *e)
{
	jw_key(w, "kernel");
	jw_obj_open(w);
	/* what the kernel's BTF says: null where status did not read it
	 * (--cgroup) */
	jw_kbool_or_null(w, "btf", e->k.probed, e->k.btf);
	jw_kbool_or_null(w, "bpf_mthp_ops", e->k.probed, e->k.feat.mthp_ops);
	jw_kbool_or_null(w, "psi_kfunc", e->k.probed, e->k.feat.psi_kfunc);
	jw_kbool_or_null(w, "memcg_kfuncs", e->k.probed, e->k.feat.memcg_kfuncs);
	jw_kbool_or_null(w, "bpf_wq", e->k.probed, e->k.feat.wq);
	jw_kbool_or_null(w, "collapse_kfunc", e->k.probed, e->k.feat.collapse_kfunc);
	jw_kbool(w, "psi", e->psi);
	jw_kstr(w, "cgroup2_mount", e->cg2[0] ? e->cg2 : NULL);
	jw_kbool(w, "memory_controller", e->memcg);
	jw_kbool(w, "bpffs", e->bpffs);
	jw_key(w, "bpf_stats_enabled");
	if (e->bpf_stats >= 0) jw_bool(w, e->bpf_stats); else jw_null(w);
	jw_obj_close(w);
}

static void object_hash_json(struct jw *w, const char *key, bool known, __u64 hash)
{
	char id[MTHPCTL_OBJECT_ID_LEN];

	mthpctl_object_id(id, hash);
	jw_kstr(w, key, known ? id : NULL);
}

static void print_env_json(const struct status_env *e)
{
	struct jw *w = &g.jw;
	int i;
	size_t j;

	status_kernel_json(w, e);
	/* the built-in policy's object this mthpctl attaches: a policy whose
	 * object_hash differs was attached by another build */
	object_hash_json(w, "builtin_object_hash", true, e->object_hash);
	jw_key(w, "thp");
	jw_obj_open(w);
	jw_kstr(w, "enabled", e->thp_enabled[0] ? e->thp_enabled : NULL);
	jw_kstr(w, "defrag", e->thp_defrag[0] ? e->thp_defrag : NULL);
	jw_key(w, "sizes");
	jw_arr_open(w);
	for (i = 0; i < e->nr_hp; i++) {
		jw_obj_open(w);
		jw_ku64(w, "size_kb", e->hp[i].size_kb);
		jw_kstr(w, "enabled", e->hp[i].has_enabled ? e->hp[i].enabled : NULL);
		if (e->hp_counters) {
			jw_key(w, "stats");
			jw_obj_open(w);
			for (j = 0; j < e->hp[i].nr_stats; j++)
				jw_ku64(w, e->hp[i].stats[j].name, e->hp[i].stats[j].value);
			jw_obj_close(w);
		}
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_obj_close(w);
}

static void counters_json(struct jw *w, const struct mthpctl_counters *c)
{
	__u32 r, t;

	jw_key(w, "calls");
	jw_obj_open(w);
	for (t = 0; t < MTHPCTL_NR_TVA; t++)
		jw_ku64(w, mthpctl_tva_name(t), c->calls[t]);
	jw_obj_close(w);
	jw_key(w, "fallbacks");
	jw_obj_open(w);
	for (r = 1; r < MTHPCTL_NR_REASON; r++) {
		jw_key(w, mthpctl_reason_name(r));
		jw_obj_open(w);
		for (t = 0; t < MTHPCTL_NR_TVA; t++)
			jw_ku64(w, mthpctl_tva_name(t), c->fallbacks[r][t]);
		jw_obj_close(w);
	}
	jw_obj_close(w);
}

static void jw_ku64_or_null(struct jw *w, const char *k, bool ok, __u64 v)
{
	jw_key(w, k);
	if (ok) jw_u64(w, v); else jw_null(w);
}

static void sample_json(struct jw *w, const struct mthpctl_state *s)
{
	jw_obj_open(w);
	jw_ku64(w, "samples", s->nr_samples);
	jw_ku64(w, "stall_per_window_ns", s->stall_rate_ns);
	jw_kbool(w, "stall_valid", s->flags & MTHPCTL_SAMPLE_STALL);
	jw_ku64(w, "usage_bytes", s->usage);
	jw_ku64(w, "usage_peak_bytes", s->usage_peak);
	jw_kbool(w, "usage_valid", s->flags & MTHPCTL_SAMPLE_USAGE);
	jw_kbool(w, "pressure", s->pressure);
	jw_kbool(w, "low_usage", s->low_usage);
	jw_ku64(w, "growth_per_window_bytes", s->growth);
	/* to the nearest memory.high or memory.max of it and its ancestors */
	jw_ku64_or_null(w, "headroom_bytes", s->headroom != MTHPCTL_NO_LIMIT, s->headroom);
	jw_kbool(w, "at_limit", mthpctl_tight(s->flags, s->usage, s->headroom));
	jw_key(w, "ladder");
	jw_obj_open(w);
	jw_ku64(w, "rung_kb", (mthpctl_page_size() << s->rung) >> 10);
	jw_ku64(w, "good_rung_kb", s->good_rung ?
		(mthpctl_page_size() << (s->good_rung - 1)) >> 10 : 0);
	jw_ku64(w, "backoff_windows", s->backoff);
	jw_kbool(w, "trial", s->probe_from != MTHPCTL_NO_PROBE && s->pressure);
	jw_ku64(w, "steps_down", s->steps_down);
	jw_ku64(w, "steps_up", s->steps_up);
	jw_obj_close(w);
	jw_obj_close(w);
}

/* A policy object's "totals" object. */
static void totals_json(struct jw *w, const struct status_policy *p)
{
	jw_obj_open(w);
	counters_json(w, &p->totals.cnt);
	jw_ku64(w, "samples", p->totals.samples);
	jw_ku64(w, "psi_errors", p->totals.psi_errors);
	jw_ku64(w, "memcg_errors", p->totals.memcg_errors);
	jw_ku64(w, "entries_created", p->totals.entries_created);
	jw_ku64(w, "queue_full", p->totals.queue_full);
	jw_ku64(w, "gone", p->totals.gone);
	jw_ku64(w, "sampler_runs", p->totals.sampler_runs);
	jw_ku64(w, "wq_errors", p->totals.wq_errors);
	jw_ku64(w, "no_state", p->totals.no_state);
	jw_obj_close(w);
}

/*
 * The "totals" of each policy as JSON text, rendered once per policy
 * object: every cgroup linked to one object shows its counters, some 45
 * numbers, most of a policy's JSON (10,000 cgroups on one object would
 * format them 10,000 times). text[i]: pol[i]'s, NULL where it has none;
 * len[i] its length; owner[i]: the policy whose entry frees the text.
 */
struct totals_texts {
	char **text;
	size_t *len;
	bool *owner;
};

static void free_totals(struct totals_texts *t, size_t n)
{
	size_t i;

	for (i = 0; t->text && t->owner && i < n; i++)
		if (t->owner[i])
			free(t->text[i]);
	free(t->text);
	free(t->len);
	free(t->owner);
	memset(t, 0, sizeof(*t));
}

static int cmp_totals(const void *a, const void *b)
{
	const struct status_policy *const *x = a, *const *y = b;
	__u32 mx = (*x)->totals_map_id, my = (*y)->totals_map_id;

	return mx < my ? -1 : mx > my;
}

/* t for the n policies of pol, w: the writer at a policy's depth. false:
 * no memory (t empty: each policy then writes its own). */
static bool render_totals(const struct jw *w, const struct status_policy *pol, size_t n,
			  struct totals_texts *t)
{
	const struct status_policy **by_map = malloc(n * sizeof(*by_map));
	size_t i, k;
	struct jw sub;
	FILE *f;

	t->text = calloc(n, sizeof(*t->text));
	t->len = calloc(n, sizeof(*t->len));
	t->owner = calloc(n, sizeof(*t->owner));
	if (!by_map || !t->text || !t->len || !t->owner)
		goto fail;
	for (i = 0; i < n; i++)
		by_map[i] = &pol[i];
	qsort(by_map, n, sizeof(*by_map), cmp_totals);
	for (i = 0; i < n; i++) {
		const struct status_policy *p = by_map[i];

		k = p - pol;
		if (!p->have_totals)
			continue;
		if (i && p->totals_map_id && by_map[i - 1]->have_totals &&
		    p->totals_map_id == by_map[i - 1]->totals_map_id) {
			t->text[k] = t->text[by_map[i - 1] - pol];
			t->len[k] = t->len[by_map[i - 1] - pol];
			continue;
		}
		/* policies nest at one depth: any one's writer state fits */
		f = open_memstream(&t->text[k], &t->len[k]);
		if (!f)
			goto fail;
		t->owner[k] = true;
		jw_init_value_of(&sub, f, w);
		totals_json(&sub, p);
		if (fclose(f))
			goto fail;
	}
	free(by_map);
	return true;
fail:
	free(by_map);
	free_totals(t, n);
	return false;
}

/* "hook" and "totals" of a policy, built-in or the user's; totals: its
 * "totals" rendered already (render_totals()), or NULL. */
static void hook_totals_json(const struct status_env *e, const struct status_policy *p,
			     const char *totals, size_t totals_len)
{
	struct jw *w = &g.jw;
	bool stats = e->bpf_stats > 0 && p->prog_id;

	jw_key(w, "hook");
	jw_obj_open(w);
	jw_ku64_or_null(w, "prog_id", p->prog_id, p->prog_id);
	jw_ku64_or_null(w, "struct_ops_map_id", p->link_ok && p->link.map_id, p->link.map_id);
	/* every bpf_mthp_ops in effect for the cgroup, in call order */
	jw_key(w, "effective_map_ids");
	if (p->nr_effective >= 0) {
		int i, shown = p->nr_effective < MTHPCTL_EFFECTIVE_SHOWN ?
			       p->nr_effective : MTHPCTL_EFFECTIVE_SHOWN;

		jw_arr_open(w);
		for (i = 0; i < shown; i++)
			jw_u64(w, p->effective[i]);
		jw_arr_close(w);
	} else {
		jw_null(w);
	}
	jw_ku64_or_null(w, "run_cnt", stats, p->run_cnt);
	jw_ku64_or_null(w, "run_time_ns", stats, p->run_time_ns);
	jw_key(w, "ns_per_call");
	if (stats && p->run_cnt) jw_double(w, (double)p->run_time_ns / p->run_cnt); else jw_null(w);
	jw_obj_close(w);
	jw_key(w, "totals");
	if (p->have_totals && totals)
		jw_raw(w, totals, totals_len);
	else if (p->have_totals)
		totals_json(w, p);
	else
		jw_null(w);
}

/* A policy of the user's (attach --object): its object, no parameters or
 * state of the built-in policies. */
static void object_json(const struct status_policy *p)
{
	struct jw *w = &g.jw;

	jw_kstr(w, "policy", "object");
	jw_key(w, "object");
	jw_obj_open(w);
	jw_kstr(w, "file", p->object->file);
	jw_kstr(w, "ops", p->object->ops);
	jw_ku64(w, "size", p->object->size);
	jw_ku64(w, "hash", p->object->hash);
	/* false: no "totals" of mthp_ops.h's convention, "totals" is null */
	jw_kbool(w, "counters_known", p->object->flags & MTHPCTL_OBJECT_STATS);
	jw_obj_close(w);
}

/* What the policy changes against the host default: null where status
 * does not know what it allows. */
static void sizes_json(const struct status_env *e, const struct status_policy *p)
{
	struct jw *w = &g.jw;
	__u64 granted, taken;

	if (!status_knows_allowed(p)) {
		jw_key(w, "granted_sizes_kb");
		jw_null(w);
		jw_key(w, "taken_away_sizes_kb");
		jw_null(w);
		return;
	}
	status_host_diff(e, p, &granted, &taken);
	mthpctl_size_list_json(w, "granted_sizes_kb", granted);
	mthpctl_size_list_json(w, "taken_away_sizes_kb", taken);
}

static void print_policy_json(const struct status_env *e, const struct status_policy *p,
			      const char *totals, size_t totals_len)
{
	struct jw *w = &g.jw;
	__u32 reason = MTHPCTL_REASON_NONE;
	__u64 mask = 0;
	int o;

	if (status_knows_allowed(p))
		mask = status_allowed_mask(e, p, &reason);
	jw_obj_open(w);
	jw_kstr(w, "cgroup", p->cgroup);
	jw_ku64(w, "cgroup_id", p->id);
	jw_kstr(w, "pin", p->dir);
	jw_ku64_or_null(w, "link_id", p->link_ok, p->link.id);
	jw_kbool(w, "attached", p->attached);
	/* cgroups linked to this policy object: the counters are their sum */
	jw_ku64(w, "object_cgroups", p->object_cgroups);
	/* the object it runs (mthpctl_builtin_object_hash() of the build that
	 * attached it, or the user's file's hash); null: not known */
	object_hash_json(w, "object_hash", p->have_object_hash, p->object_hash);
	/* its processes, and those with THP disabled by prctl (no policy
	 * gives them large folios); null: not counted */
	jw_ku64_or_null(w, "processes", p->have_thp_off, p->thp_off.procs);
	jw_ku64_or_null(w, "thp_disabled_processes", p->have_thp_off, p->thp_off.disabled);
	if (p->have_object) {
		object_json(p);
		hook_totals_json(e, p, totals, totals_len);
		jw_obj_close(w);
		return;
	}
	if (p->have_params)
		mthpctl_params_json(w, &p->params);
	jw_key(w, "allowed_sizes_kb");
	jw_arr_open(w);
	if (status_knows_allowed(p)) {
		jw_u64(w, mthpctl_page_size() >> 10);
		for (o = 1; o < 64; o++)
			if (mask & (1ULL << o))
				jw_u64(w, (mthpctl_page_size() << o) >> 10);
	}
	jw_arr_close(w);
	sizes_json(e, p);
	jw_kstr(w, "restriction", mthpctl_reason_name(p->have_entry ?
			mthpctl_restriction(&p->entry.state) : MTHPCTL_REASON_NO_SAMPLE));
	/* whose state "sample" is: the cgroup's own or its busiest descendant's */
	jw_key(w, "sample_cgroup");
	if (p->have_entry)
		jw_str(w, p->entry_of);
	else
		jw_null(w);
	jw_key(w, "sample");
	if (p->have_entry)
		sample_json(w, &p->entry.state);
	else
		jw_null(w);
	jw_key(w, "live");
	jw_obj_open(w);
	jw_key(w, "memory_full_avg10");
	if (p->live_psi) jw_double(w, p->psi.full.avg10 / 100.0); else jw_null(w);
	jw_ku64_or_null(w, "anon_shmem_bytes", p->live_usage, p->usage);
	jw_obj_close(w);
	/* cgroups of the subtree that hold state now (null: not known) */
	jw_ku64_or_null(w, "cgroups_tracked", p->cg_state >= 0, p->cg_state);
	jw_ku64_or_null(w, "cgroups_in_subtree", p->cg_subtree >= 0, p->cg_subtree);
	hook_totals_json(e, p, totals, totals_len);
	jw_obj_close(w);
}

void status_print_json(const struct status_env *e, const struct status_policy *pol, size_t n)
{
	struct totals_texts t = {};
	bool rendered;
	size_t i;

	mthpctl_json_begin();
	jw_obj_open(&g.jw);
	print_env_json(e);
	jw_kbool(&g.jw, "policies_readable", e->root || n);
	jw_key(&g.jw, "policies");
	jw_arr_open(&g.jw);
	if (n) {
		/* the writer as it is inside a policy, at its "totals" key */
		struct jw at = g.jw;

		at.depth += 1;
		rendered = render_totals(&at, pol, n, &t);
	} else {
		rendered = false;
	}
	for (i = 0; i < n; i++)
		print_policy_json(e, &pol[i], rendered ? t.text[i] : NULL, rendered ? t.len[i] : 0);
	jw_arr_close(&g.jw);
	jw_obj_close(&g.jw);
	if (rendered)
		free_totals(&t, n);
}
