// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the statistics of the report besides the intervals of
 * bench_interval.c (medians of counts, percent changes)
 * and the rule that says when a benchmark has run enough rounds. Pure,
 * like bench_calc.c, and unit-tested in tests/unit/test_bench.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_calc.h"

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

__u64 bench_median_u64(const __u64 *v, size_t n)
{
	__u64 *c, m;

	if (!n)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return 0;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_u64);
	/* even count: the lower middle (an observed value, no rounding) */
	m = c[(n - 1) / 2];
	free(c);
	return m;
}

double bench_pct(double x, double base)
{
	if (isnan(x) || isnan(base) || base == 0)
		return NAN;
	return (x - base) / base * 100.0;
}

/* --- the workloads' random numbers ----------------------------------- */

__u64 bench_prng_next(__u64 *state)
{
	__u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* --- rounds: the stopping rule ------------------------------------------ */

const char *bench_rounds_why_name(enum bench_rounds_why why)
{
	switch (why) {
	case BENCH_ROUNDS_FIXED: return "fixed";
	case BENCH_ROUNDS_CONVERGED: return "converged";
	case BENCH_ROUNDS_TIME_CAP: return "time cap reached";
	case BENCH_ROUNDS_ROUND_CAP: return "round cap reached";
	case BENCH_ROUNDS_INTERRUPTED: return "interrupted";
	default: return "";
	}
}

double bench_spread_width_pct(const struct bench_spread *s)
{
	if (s->n < 2 || isnan(s->lo) || isnan(s->hi) || isnan(s->median) || s->median == 0)
		return INFINITY;
	return (s->hi - s->lo) / fabs(s->median) * 100.0;
}

void bench_rounds_widest_reset(struct bench_rounds_widest *w)
{
	w->pct = -1;
	w->name[0] = '\0';
}

void bench_rounds_widest_note(struct bench_rounds_widest *w, const char *name,
			      const struct bench_spread *s)
{
	double pct;

	if (!s->n)
		return;
	/* an interval short of the wanted coverage is narrow by luck of
	 * its n, not by the rounds' agreement: not converged */
	pct = s->coverage >= BENCH_COVERAGE_WANTED ? bench_spread_width_pct(s) : INFINITY;
	if (pct > w->pct) {
		w->pct = pct;
		snprintf(w->name, sizeof(w->name), "%s", name);
	}
}

enum bench_rounds_why bench_rounds_next(const struct bench_rounds_rule *rule, unsigned int done,
					__u64 elapsed_ns, double widest_pct)
{
	if (done < rule->min && done < rule->max)
		return BENCH_ROUNDS_MORE;
	if (rule->width_pct <= 0 && !rule->max_ns)
		return BENCH_ROUNDS_FIXED;
	/* no ratio at all (one mode run): nothing to narrow, converged */
	if (rule->width_pct > 0 && widest_pct <= rule->width_pct)
		return BENCH_ROUNDS_CONVERGED;
	if (done >= rule->max)
		return BENCH_ROUNDS_ROUND_CAP;
	/* one more round of the mean length would end past the cap */
	if (rule->max_ns && done && elapsed_ns + elapsed_ns / done > rule->max_ns)
		return BENCH_ROUNDS_TIME_CAP;
	return BENCH_ROUNDS_MORE;
}
