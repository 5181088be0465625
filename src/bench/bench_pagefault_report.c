// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench pagefault: the figures and the report. The runs of each
 * column (mode, or the --hook-cost floor) become spreads of ns per 4K
 * page, per-round ratios against always and never, the hook's ns per call
 * and the counters; bench_report() writes them as JSON or text.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_pagefault.h"
#include "mthpctl.h"
#include "parse.h"

static void med_counters(const struct pf_run *runs, int n, struct bench_counters *d)
{
	__u64 v[PF_MAX_REPEATS];
	int s, k, i, m, first = -1;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++)
		if (runs[i].done && first < 0)
			first = i;
	if (first < 0)
		return;
	*d = runs[first].delta;
	for (s = 0; s < d->nr; s++)
		for (k = 0; k < BENCH_NR_CNT; k++) {
			for (i = 0, m = 0; i < n; i++)
				if (runs[i].done)
					v[m++] = runs[i].delta.v[s][k];
			d->v[s][k] = bench_median_u64(v, m);
		}
}

void pf_compute(struct pf_report *p, int rounds)
{
	const struct bench_opts *o = p->o;
	struct pf_run (*runs)[PF_MAX_REPEATS] = p->runs;
	struct pf_col *cols = p->cols;
	int m, rep;

	memset(cols, 0, PF_NR_COLS * sizeof(*cols));
	for (m = 0; m < p->ncols; m++) {
		double ns[PF_MAX_REPEATS], al[PF_MAX_REPEATS], nv[PF_MAX_REPEATS];
		double cn[PF_MAX_REPEATS];
		__u64 calls[PF_MAX_REPEATS];
		struct bench_memstat ms[PF_MAX_REPEATS];
		struct bench_folios fo[PF_MAX_REPEATS];
		int nc = 0, k;

		for (rep = 0; rep < rounds; rep++) {
			struct pf_run *r = &runs[m][rep];

			ns[rep] = r->done ? r->ns_page : NAN;
			al[rep] = runs[BENCH_ALWAYS][rep].done ? runs[BENCH_ALWAYS][rep].ns_page : NAN;
			nv[rep] = runs[BENCH_NEVER][rep].done ? runs[BENCH_NEVER][rep].ns_page : NAN;
			cn[rep] = r->done && r->hook && r->calls ? (double)r->run_ns / r->calls : NAN;
			if (r->done) {
				for (k = 0; k < BENCH_NR_ORDERS; k++)
					if (r->folios.bytes[k] && (4U << k) > cols[m].largest_kb)
						cols[m].largest_kb = 4U << k;
				fo[cols[m].n] = r->folios;
				ms[cols[m].n++] = r->ms;
				if (r->hook)
					calls[nc++] = r->calls;
			}
		}
		bench_spread(ns, rounds, &cols[m].ns);
		bench_ratio_spread(ns, al, rounds, &cols[m].ratio);
		bench_ratio_spread(ns, nv, rounds, &cols[m].ratio_never);
		bench_spread(cn, rounds, &cols[m].call_ns);
		cols[m].calls = bench_median_u64(calls, nc);
		bench_memstat_median(ms, cols[m].n, &cols[m].ms);
		bench_folios_median(fo, cols[m].n, &cols[m].f);
		med_counters(runs[m], rounds, &cols[m].d);
	}
	/* policy ns/call over floor ns/call, per round */
	{
		double pn[PF_MAX_REPEATS], fn[PF_MAX_REPEATS];

		for (rep = 0; rep < rounds; rep++) {
			struct pf_run *x = &runs[BENCH_POLICY][rep], *f = &runs[PF_FLOOR][rep];

			pn[rep] = x->done && x->hook && x->calls ? (double)x->run_ns / x->calls : NAN;
			fn[rep] = o->pf_hook_cost && f->done && f->hook && f->calls ?
				  (double)f->run_ns / f->calls : NAN;
		}
		bench_ratio_spread(pn, fn, rounds, &p->hook_ratio);
		for (rep = 0; rep < rounds; rep++) {
			struct pf_run *x = &runs[BENCH_POLICY][rep], *f = &runs[PF_FLOOR][rep];

			pn[rep] = x->done ? x->ns_page : NAN;
			fn[rep] = o->pf_hook_cost && f->done ? f->ns_page : NAN;
		}
		bench_ratio_spread(pn, fn, rounds, &p->page_vs_floor);
	}
}

void pf_ratios(void *ctx, int rounds, struct bench_rounds_widest *w)
{
	struct pf_report *p = ctx;
	const struct bench_opts *o = p->o;
	struct pf_col *cols = p->cols;
	char name[96];
	int m;

	pf_compute(p, rounds);
	for (m = 0; m < p->ncols; m++) {
		if (m != BENCH_ALWAYS) {
			snprintf(name, sizeof(name), "%s vs always", pf_col_name(m, o));
			bench_rounds_widest_note(w, name, &cols[m].ratio);
		}
		if (m != BENCH_NEVER) {
			snprintf(name, sizeof(name), "%s vs never", pf_col_name(m, o));
			bench_rounds_widest_note(w, name, &cols[m].ratio_never);
		}
	}
	bench_rounds_widest_note(w, "policy vs floor per call", &p->hook_ratio);
	bench_rounds_widest_note(w, "policy vs floor per page", &p->page_vs_floor);
}

static void pf_json_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "size", o->pf_size);
	jw_ku64(w, "iterations", o->pf_iterations);
	jw_ku64(w, "repeats", o->repeats);
	jw_kstr(w, "policy", o->policy_text);
	jw_kbool(w, "hook_cost", o->pf_hook_cost);
}

static void pf_json_body(struct jw *w, void *ctx)
{
	const struct pf_report *p = ctx;
	const struct bench_opts *o = p->o;
	int m, i;

	jw_key(w, "modes");
	jw_arr_open(w);
	for (m = 0; m < p->ncols; m++) {
		struct pf_col *c = &p->cols[m];

		if (!c->n)
			continue;
		jw_obj_open(w);
		jw_kstr(w, "mode", pf_col_name(m, o));
		jw_ku64(w, "runs", c->n);
		jw_kdouble(w, "ns_per_4k", c->ns.median);
		jw_kdouble(w, "vs_always_pct",
			   bench_pct(c->ns.median, p->cols[BENCH_ALWAYS].ns.median));
		jw_key(w, "ns_per_4k_runs");
		jw_arr_open(w);
		for (i = 0; i < (int)p->rounds->started; i++)
			if (p->runs[m][i].done)
				jw_double(w, p->runs[m][i].ns_page);
		jw_arr_close(w);
		bench_json_spread(w, "ns_per_4k_spread", &c->ns);
		bench_json_ratio(w, "ratio_vs_always", &c->ratio);
		bench_json_ratio(w, "ratio_vs_never", &c->ratio_never);
		if (m == BENCH_POLICY || m == PF_FLOOR) {
			bench_json_spread(w, "hook_ns_per_call", &c->call_ns);
			jw_ku64(w, "hook_calls", c->calls);
		}
		bench_json_memstat(w, &c->ms);
		/* the workload's own folios (its mapping, kpageflags) */
		bench_json_folios(w, &c->f);
		jw_ku64(w, "largest_folio_kb", c->largest_kb);
		bench_json_counters(w, &c->d);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_kdouble(w, "policy_overhead_pct", p->overhead);
	jw_kdouble(w, "policy_overhead_vs_never_pct", p->overhead_never);
	if (o->pf_hook_cost) {
		jw_key(w, "hook_cost");
		jw_obj_open(w);
		bench_json_spread(w, "policy_ns_per_call", &p->cols[BENCH_POLICY].call_ns);
		bench_json_spread(w, "floor_ns_per_call", &p->cols[PF_FLOOR].call_ns);
		bench_json_ratio(w, "policy_vs_floor", &p->hook_ratio);
		jw_ku64(w, "policy_calls", p->cols[BENCH_POLICY].calls);
		jw_ku64(w, "floor_calls", p->cols[PF_FLOOR].calls);
		jw_kdouble(w, "floor_overhead_vs_never_pct", p->floor_overhead_never);
		bench_json_ratio(w, "policy_vs_floor_per_page", &p->page_vs_floor);
		jw_obj_close(w);
	}
}

static void pf_text_headline(void *ctx)
{
	const struct pf_report *p = ctx;
	const struct bench_opts *o = p->o;
	char b1[32];

	printf("%s mapped, touched every 4K, unmapped; %u iterations, %u rounds, "
	       "median [interval] coverage",
	       mthpctl_format_size(o->pf_size, b1, sizeof(b1)), o->pf_iterations,
	       p->rounds->started);
}

static void pf_text_body(void *ctx)
{
	const struct pf_report *p = ctx;
	const struct bench_opts *o = p->o;
	char b2[64], b3[64];
	int m, s;

	for (m = 0; m < BENCH_NR_MODES; m++)
		if (p->skip[m])
			printf("note: %s rows skipped: %s\n", bench_mode_name(m, o), p->skip_note[m]);
	if (p->floor_skip)
		printf("note: floor rows skipped: %s\n", p->floor_note);
	printf("%-14s %-28s %-34s   %s\n", "mode", "ns per 4K", "vs always (per round)",
	       "mTHP fault allocs per run (size:count)");
	for (m = 0; m < p->ncols; m++) {
		struct pf_col *c = &p->cols[m];
		char rt[96];

		if (!c->n)
			continue;
		if (m == BENCH_ALWAYS)
			snprintf(rt, sizeof(rt), "-");
		else
			bench_ratio_fmt(&c->ratio, "%.3f", rt, sizeof(rt));
		printf("%-14s %-28s %-34s  ", pf_col_name(m, o),
		       bench_spread_fmt(&c->ns, "%.1f", b3, sizeof(b3)), rt);
		for (s = 0; s < c->d.nr; s++)
			if (c->d.v[s][0])
				printf(" %llukB:%llu", (unsigned long long)c->d.size_kb[s],
				       (unsigned long long)c->d.v[s][0]);
		printf("\n");
	}
	if (!isnan(p->overhead))
		printf("policy overhead (%s vs always, same run): %+.1f%%, ratio %s: %s\n",
		       bench_mode_name(BENCH_POLICY, o), p->overhead,
		       bench_spread_fmt(&p->cols[BENCH_POLICY].ratio, "%.3f", b2, sizeof(b2)),
		       bench_verdict(&p->cols[BENCH_POLICY].ratio));
	if (!isnan(p->overhead_never))
		printf("policy overhead (%s vs never, same run): %+.1f%%, ratio %s: %s\n",
		       bench_mode_name(BENCH_POLICY, o), p->overhead_never,
		       bench_spread_fmt(&p->cols[BENCH_POLICY].ratio_never, "%.3f", b2,
					sizeof(b2)),
		       bench_verdict(&p->cols[BENCH_POLICY].ratio_never));
	printf("memory.stat deltas of the cgroup (median):\n");
	bench_print_memstat_header();
	for (m = 0; m < p->ncols; m++)
		if (p->cols[m].n)
			bench_print_memstat(pf_col_name(m, o), &p->cols[m].ms);
	if (o->pf_hook_cost) {
		printf("hook cost (kernel.bpf_stats_enabled=1, run_time_ns / run_cnt):\n");
		printf("  policy %s ns/call (%llu calls per run)\n",
		       bench_spread_fmt(&p->cols[BENCH_POLICY].call_ns, "%.1f", b2, sizeof(b2)),
		       (unsigned long long)p->cols[BENCH_POLICY].calls);
		printf("  floor  %s ns/call (%llu calls per run, choose_orders \"return 0\")\n",
		       bench_spread_fmt(&p->cols[PF_FLOOR].call_ns, "%.1f", b2, sizeof(b2)),
		       (unsigned long long)p->cols[PF_FLOOR].calls);
		printf("  policy / floor %s: %s\n",
		       bench_spread_fmt(&p->hook_ratio, "%.2f", b2, sizeof(b2)),
		       bench_verdict(&p->hook_ratio));
		/* what any policy costs (an empty program, called the same way,
		 * with bpf_stats on) and what this one adds to that, per page */
		if (!isnan(p->floor_overhead_never))
			printf("  per 4K page: the floor %+.1f%% vs never; the policy vs the floor "
			       "%s: %s\n", p->floor_overhead_never,
			       bench_spread_fmt(&p->page_vs_floor, "%.3f", b2, sizeof(b2)),
			       bench_verdict(&p->page_vs_floor));
	}
	bench_print_interval_legend();
}

int pf_report_write(struct pf_report *p, bool interrupted)
{
	const struct bench_opts *o = p->o;
	struct pf_col *cols = p->cols;
	struct bench_report report = {
		.name = "pagefault", .title = "pagefault", .ctx = p, .interrupted = interrupted,
		.json_config = pf_json_config, .json_body = pf_json_body,
		.text_headline = pf_text_headline, .text_body = pf_text_body,
		.rounds = p->rounds, .nr_rounds = 1,
	};

	pf_compute(p, p->rounds->started);
	report.notes[0] = p->skip[BENCH_POLICY] ? p->skip_note[BENCH_POLICY] : NULL;
	report.notes[1] = p->floor_skip ? p->floor_note : NULL;
	report.notes[2] = p->skip[BENCH_SIMPLE] ? p->skip_note[BENCH_SIMPLE] : NULL;
	p->overhead = bench_pct(cols[BENCH_POLICY].ns.median, cols[BENCH_ALWAYS].ns.median);
	p->overhead_never = bench_pct(cols[BENCH_POLICY].ns.median, cols[BENCH_NEVER].ns.median);
	p->floor_overhead_never = o->pf_hook_cost ?
				  bench_pct(cols[PF_FLOOR].ns.median, cols[BENCH_NEVER].ns.median) : NAN;
	return bench_report(o, &report);
}
