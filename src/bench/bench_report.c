// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: reporting. The report frame that every benchmark's result
 * goes through (bench_report(): the JSON object on
 * stdout with -j or in --json-out FILE, the text tables on stdout otherwise,
 * the exit status of an interrupted run), and the JSON and text pieces the
 * benchmarks share (spreads, ratios, folio sizes, memory.stat deltas).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "bench_common.h"
#include "mthpctl.h"

static FILE *json_file;

/* The JSON report: on stdout with -j, else in --json-out FILE (pretty);
 * NULL when neither. Finish with json_end(). */
static struct jw *json_begin(const struct bench_opts *o)
{
	if (g.json) {
		mthpctl_json_begin();
		return &g.jw;
	}
	if (!o->json_out)
		return NULL;
	json_file = fopen(o->json_out, "w");
	if (!json_file) {
		fprintf(stderr, "mthpctl: warning: cannot write %s: %s\n", o->json_out, strerror(errno));
		return NULL;
	}
	jw_init(&g.jw, json_file, true);
	return &g.jw;
}

static void json_end(struct jw *w)
{
	fflush(w->f);
	if (json_file) {
		fclose(json_file);
		json_file = NULL;
	}
}

/* "rounds": [{"label", "run", "min", "max", "until_width_pct", "max_time_s",
 * "stop", "converged", "elapsed_s", "widest_interval_pct", "widest"}] */
static void json_rounds(struct jw *w, const struct bench_report *r)
{
	int i;

	jw_key(w, "rounds");
	jw_arr_open(w);
	for (i = 0; i < r->nr_rounds; i++) {
		const struct bench_rounds *x = &r->rounds[i];

		jw_obj_open(w);
		jw_kstr(w, "label", x->label);
		jw_ku64(w, "run", x->done);
		jw_ku64(w, "min", x->rule.min);
		jw_ku64(w, "max", x->rule.max);
		jw_kdouble(w, "until_width_pct", x->rule.width_pct > 0 ? x->rule.width_pct : NAN);
		jw_kdouble(w, "max_time_s", x->rule.max_ns ? x->rule.max_ns / 1e9 : NAN);
		jw_kstr(w, "stop", bench_rounds_why_name(x->why));
		jw_kbool(w, "converged", x->why == BENCH_ROUNDS_CONVERGED);
		jw_kdouble(w, "elapsed_s", x->elapsed_ns / 1e9);
		/* null: no ratio with an interval (one round, or none noted) */
		jw_kdouble(w, "widest_interval_pct",
			   x->widest.pct < 0 || isinf(x->widest.pct) ? NAN : x->widest.pct);
		jw_kstr(w, "widest", x->widest.name[0] ? x->widest.name : NULL);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

/* "start_state": {"found": {...}, "settled": {...}, "khugepaged", "settle_s"}:
 * what the benchmark found, and what it started from (bench_start.c) */
static void json_start_state_fields(struct jw *w, const char *key, const struct bench_start_state *s)
{
	jw_key(w, key);
	jw_obj_open(w);
	jw_ku64(w, "free_pmd_blocks", s->free_pmd_blocks);
	jw_ku64(w, "mem_free", s->mem_free);
	jw_ku64(w, "swap_used", s->swap_used);
	jw_ku64(w, "page_cache", s->page_cache);
	jw_ku64(w, "khugepaged_full_scans", s->khugepaged_full_scans);
	jw_ku64(w, "khugepaged_pages_collapsed", s->khugepaged_pages_collapsed);
	jw_obj_close(w);
}

static void json_start_state(struct jw *w)
{
	const struct bench_start *st = bench_start_get();

	jw_key(w, "start_state");
	if (!st) {
		jw_null(w);
		return;
	}
	jw_obj_open(w);
	json_start_state_fields(w, "found", &st->found);
	json_start_state_fields(w, "settled", &st->settled);
	jw_kstr(w, "khugepaged", bench_khugepaged_name(st->khugepaged));
	jw_ku64(w, "khugepaged_pages_collapsed_settling",
		st->settled.khugepaged_pages_collapsed - st->found.khugepaged_pages_collapsed);
	jw_kdouble(w, "settle_s", st->settle_ns / 1e9);
	jw_obj_close(w);
}

/* "start state: 312 free 2M blocks (found 101), swap in use 0.0 MiB
 * (found 3.2), page cache 52.1 MiB (found 610.4); khugepaged: idle" */
static void text_start_state(void)
{
	const struct bench_start *st = bench_start_get();

	if (!st)
		return;
	printf("start state: %llu free %lluK blocks (found %llu), swap in use %.1f MiB (found %.1f), "
	       "page cache %.1f MiB (found %.1f); khugepaged: %s, %llu pages collapsed settling; "
	       "settled in %.1f s\n",
	       (unsigned long long)st->settled.free_pmd_blocks,
	       (unsigned long long)(mthpctl_page_size() << mthpctl_pmd_order()) >> 10,
	       (unsigned long long)st->found.free_pmd_blocks,
	       st->settled.swap_used / 1048576.0, st->found.swap_used / 1048576.0,
	       st->settled.page_cache / 1048576.0, st->found.page_cache / 1048576.0,
	       bench_khugepaged_name(st->khugepaged),
	       (unsigned long long)(st->settled.khugepaged_pages_collapsed -
				    st->found.khugepaged_pages_collapsed),
	       st->settle_ns / 1e9);
}

/* "rounds: 7 (at least 3), converged: widest interval 4.1% (NAME), asked 5%" */
static void text_rounds(const struct bench_report *r)
{
	char wb[32];
	int i;

	for (i = 0; i < r->nr_rounds; i++) {
		const struct bench_rounds *x = &r->rounds[i];

		printf("rounds%s%s: %u (at least %u), %s: widest interval of a ratio %s%s%s%s",
		       x->label ? " at " : "", x->label ? x->label : "", x->done, x->rule.min,
		       bench_rounds_why_name(x->why),
		       bench_rounds_width_str(&x->widest, wb, sizeof(wb)),
		       x->widest.name[0] ? " (" : "", x->widest.name, x->widest.name[0] ? ")" : "");
		if (x->rule.width_pct > 0)
			printf(", asked %g%%", x->rule.width_pct);
		if (x->rule.max_ns)
			printf(", time cap %.0f s", x->rule.max_ns / 1e9);
		printf(", %.0f s\n", x->elapsed_ns / 1e9);
	}
}

int bench_report(const struct bench_opts *o, const struct bench_report *r)
{
	struct utsname u;
	struct jw *w;
	int i;

	uname(&u);
	w = json_begin(o);
	if (w) {
		jw_obj_open(w);
		jw_kstr(w, "benchmark", r->name);
		jw_kstr(w, "kernel", u.release);
		jw_kbool(w, "interrupted", r->interrupted);
		jw_key(w, "config");
		jw_obj_open(w);
		jw_kstr(w, "host", o->host);	/* --host: every benchmark has it */
		r->json_config(w, o);
		jw_obj_close(w);
		jw_key(w, "notes");
		jw_arr_open(w);
		for (i = 0; i < BENCH_MAX_NOTES; i++)
			if (r->notes[i])
				jw_str(w, r->notes[i]);
		jw_arr_close(w);
		json_start_state(w);
		json_rounds(w, r);
		r->json_body(w, r->ctx);
		jw_obj_close(w);
		json_end(w);
	}
	if (!g.json) {
		printf("%s on %s: ", r->title, u.release);
		r->text_headline(r->ctx);
		printf("%s\n", r->interrupted ? " (INTERRUPTED: partial)" : "");
		text_start_state();
		text_rounds(r);
		r->text_body(r->ctx);
	}
	fflush(stdout);
	if (r->interrupted) {
		fprintf(stderr, "mthpctl: interrupted by signal %d; settings restored\n", bench_stop);
		return bench_interrupted();
	}
	return 0;
}

const char *bench_mode_name(enum bench_mode m, const struct bench_opts *o)
{
	static char buf[64];

	const char *slash;

	switch (m) {
	case BENCH_ALWAYS: return "always";
	case BENCH_NEVER: return "never";
	case BENCH_HOST: return o->host;
	case BENCH_SIMPLE:
		snprintf(buf, sizeof(buf), "%s+simple", o->host);
		return buf;
	default:
		if (o->policy_object) {
			slash = strrchr(o->policy_object, '/');
			snprintf(buf, sizeof(buf), "%s+%s", o->host,
				 slash ? slash + 1 : o->policy_object);
		} else {
			snprintf(buf, sizeof(buf), "%s+%s", o->host,
				 o->nr_policy_words ? o->policy_words[0] : "auto");
		}
		return buf;
	}
}

/* --- report helpers --------------------------------------------------- */

static void json_spread_fields(struct jw *w, const struct bench_spread *s)
{
	jw_kdouble(w, "median", s->median);
	jw_kdouble(w, "min", s->min);
	jw_kdouble(w, "max", s->max);
	jw_kdouble(w, "lo", s->lo);
	jw_kdouble(w, "hi", s->hi);
	jw_kdouble(w, "coverage", s->coverage);
	jw_ku64(w, "n", s->n);
}

void bench_json_spread(struct jw *w, const char *key, const struct bench_spread *s)
{
	jw_key(w, key);
	jw_obj_open(w);
	json_spread_fields(w, s);
	jw_obj_close(w);
}

bool bench_json_mode_open(struct jw *w, const struct bench_opts *o, int m, unsigned int runs)
{
	if (!runs)
		return false;
	jw_obj_open(w);
	jw_kstr(w, "mode", bench_mode_name(m, o));
	return true;
}

void bench_json_ratio(struct jw *w, const char *key, const struct bench_spread *s)
{
	jw_key(w, key);
	jw_obj_open(w);
	json_spread_fields(w, s);
	jw_kbool(w, "distinguishable", bench_spread_distinguishable(s, 1.0));
	jw_obj_close(w);
}

void bench_json_vs_each_static(struct jw *w, const char *ratio_key, const char *const names[],
			       const struct bench_spread *ratio, int nr, const struct bench_tally *t)
{
	int j;

	jw_key(w, "vs_each_static");
	jw_arr_open(w);
	for (j = 0; j < nr; j++) {
		if (!ratio[j].n)
			continue;
		jw_obj_open(w);
		jw_kstr(w, "mode", names[j]);
		bench_json_ratio(w, ratio_key, &ratio[j]);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_kbool(w, "beats_every_static", bench_tally_all_above(t));
}

void bench_print_vs_each_static(const char *title, const char *const names[],
				const struct bench_spread *ratio, int nr, const struct bench_tally *t)
{
	char r[96], tally[80];
	int j;

	printf("%s:\n", title);
	for (j = 0; j < nr; j++)
		if (ratio[j].n)
			printf("  %-14s %s\n", names[j],
			       bench_ratio_fmt(&ratio[j], "%.3f", r, sizeof(r)));
	printf("  beats every static setting: %s (%s)\n", bench_tally_all_above(t) ? "yes" : "no",
	       bench_tally_fmt(t, tally, sizeof(tally)));
}

const char *bench_verdict(const struct bench_spread *r)
{
	return bench_verdict_name(bench_spread_verdict(r, 1.0));
}

void bench_print_interval_legend(void)
{
	printf("(median [interval] coverage: the interval is an order statistic on each side "
	       "of the rounds' median, and the coverage the chance that it holds the true "
	       "median, exact for any distribution (3 rounds: [min..max] at 75%%); a ratio is "
	       "distinguishable from 1.0 only by an interval of %s or more; n.d.: such an "
	       "interval holds 1.0; unranked: below %s, no ranking)\n",
	       BENCH_COVERAGE_WANTED_STR, BENCH_COVERAGE_WANTED_STR);
}

void bench_json_decisions(struct jw *w, const char *key, const struct bench_decisions *d)
{
	int why;

	jw_key(w, key);
	if (!d->have) {
		jw_null(w);
		return;
	}
	jw_obj_open(w);
	jw_ku64(w, "calls", d->calls);
	jw_key(w, "fallbacks");
	jw_obj_open(w);
	for (why = 1; why < MTHPCTL_NR_REASON; why++)
		jw_ku64(w, mthpctl_reason_name(why), d->fallbacks[why]);
	jw_obj_close(w);
	jw_obj_close(w);
}

void bench_print_decisions(const char *label, const struct bench_decisions *d)
{
	int why;

	if (!d->have)
		return;
	printf("  %-14s %llu calls, fell back:", label, (unsigned long long)d->calls);
	for (why = 1; why < MTHPCTL_NR_REASON; why++)
		if (d->fallbacks[why])
			printf(" %s %llu", mthpctl_reason_name(why),
			       (unsigned long long)d->fallbacks[why]);
	printf("\n");
}

void bench_json_folios(struct jw *w, const struct bench_folios *f)
{
	int o;

	jw_key(w, "folio_bytes");
	jw_arr_open(w);
	for (o = 0; o < BENCH_NR_ORDERS; o++) {
		jw_obj_open(w);
		jw_ku64(w, "size_kb", 4ULL << o);
		jw_ku64(w, "bytes", f->bytes[o]);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_ku64(w, "pmd_bytes", f->bytes[BENCH_NR_ORDERS - 1]);
}

void bench_json_counters(struct jw *w, const struct bench_counters *d)
{
	int s, k;

	jw_key(w, "mthp");
	jw_arr_open(w);
	for (s = 0; s < d->nr; s++) {
		jw_obj_open(w);
		jw_ku64(w, "size_kb", d->size_kb[s]);
		for (k = 0; k < BENCH_NR_CNT; k++)
			jw_ku64(w, bench_cnt_names[k], d->v[s][k]);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

void bench_json_memstat(struct jw *w, const struct bench_memstat *m)
{
	int i;

	jw_key(w, "memory_stat_delta");
	jw_obj_open(w);
	for (i = 0; i < BENCH_NR_MS; i++) {
		jw_key(w, bench_ms_names[i]);
		if (m->have[i])
			jw_u64(w, m->v[i]);
		else
			jw_null(w);
	}
	jw_obj_close(w);
}

void bench_folios_median(const struct bench_folios *runs, int n, struct bench_folios *out)
{
	__u64 v[64];
	int o, i;

	bench_folios_init(out);
	for (o = 0; o < BENCH_NR_ORDERS; o++) {
		for (i = 0; i < n && i < 64; i++)
			v[i] = runs[i].bytes[o];
		out->bytes[o] = bench_median_u64(v, i);
	}
}

void bench_memstat_median(const struct bench_memstat *runs, int n, struct bench_memstat *out)
{
	__u64 v[64];
	int k, i;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < BENCH_NR_MS; k++) {
		out->have[k] = n > 0;
		for (i = 0; i < n && i < 64; i++) {
			out->have[k] &= runs[i].have[k];
			v[i] = runs[i].v[k];
		}
		if (out->have[k])
			out->v[k] = bench_median_u64(v, i);
	}
}

static const char *order_name(int o, char *buf, size_t len)
{
	__u64 kb = 4ULL << o;

	if (kb >= 1024)
		snprintf(buf, len, "%lluM", (unsigned long long)kb >> 10);
	else
		snprintf(buf, len, "%lluK", (unsigned long long)kb);
	return buf;
}

void bench_print_folios(const char *mode, const struct bench_folios *f)
{
	char b[16];
	int o, any = 0;

	printf("  %-14s", mode);
	for (o = 0; o < BENCH_NR_ORDERS; o++)
		if (f->bytes[o])
			printf("%s%s %.1f", any++ ? ", " : " ", order_name(o, b, sizeof(b)),
			       f->bytes[o] / 1048576.0);
	printf("%s; PMD %.1f MiB\n", any ? " MiB" : " (no anonymous memory seen)",
	       f->bytes[BENCH_NR_ORDERS - 1] / 1048576.0);
}

static const char *const ms_short[BENCH_NR_MS] = {
	"pswpout", "pswpin", "thp_swpout", "thp_swpout_fb", "refault_anon", "pgmajfault",
};

void bench_print_memstat_header(void)
{
	int i;

	printf("  %-14s", "mode");
	for (i = 0; i < BENCH_NR_MS; i++)
		printf(" %13s", ms_short[i]);
	printf("\n");
}

void bench_print_memstat(const char *mode, const struct bench_memstat *m)
{
	char b[24];
	int i;

	printf("  %-14s", mode);
	for (i = 0; i < BENCH_NR_MS; i++) {
		if (m->have[i])
			snprintf(b, sizeof(b), "%llu", (unsigned long long)m->v[i]);
		else
			snprintf(b, sizeof(b), "absent");
		printf(" %13s", b);
	}
	printf("\n");
}
