// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl status --format=prometheus: what status shows, as the Prometheus
 * text exposition format (version 0.0.4), for node_exporter's textfile
 * collector or any scraper. Every series of a policy carries the labels
 * cgroup (its path), policy (auto, fixed, never, simple) and object (the id of the
 * loaded policy object, its struct_ops map: cgroups attached with equal
 * parameters share one and its counters; max by (object) counts each
 * object once). Names follow the
 * Prometheus conventions: base units (bytes, seconds), _total for
 * counters, _info for a constant 1 that carries labels. A value status does
 * not know (no sample yet, bpf_stats off) is left out rather than written
 * as 0, so that a graph shows a gap and not a false zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "sysfs.h"

/* One metric family: its # HELP and # TYPE lines, once per run. */
struct family {
	const char *name, *type, *help;
};

static const struct family
	f_info = { "mthpctl_policy_info", "gauge",
		   "A policy attached by mthpctl; its parameters in the params label" },
	f_attached = { "mthpctl_policy_attached", "gauge",
		       "1 while the policy's link is attached to its cgroup" },
	f_calls = { "mthpctl_hook_calls_total", "counter",
		    "Calls of the policy's choose_orders, by caller (tva)" },
	f_fallbacks = { "mthpctl_fallbacks_total", "counter",
			"Calls whose answer narrowed the orders offered, by reason and caller" },
	f_restricted = { "mthpctl_restricted", "gauge",
			 "1 for the reason the policy narrows page faults now (none: it does not)" },
	f_allowed = { "mthpctl_allowed_max_size_bytes", "gauge",
		      "Largest folio size the policy allows page faults now" },
	f_granted = { "mthpctl_size_granted", "gauge",
		      "1 if the policy grants this size, left at madvise on the host, to page faults now" },
	f_taken = { "mthpctl_size_taken_away", "gauge",
		    "1 if the policy takes this size, at always on the host, from page faults now" },
	f_stall = { "mthpctl_memory_full_stall_ratio", "gauge",
		    "Share of time the cgroup's tasks all stalled on memory, as the policy last sampled it" },
	f_usage = { "mthpctl_anon_shmem_bytes", "gauge",
		    "Anonymous and shmem memory of the cgroup, as the policy last sampled it" },
	f_headroom = { "mthpctl_headroom_bytes", "gauge",
		       "Bytes to the nearest memory.high or memory.max of the cgroup and its ancestors" },
	f_samples = { "mthpctl_samples_total", "counter",
		      "Samples of stall and usage the policy took, all its cgroups" },
	f_tracked = { "mthpctl_cgroups_tracked", "gauge",
		      "Cgroups of the subtree that hold state in the policy's storage" },
	f_processes = { "mthpctl_processes", "gauge",
			"Processes in the cgroup and its descendants" },
	f_thp_off = { "mthpctl_thp_disabled_processes", "gauge",
		      "Processes of the cgroup with THP disabled by prctl(PR_SET_THP_DISABLE), "
		      "which no policy can give large folios" },
	f_effective = { "mthpctl_policies_in_effect", "gauge",
			"bpf_mthp_ops policies in effect for the cgroup, this one and those above" },
	f_runs = { "mthpctl_hook_runs_total", "counter",
		   "Runs of choose_orders counted by the kernel (kernel.bpf_stats_enabled=1 only)" },
	f_run_time = { "mthpctl_hook_run_seconds_total", "counter",
		       "Time spent in choose_orders (kernel.bpf_stats_enabled=1 only)" };

static void family(const struct family *f)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			printf("\\%c", *v);
		else if (*v == '\n')
			printf("\\n");
		else
			putchar(*v);
	}
}

/* cgroup="...",policy="...",object="..." of a policy (malloc'd; NULL: no
 * memory), written once: every family repeats it, some 60 series a policy */
static char *policy_labels(const struct status_policy *p)
{
	const char *v = p->cgroup ? p->cgroup : "";
	char *esc = malloc(2 * strlen(v) + 1), *e = esc, *labels;

	if (!esc)
		return NULL;
	for (; *v; v++) {	/* as label_value() writes it */
		if (*v == '\\' || *v == '"' || *v == '\n')
			*e++ = '\\';
		*e++ = *v == '\n' ? 'n' : *v;
	}
	*e = '\0';
	/* cgroups attached with equal parameters share one object and its
	 * counters: max by (object) counts them once */
	if (asprintf(&labels, "cgroup=\"%s\",policy=\"%s\",object=\"%u\"", esc,
		     p->have_params ? mthpctl_policy_name(p->params.policy) :
		     p->have_object ? "object" : "unknown", p->link_ok ? p->link.map_id : 0) < 0)
		labels = NULL;
	free(esc);
	return labels;
}

/* name{labels[,extra]} */
static void series(const struct family *f, const char *labels, const char *extra)
{
	printf("%s{%s%s%s} ", f->name, labels, extra ? "," : "", extra ? extra : "");
}

/* Which value a family takes for one policy; false: not known, left out. */
typedef bool (*value_fn)(const struct status_env *e, const struct status_policy *p, double *v);

static bool v_attached(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = p->attached;
	return true;
}

static bool v_allowed(const struct status_env *e, const struct status_policy *p, double *v)
{
	__u32 reason = MTHPCTL_REASON_NONE;
	__u64 mask;
	int o = 0;

	if (!status_knows_allowed(p))
		return false;
	mask = status_allowed_mask(e, p, &reason);
	while (mask >> (o + 1))
		o++;
	*v = (double)(mthpctl_page_size() << (mask ? o : 0));
	return true;
}

static bool v_stall(const struct status_env *e, const struct status_policy *p, double *v)
{
	const struct mthpctl_state *s = &p->entry.state;

	if (!p->have_entry || !(s->flags & MTHPCTL_SAMPLE_STALL) || !p->params.window_ns)
		return false;
	*v = (double)s->stall_rate_ns / p->params.window_ns;
	return true;
}

static bool v_usage(const struct status_env *e, const struct status_policy *p, double *v)
{
	if (!p->have_entry || !(p->entry.state.flags & MTHPCTL_SAMPLE_USAGE))
		return false;
	*v = (double)p->entry.state.usage;
	return true;
}

static bool v_headroom(const struct status_env *e, const struct status_policy *p, double *v)
{
	if (!p->have_entry || p->entry.state.headroom == MTHPCTL_NO_LIMIT)
		return false;
	*v = (double)p->entry.state.headroom;
	return true;
}

static bool v_samples(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = (double)p->totals.samples;
	return p->have_totals;
}

static bool v_tracked(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = (double)p->cg_state;
	return p->cg_state >= 0;
}

static bool v_processes(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = p->thp_off.procs;
	return p->have_thp_off;
}

static bool v_thp_off(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = p->thp_off.disabled;
	return p->have_thp_off;
}

static bool v_effective(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = p->nr_effective;
	return p->nr_effective >= 0;
}

static bool v_runs(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = (double)p->run_cnt;
	return e->bpf_stats > 0 && p->prog_id;
}

static bool v_run_time(const struct status_env *e, const struct status_policy *p, double *v)
{
	*v = p->run_time_ns / 1e9;
	return e->bpf_stats > 0 && p->prog_id;
}

/* A family with one series per policy, for those whose value is known. */
static void per_policy(const struct family *f, value_fn fn, const struct status_env *e,
		       const struct status_policy *pol, char *const *labels, size_t n)
{
	size_t i;
	double v;

	family(f);
	for (i = 0; i < n; i++) {
		if (!fn(e, &pol[i], &v))
			continue;
		series(f, labels[i], NULL);
		printf("%.17g\n", v);
	}
}

/*
 * One series per policy and host size in SIZES (a size_bytes label): 1 if
 * the policy grants it (TAKEN 0) or takes it away (TAKEN 1) now. Policies
 * whose answer status does not know are left out.
 */
static void per_size(const struct family *f, __u64 sizes, bool taken, const struct status_env *e,
		     const struct status_policy *pol, char *const *labels, size_t n)
{
	char extra[64];
	__u64 granted, removed, which;
	size_t i;
	int o;

	family(f);
	for (i = 0; i < n; i++) {
		if (!status_knows_allowed(&pol[i]))
			continue;
		status_host_diff(e, &pol[i], &granted, &removed);
		which = taken ? removed : granted;
		for (o = 1; o < 64; o++) {
			if (!(sizes & (1ULL << o)))
				continue;
			snprintf(extra, sizeof(extra), "size_bytes=\"%llu\"",
				 (unsigned long long)(mthpctl_page_size() << o));
			series(f, labels[i], extra);
			printf("%d\n", !!(which & (1ULL << o)));
		}
	}
}

int status_print_prometheus(const struct status_env *e, const struct status_policy *pol, size_t n)
{
	char desc[256], extra[96], **labels;
	char id[MTHPCTL_OBJECT_ID_LEN];
	__u32 reason, r, t;
	size_t i;

	labels = calloc(n + 1, sizeof(*labels));
	for (i = 0; labels && i < n; i++)
		if (!(labels[i] = policy_labels(&pol[i])))
			break;
	if (!labels || i < n) {
		while (labels && i--)
			free(labels[i]);
		free(labels);
		return -ENOMEM;
	}
	family(&f_info);
	for (i = 0; i < n; i++) {
		if (!pol[i].have_params)
			continue;
		printf("%s{cgroup=\"", f_info.name);
		label_value(pol[i].cgroup ? pol[i].cgroup : "");
		printf("\",policy=\"%s\",object=\"%u\",params=\"", mthpctl_policy_name(pol[i].params.policy),
		       pol[i].link_ok ? pol[i].link.map_id : 0);
		label_value(mthpctl_params_str(&pol[i].params, desc, sizeof(desc)));
		mthpctl_object_id(id, pol[i].object_hash);
		printf("\",object_hash=\"%s\"} 1\n", pol[i].have_object_hash ? id : "");
	}
	per_policy(&f_attached, v_attached, e, pol, labels, n);

	family(&f_calls);
	for (i = 0; i < n; i++)
		for (t = 0; pol[i].have_totals && t < MTHPCTL_NR_TVA; t++) {
			snprintf(extra, sizeof(extra), "tva=\"%s\"", mthpctl_tva_name(t));
			series(&f_calls, labels[i], extra);
			printf("%llu\n", (unsigned long long)pol[i].totals.cnt.calls[t]);
		}
	family(&f_fallbacks);
	for (i = 0; i < n; i++)
		for (r = 1; pol[i].have_totals && r < MTHPCTL_NR_REASON; r++)
			for (t = 0; t < MTHPCTL_NR_TVA; t++) {
				snprintf(extra, sizeof(extra), "reason=\"%s\",tva=\"%s\"",
					 mthpctl_reason_name(r), mthpctl_tva_name(t));
				series(&f_fallbacks, labels[i], extra);
				printf("%llu\n", (unsigned long long)pol[i].totals.cnt.fallbacks[r][t]);
			}

	/* one series per reason, 1 for the current one: a graph per reason
	 * and a sum that is always 1 */
	family(&f_restricted);
	for (i = 0; i < n; i++) {
		if (!status_knows_allowed(&pol[i]))
			continue;
		reason = MTHPCTL_REASON_NONE;
		status_allowed_mask(e, &pol[i], &reason);
		for (r = 0; r < MTHPCTL_NR_REASON; r++) {
			snprintf(extra, sizeof(extra), "reason=\"%s\"", mthpctl_reason_name(r));
			series(&f_restricted, labels[i], extra);
			printf("%d\n", r == reason);
		}
	}
	per_policy(&f_allowed, v_allowed, e, pol, labels, n);
	per_size(&f_granted, e->host.madvise, false, e, pol, labels, n);
	per_size(&f_taken, e->host.always, true, e, pol, labels, n);
	per_policy(&f_stall, v_stall, e, pol, labels, n);
	per_policy(&f_usage, v_usage, e, pol, labels, n);
	per_policy(&f_headroom, v_headroom, e, pol, labels, n);
	per_policy(&f_samples, v_samples, e, pol, labels, n);
	per_policy(&f_tracked, v_tracked, e, pol, labels, n);
	per_policy(&f_processes, v_processes, e, pol, labels, n);
	per_policy(&f_thp_off, v_thp_off, e, pol, labels, n);
	per_policy(&f_effective, v_effective, e, pol, labels, n);
	per_policy(&f_runs, v_runs, e, pol, labels, n);
	per_policy(&f_run_time, v_run_time, e, pol, labels, n);
	for (i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	return 0;
}
