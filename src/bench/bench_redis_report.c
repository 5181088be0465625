// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench redis: the report. The runs of each mode or cap at each
 * memory.high level become a cell of medians and their intervals, with
 * per-round ratios against always and, for a policy's column, against each
 * static setting; bench_report() writes them as JSON or as text tables.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_redis.h"
#include "mthpctl.h"
#include "parse.h"

static void make_cell(struct redis_run *runs, int n, struct redis_cell *c)
{
	double v[5][REDIS_MAX_REPEATS];
	__u64 u[6][REDIS_MAX_REPEATS], cnt[REDIS_MAX_REPEATS];
	struct bench_folios fol[REDIS_MAX_REPEATS], settled[REDIS_MAX_REPEATS];
	struct bench_folios shipped[REDIS_MAX_REPEATS];
	double shipped_rps[REDIS_MAX_REPEATS];
	struct bench_memstat ms[REDIS_MAX_REPEATS];
	struct bench_decisions dec[REDIS_MAX_REPEATS];
	int i, j, s, k;

	memset(c, 0, sizeof(*c));
	c->swp_agree = true;
	for (i = 0; i < n; i++) {
		struct redis_run *r = &runs[i];
		__u64 large = 0;

		if (!r->done)
			continue;
		for (s = 0; s < r->delta.nr; s++)
			if (r->delta.size_kb[s] > 4)
				large += r->delta.v[s][BENCH_CNT_SWPOUT] * (r->delta.size_kb[s] / 4);
		v[0][c->n] = r->row.rps;
		v[1][c->n] = r->row.avg;
		v[2][c->n] = r->row.p50;
		v[3][c->n] = r->row.p95;
		v[4][c->n] = r->row.p99;
		u[0][c->n] = r->cs.high_events;
		u[1][c->n] = r->cs.psi_some_us;
		u[2][c->n] = r->cs.psi_full_us;
		u[3][c->n] = r->cs.peak;
		u[4][c->n] = large;
		u[5][c->n] = r->global_pswpout;
		fol[c->n] = r->folios;
		if (r->settled)
			settled[c->n_settled++] = r->settled_folios;
		if (r->shipped_done) {
			shipped_rps[c->n_shipped] = r->shipped_rps;
			shipped[c->n_shipped++] = r->shipped_folios;
		}
		ms[c->n] = r->ms;
		c->swp_agree &= r->ms.have[BENCH_MS_PSWPOUT] &&
				bench_swap_attributed(large, r->global_pswpout,
						      r->ms.v[BENCH_MS_PSWPOUT]);
		c->rps_runs[c->n] = r->row.rps;
		c->n++;
	}
	c->rps = bench_median(v[0], c->n);
	c->avg = bench_median(v[1], c->n);
	c->p50 = bench_median(v[2], c->n);
	c->p95 = bench_median(v[3], c->n);
	c->p99 = bench_median(v[4], c->n);
	bench_spread(v[0], c->n, &c->s_rps);
	bench_spread(v[1], c->n, &c->s_avg);
	bench_spread(v[2], c->n, &c->s_p50);
	bench_spread(v[4], c->n, &c->s_p99);
	c->high_events = bench_median_u64(u[0], c->n);
	c->psi_some_us = bench_median_u64(u[1], c->n);
	c->psi_full_us = bench_median_u64(u[2], c->n);
	c->peak = bench_median_u64(u[3], c->n);
	c->large_swp_pages = bench_median_u64(u[4], c->n);
	c->global_pswpout = bench_median_u64(u[5], c->n);
	bench_folios_median(fol, c->n, &c->folios);
	bench_folios_median(settled, c->n_settled, &c->settled_folios);
	bench_folios_median(shipped, c->n_shipped, &c->shipped_folios);
	c->shipped_rps = bench_median(shipped_rps, c->n_shipped);
	bench_memstat_median(ms, c->n, &c->ms);
	for (j = 0, k = 0; j < n; j++)
		if (runs[j].done)
			dec[k++] = runs[j].dec;
	bench_decisions_median(dec, k, &c->dec);
	/* counters: per size, the median of the per-run deltas */
	for (i = 0; i < n && !runs[i].done; i++)
		;
	if (i == n)
		return;
	c->delta = runs[i].delta;
	for (s = 0; s < c->delta.nr; s++)
		for (k = 0; k < BENCH_NR_CNT; k++) {
			int m = 0;

			for (j = 0; j < n; j++)
				if (runs[j].done)
					cnt[m++] = runs[j].delta.v[s][k];
			c->delta.v[s][k] = bench_median_u64(cnt, m);
		}
}

/* Per-round rps ratios at one level: every column against always, and
 * each policy's against each static column (not against the best of them:
 * picked from the same rounds, the best is favoured by their noise). */
static void level_ratios(const struct redis_results *c, int l, struct redis_run *runs, int repeats,
			 struct redis_cell *cells)
{
	double rps[REDIS_MAX_COLS][REDIS_MAX_REPEATS];	/* NAN: no run */
	const double *statics[REDIS_MAX_COLS];
	int col, rep;

	for (col = 0; col < c->ncols; col++) {
		for (rep = 0; rep < repeats; rep++) {
			struct redis_run *x = &REDIS_RUN(runs, l, col, rep);

			rps[col][rep] = x->done ? x->row.rps : NAN;
		}
		statics[col] = redis_is_static(col) && cells[col].n ? rps[col] : NULL;
	}
	for (col = 0; col < c->ncols; col++) {
		struct redis_cell *x = &cells[col];

		bench_ratio_spread(rps[col], rps[BENCH_ALWAYS], repeats, &x->r_always);
		if (redis_is_static(col) || !x->n) {
			memset(x->r_static, 0, sizeof(x->r_static));
			memset(&x->vs_static, 0, sizeof(x->vs_static));
			continue;
		}
		bench_vs_each(rps[col], statics, c->ncols, repeats, false, x->r_static,
			      &x->vs_static);
	}
}

void redis_level_cells(const struct redis_results *c, struct redis_run *runs, int l, int rounds,
		       struct redis_cell *cells)
{
	int m;

	for (m = 0; m < c->ncols; m++)
		make_cell(&REDIS_RUN(runs, l, m, 0), rounds, &cells[m]);
	level_ratios(c, l, runs, rounds, cells);
}

const char *redis_high_str(__u64 high, char *buf, size_t len)
{
	if (high == BENCH_HIGH_MAX)
		return "max";
	return mthpctl_format_size(high, buf, len);
}

static void print_counters_text(const char *mode, const struct bench_counters *d)
{
	int s, any = 0;

	printf("  %-14s", mode);
	for (s = 0; s < d->nr; s++) {
		if (!d->v[s][0] && !d->v[s][1] && !d->v[s][2])
			continue;
		printf("%s%llukB %llu/%llu/%llu", any++ ? ", " : " ",
		       (unsigned long long)d->size_kb[s], (unsigned long long)d->v[s][0],
		       (unsigned long long)d->v[s][1], (unsigned long long)d->v[s][2]);
	}
	printf("%s\n", any ? "" : " (no mTHP activity)");
}

/* latency with its interval: 2 decimals below 100 ms */
static char *fmt_ms(const struct bench_spread *s, char *buf, size_t len)
{
	return bench_spread_fmt(s, s->n && s->max < 100 ? "%.2f" : "%.0f", buf, len);
}

#define CELL(l, col)	(cells[(l) * REDIS_MAX_COLS + (col)])

/* PMD bytes of the policy as a share of always's, "-" without both. */
static char *pmd_share(const struct bench_folios *pol, const struct bench_folios *al,
		       char *buf, size_t len)
{
	__u64 a = al->bytes[BENCH_NR_ORDERS - 1];

	if (a)
		snprintf(buf, len, "%.1f%%", 100.0 * pol->bytes[BENCH_NR_ORDERS - 1] / a);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* --settle: the folios of always and the policy that much after the end of
 * their runs (khugepaged collapses the ranges a policy faulted in small
 * folios), and the policy's PMD bytes against always's at both moments. */
static void print_settled(const struct redis_results *c, struct redis_cell *cells, int l)
{
	struct redis_cell *al = &CELL(l, BENCH_ALWAYS), *pol = &CELL(l, BENCH_POLICY);
	char d[32], s1[16], s2[16];
	int m;

	if (!al->n_settled && !pol->n_settled)
		return;
	printf("anon folios %s after the end of a run (--settle; MiB by size, median):\n",
	       mthpctl_format_duration(c->o->settle_ns, d, sizeof(d)));
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (CELL(l, m).n_settled)
			bench_print_folios(redis_col_name(c, m), &CELL(l, m).settled_folios);
	if (al->n_settled && pol->n_settled)
		printf("PMD bytes of %s vs always: %s at the end, %s %s later\n",
		       redis_col_name(c, BENCH_POLICY),
		       pmd_share(&pol->folios, &al->folios, s1, sizeof(s1)),
		       pmd_share(&pol->settled_folios, &al->settled_folios, s2, sizeof(s2)), d);
}

/* --shipped: the folios and rps of redis as shipped (disable-thp yes)
 * beside the tuned run's, per column. */
static void print_shipped(const struct redis_results *c, struct redis_cell *cells, int l)
{
	char name[64];
	int m;

	if (!c->o->shipped)
		return;
	printf("redis as shipped (disable-thp yes: THP disabled by prctl, no policy reaches it) "
	       "beside the tuned run (disable-thp no); anon folios at the end (MiB by size, "
	       "median):\n");
	for (m = 0; m < c->ncols; m++) {
		struct redis_cell *x = &CELL(l, m);

		if (!x->n_shipped)
			continue;
		snprintf(name, sizeof(name), "%s tuned", redis_col_name(c, m));
		bench_print_folios(name, &x->folios);
		snprintf(name, sizeof(name), "%s shipped", redis_col_name(c, m));
		bench_print_folios(name, &x->shipped_folios);
		printf("  rps: tuned %.0f, shipped %.0f (%.3f x)\n", x->rps, x->shipped_rps,
		       x->rps > 0 ? x->shipped_rps / x->rps : NAN);
	}
}

/* What the report of a redis run reads. */
struct redis_report {
	const struct redis_results *c;
	struct redis_cell *cells;	/* CELL(level, column) */
	char note[600];			/* "policy rows skipped: ..." */
	char simple_note[600];		/* "simple rows skipped: ..." */
};

static void redis_json_config(struct jw *w, const struct bench_opts *o)
{
	int i;

	jw_ku64(w, "keys", o->keys);
	jw_ku64(w, "requests", o->requests);
	jw_ku64(w, "value_size", o->value_size);
	jw_ku64(w, "clients", o->clients);
	jw_ku64(w, "pipeline", o->pipeline);
	jw_kbool(w, "bgsave", o->bgsave);
	jw_kbool(w, "shipped", o->shipped);
	jw_ku64(w, "repeats", o->repeats);
	jw_kstr(w, "policy", o->policy_text);
	jw_key(w, "sizes");
	jw_arr_open(w);
	for (i = 0; i < o->nr_sizes; i++)
		jw_u64(w, o->sizes[i]);
	jw_arr_close(w);
}

/* The static columns' names, for the lists against each of them (NULL for
 * a policy's: its name is built in a buffer the next one overwrites). */
static void static_col_names(const struct redis_results *c, const char *names[REDIS_MAX_COLS])
{
	int col;

	for (col = 0; col < c->ncols; col++)
		names[col] = redis_is_static(col) ? redis_col_name(c, col) : NULL;
}

static void redis_json_body(struct jw *w, void *ctx)
{
	const struct redis_report *p = ctx;
	const struct redis_results *c = p->c;
	const struct bench_opts *o = c->o;
	struct redis_cell *cells = p->cells;
	const char *names[REDIS_MAX_COLS];
	int l, m, i;

	static_col_names(c, names);
	jw_key(w, "levels");
	jw_arr_open(w);
	for (l = 0; l < o->nr_high; l++) {
		double ra = CELL(l, BENCH_ALWAYS).rps;

		jw_obj_open(w);
		if (o->high[l] == BENCH_HIGH_MAX)
			jw_kstr(w, "memory_high", "max");
		else
			jw_ku64(w, "memory_high", o->high[l]);
		jw_key(w, "modes");
		jw_arr_open(w);
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);

			if (!x->n)
				continue;
			jw_obj_open(w);
			jw_kstr(w, "mode", redis_col_name(c, m));
			jw_kbool(w, "static", redis_is_static(m));
			if (m >= BENCH_NR_MODES)
				jw_ku64(w, "cap_size", o->sizes[m - BENCH_NR_MODES]);
			jw_ku64(w, "runs", x->n);
			jw_kdouble(w, "rps", x->rps);
			jw_kdouble(w, "avg_ms", x->avg);
			jw_kdouble(w, "p50_ms", x->p50);
			jw_kdouble(w, "p95_ms", x->p95);
			jw_kdouble(w, "p99_ms", x->p99);
			jw_kdouble(w, "rps_vs_always_pct", bench_pct(x->rps, ra));
			jw_kdouble(w, "p99_vs_always_pct",
				   bench_pct(x->p99, CELL(l, BENCH_ALWAYS).p99));
			jw_key(w, "rps_runs");
			jw_arr_open(w);
			for (i = 0; i < x->n; i++)
				jw_double(w, x->rps_runs[i]);
			jw_arr_close(w);
			jw_key(w, "spread");
			jw_obj_open(w);
			bench_json_spread(w, "rps", &x->s_rps);
			bench_json_spread(w, "avg_ms", &x->s_avg);
			bench_json_spread(w, "p50_ms", &x->s_p50);
			bench_json_spread(w, "p99_ms", &x->s_p99);
			jw_obj_close(w);
			bench_json_ratio(w, "rps_ratio_vs_always", &x->r_always);
			if (!redis_is_static(m))
				bench_json_vs_each_static(w, "rps", names, x->r_static, c->ncols,
							  &x->vs_static);
			jw_ku64(w, "memory_events_high", x->high_events);
			jw_ku64(w, "psi_some_us", x->psi_some_us);
			jw_ku64(w, "psi_full_us", x->psi_full_us);
			jw_ku64(w, "memory_peak", x->peak);
			bench_json_counters(w, &x->delta);
			bench_json_folios(w, &x->folios);
			if (x->n_shipped) {
				/* --shipped: redis as shipped, in the same mode */
				jw_key(w, "shipped");
				jw_obj_open(w);
				jw_ku64(w, "runs", x->n_shipped);
				jw_kdouble(w, "rps", x->shipped_rps);
				bench_json_folios(w, &x->shipped_folios);
				jw_obj_close(w);
			}
			if (x->n_settled) {
				/* --settle: the same counts, that much later */
				jw_key(w, "settled");
				jw_obj_open(w);
				jw_ku64(w, "settle_ns", c->o->settle_ns);
				jw_ku64(w, "runs", x->n_settled);
				bench_json_folios(w, &x->settled_folios);
				jw_obj_close(w);
			}
			bench_json_memstat(w, &x->ms);
			jw_key(w, "swap_attribution");
			jw_obj_open(w);
			jw_ku64(w, "large_folio_pages", x->large_swp_pages);
			jw_ku64(w, "global_pswpout", x->global_pswpout);
			jw_key(w, "cgroup_pswpout");
			if (x->ms.have[BENCH_MS_PSWPOUT])
				jw_u64(w, x->ms.v[BENCH_MS_PSWPOUT]);
			else
				jw_null(w);
			jw_kbool(w, "agree", x->swp_agree);
			jw_obj_close(w);
			bench_json_decisions(w, "policy_decisions", &x->dec);
			jw_obj_close(w);
		}
		jw_arr_close(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void redis_text_headline(void *ctx)
{
	const struct redis_report *p = ctx;
	const struct bench_opts *o = p->c->o;
	char b1[32];

	printf("%llu keys, %llu requests, %s values, %u clients, pipeline %u, %s, "
	       "median [interval] coverage",
	       (unsigned long long)o->keys, (unsigned long long)o->requests,
	       mthpctl_format_size(o->value_size, b1, sizeof(b1)), o->clients, o->pipeline,
	       o->bgsave ? "BGSAVE" : "noBGSAVE");
}

static void redis_text_body(void *ctx)
{
	const struct redis_report *p = ctx;
	const struct redis_results *c = p->c;
	const struct bench_opts *o = c->o;
	struct redis_cell *cells = p->cells;
	const char *names[REDIS_MAX_COLS];
	char b1[32], title[160];
	int l, m;

	if (c->policy_skip)
		printf("note: policy and cap rows skipped: %s\n", c->policy_note);
	if (c->simple_skip)
		printf("note: simple rows skipped: %s\n", c->simple_note);
	static_col_names(c, names);
	for (l = 0; l < o->nr_high; l++) {
		printf("\nmemory.high=%s\n", redis_high_str(o->high[l], b1, sizeof(b1)));
		printf("%-14s %-28s %-26s %-26s %-26s\n", "mode", "rps", "avg ms", "p50 ms", "p99 ms");
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);
			char r[48], a[48], p50[48], p99[48];

			if (!x->n)
				continue;
			printf("%-14s %-28s %-26s %-26s %-26s\n", redis_col_name(c, m),
			       bench_spread_fmt(&x->s_rps, "%.0f", r, sizeof(r)),
			       fmt_ms(&x->s_avg, a, sizeof(a)), fmt_ms(&x->s_p50, p50, sizeof(p50)),
			       fmt_ms(&x->s_p99, p99, sizeof(p99)));
		}
		printf("%-14s %s\n", "rps ratio", "vs always (per round)");
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);
			char t1[80];

			if (!x->n || m == BENCH_ALWAYS)
				continue;
			printf("%-14s %s\n", redis_col_name(c, m),
			       bench_ratio_fmt(&x->r_always, "%.3f", t1, sizeof(t1)));
		}
		for (m = 0; m < c->ncols; m++) {
			if (redis_is_static(m) || !CELL(l, m).n)
				continue;
			snprintf(title, sizeof(title), "%s rps against each static setting "
				 "(per round)", redis_col_name(c, m));
			bench_print_vs_each_static(title, names, CELL(l, m).r_static, c->ncols,
						   &CELL(l, m).vs_static);
		}
		printf("%-14s %8s %10s %9s %9s  %s\n", "mode", "high ev", "stall ms", "peak",
		       "PMD MiB", "swap-outs: large-folio pages + 4K = vmstat pswpout vs cgroup pswpout");
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);
			char pk[32], cgp[24];

			if (!x->n)
				continue;
			if (x->ms.have[BENCH_MS_PSWPOUT])
				snprintf(cgp, sizeof(cgp), "%llu", (unsigned long long)x->ms.v[BENCH_MS_PSWPOUT]);
			else
				snprintf(cgp, sizeof(cgp), "absent");
			printf("%-14s %8llu %10.1f %9s %9.1f  %llu + %llu = %llu vs %s: %s\n",
			       redis_col_name(c, m), (unsigned long long)x->high_events,
			       x->psi_full_us / 1000.0,
			       mthpctl_format_size(x->peak & ~0xfffffULL, pk, sizeof(pk)),
			       x->folios.bytes[BENCH_NR_ORDERS - 1] / 1048576.0,
			       (unsigned long long)x->large_swp_pages,
			       (unsigned long long)(x->global_pswpout > x->large_swp_pages ?
						    x->global_pswpout - x->large_swp_pages : 0),
			       (unsigned long long)x->global_pswpout, cgp,
			       x->swp_agree ? "agree" : "DIFFER");
		}
		printf("anon folios of redis-server at the end of a run (MiB by size, median):\n");
		for (m = 0; m < c->ncols; m++)
			if (CELL(l, m).n)
				bench_print_folios(redis_col_name(c, m), &CELL(l, m).folios);
		print_settled(c, cells, l);
		print_shipped(c, cells, l);
		printf("memory.stat deltas of the cgroup (median):\n");
		bench_print_memstat_header();
		for (m = 0; m < c->ncols; m++)
			if (CELL(l, m).n)
				bench_print_memstat(redis_col_name(c, m), &CELL(l, m).ms);
		printf("policy decisions per run (median; the policy's own counters):\n");
		for (m = 0; m < c->ncols; m++)
			bench_print_decisions(redis_col_name(c, m), &CELL(l, m).dec);
		printf("mTHP per run, global counters (size alloc/fallback/swpout):\n");
		for (m = 0; m < c->ncols; m++)
			if (CELL(l, m).n)
				print_counters_text(redis_col_name(c, m), &CELL(l, m).delta);
	}
	printf("\n(ratios per interleaved round; static settings: always, never, host, caps; "
	       "stall ms: memory.pressure full total; high ev: memory.events high)\n");
	bench_print_interval_legend();
}

int redis_report(const struct redis_results *c, struct redis_run *runs, struct redis_cell *cells,
		 bool partial)
{
	const struct bench_opts *o = c->o;
	struct redis_report p = { .c = c, .cells = cells };
	struct bench_report r = {
		.name = "redis", .title = "redis SET", .interrupted = partial,
		.ctx = &p, .rounds = c->rounds, .nr_rounds = o->nr_high,
		.json_config = redis_json_config, .json_body = redis_json_body,
		.text_headline = redis_text_headline, .text_body = redis_text_body,
	};
	int l;

	for (l = 0; l < o->nr_high; l++)
		redis_level_cells(c, runs, l, c->rounds[l].started, &CELL(l, 0));
	if (c->policy_skip) {
		snprintf(p.note, sizeof(p.note), "policy rows skipped: %s", c->policy_note);
		r.notes[0] = p.note;
	}
	if (c->simple_skip) {
		snprintf(p.simple_note, sizeof(p.simple_note), "simple rows skipped: %s",
			 c->simple_note);
		r.notes[1] = p.simple_note;
	}
	return bench_report(o, &r);
}
