// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the rounds of every benchmark. One round runs each
 * selected mode once (interleaved, bench_round_col()); after each round the
 * benchmark gives the spreads of the ratios it reports, and the rule
 * (bench_rounds_next() in bench_stats.c: --repeats, --until-width,
 * --max-time) says whether to run another. What the rounds ended on goes
 * into the report (bench_report()).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_common.h"

void bench_rounds_init(struct bench_rounds *r, const struct bench_opts *o, unsigned int max,
		       const char *label)
{
	memset(r, 0, sizeof(*r));
	r->rule.min = o->repeats;
	r->rule.max = max;
	r->rule.width_pct = o->until_width_pct;
	r->rule.max_ns = o->max_time_ns;
	r->label = label;
	r->why = BENCH_ROUNDS_MORE;
	bench_rounds_widest_reset(&r->widest);
}

unsigned int bench_rounds_planned(const struct bench_rounds *r)
{
	if (r->rule.width_pct <= 0 && !r->rule.max_ns)
		return r->rule.min;
	return r->rule.max;
}

/* One round: every column of sel once, in the round's rotated order. */
static int one_round(struct bench_rounds *r, const int *sel, int nsel,
		     int (*run)(void *ctx, int col, int rep, const char *tag), void *ctx)
{
	int i, ret = 0, total = nsel * bench_rounds_planned(r);
	char tag[48];

	for (i = 0; i < nsel && !ret; i++) {
		r->k++;
		snprintf(tag, sizeof(tag), "[%s%s%d/%d]", r->label ? r->label : "",
			 r->label ? " " : "", r->k, total);
		ret = run(ctx, bench_round_col(sel, nsel, r->done, i), r->done, tag);
	}
	return ret;
}

int bench_rounds_run(const struct bench_opts *o, struct bench_rounds *r, const int *sel, int nsel,
		     int (*run)(void *ctx, int col, int rep, const char *tag),
		     void (*ratios)(void *ctx, int rounds, struct bench_rounds_widest *w), void *ctx)
{
	__u64 t0 = bench_now_ns();
	int ret = 0;
	char wb[32];

	while (r->why == BENCH_ROUNDS_MORE) {
		r->started = r->done + 1;
		ret = one_round(r, sel, nsel, run, ctx);
		r->elapsed_ns = bench_now_ns() - t0;
		if (ret || bench_stop) {
			r->why = BENCH_ROUNDS_INTERRUPTED;
			break;
		}
		r->done++;
		bench_rounds_widest_reset(&r->widest);
		ratios(ctx, r->done, &r->widest);
		r->why = bench_rounds_next(&r->rule, r->done, r->elapsed_ns, r->widest.pct);
		if (r->rule.width_pct > 0 || r->rule.max_ns)
			bench_progress(o, "%s%sround %u done after %.0f s: widest interval %s%s%s%s",
				       r->label ? r->label : "", r->label ? ": " : "", r->done,
				       r->elapsed_ns / 1e9, bench_rounds_width_str(&r->widest, wb, sizeof(wb)),
				       r->widest.name[0] ? " (" : "", r->widest.name,
				       r->widest.name[0] ? ")" : "");
	}
	return ret;
}

const char *bench_rounds_width_str(const struct bench_rounds_widest *w, char *buf, size_t len)
{
	if (w->pct < 0)
		snprintf(buf, len, "-");
	else if (isinf(w->pct))
		snprintf(buf, len, "below %s coverage", BENCH_COVERAGE_WANTED_STR);
	else
		snprintf(buf, len, "%.1f%%", w->pct);
	return buf;
}
