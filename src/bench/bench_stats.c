// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the statistics of the report (medians, percent changes,
 * bootstrap intervals of medians and of per-round ratios) and the rule
 * that says when a benchmark has run enough rounds. Pure, like
 * bench_calc.c, and unit-tested in tests/unit/test_bench.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_calc.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The values of v that are not NAN, sorted, into c (room for n): their count. */
static size_t sorted_numbers(const double *v, size_t n, double *c)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!isnan(v[i]))
			c[k++] = v[i];
	qsort(c, k, sizeof(*c), cmp_double);
	return k;
}

/* median of a sorted array */
static double sorted_median(const double *c, size_t k)
{
	return k % 2 ? c[k / 2] : (c[k / 2 - 1] + c[k / 2]) / 2;
}

double bench_median(const double *v, size_t n)
{
	double *c, m = NAN;
	size_t k;

	c = malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		return NAN;
	k = sorted_numbers(v, n, c);
	if (k)
		m = sorted_median(c, k);
	free(c);
	return m;
}

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

double bench_oracle(double rps, double always, double never)
{
	double best;

	if (isnan(always) && isnan(never))
		return NAN;
	best = isnan(always) ? never : isnan(never) ? always : always > never ? always : never;
	if (isnan(rps) || best <= 0)
		return NAN;
	return rps / best;
}

/* --- spread: bootstrap interval of the median ------------------------- */

__u64 bench_prng_next(__u64 *state)
{
	__u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* p-th percentile (0..1) of a sorted array, linear interpolation */
static double sorted_pct(const double *c, size_t k, double p)
{
	double x = p * (k - 1);
	size_t i = (size_t)x;

	if (i + 1 >= k)
		return c[k - 1];
	return c[i] + (x - i) * (c[i + 1] - c[i]);
}

void bench_spread(const double *v, size_t n, struct bench_spread *s)
{
	double *c, *boot, *tmp;
	__u64 seed = BENCH_BOOT_SEED;
	size_t i, j, k;

	s->n = 0;
	s->median = s->min = s->max = s->lo = s->hi = NAN;
	c = malloc((n ? n : 1) * sizeof(*c));
	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	boot = malloc(BENCH_BOOT_RESAMPLES * sizeof(*boot));
	if (!c || !tmp || !boot)
		goto out;
	k = sorted_numbers(v, n, c);
	if (!k)
		goto out;
	s->n = k;
	s->median = sorted_median(c, k);
	s->min = c[0];
	s->max = c[k - 1];
	for (i = 0; i < BENCH_BOOT_RESAMPLES; i++) {
		for (j = 0; j < k; j++)
			tmp[j] = c[bench_prng_next(&seed) % k];
		qsort(tmp, k, sizeof(*tmp), cmp_double);
		boot[i] = sorted_median(tmp, k);
	}
	qsort(boot, BENCH_BOOT_RESAMPLES, sizeof(*boot), cmp_double);
	s->lo = sorted_pct(boot, BENCH_BOOT_RESAMPLES, 0.025);
	s->hi = sorted_pct(boot, BENCH_BOOT_RESAMPLES, 0.975);
out:
	free(c);
	free(tmp);
	free(boot);
}

void bench_ratio_spread(const double *num, const double *den, size_t n, struct bench_spread *s)
{
	double *r = malloc((n ? n : 1) * sizeof(*r));
	size_t i, k = 0;

	if (!r) {
		bench_spread(NULL, 0, s);
		return;
	}
	for (i = 0; i < n; i++)
		if (!isnan(num[i]) && !isnan(den[i]) && den[i] > 0)
			r[k++] = num[i] / den[i];
	bench_spread(r, k, s);
	free(r);
}

bool bench_spread_contains(const struct bench_spread *s, double x)
{
	if (!s->n || isnan(s->lo) || isnan(s->hi))
		return true;
	return s->lo <= x && x <= s->hi;
}

char *bench_spread_fmt(const struct bench_spread *s, const char *fmt, char *buf, size_t len)
{
	char a[32], b[32], c[32];

	if (!s->n) {
		snprintf(buf, len, "-");
		return buf;
	}
	snprintf(a, sizeof(a), fmt, s->median);
	if (s->n == 1) {
		snprintf(buf, len, "%s", a);
		return buf;
	}
	snprintf(b, sizeof(b), fmt, s->lo);
	snprintf(c, sizeof(c), fmt, s->hi);
	snprintf(buf, len, "%s [%s..%s]", a, b, c);
	return buf;
}

int bench_argmax(const double *v, size_t n)
{
	size_t i;
	int best = -1;

	for (i = 0; i < n; i++)
		if (!isnan(v[i]) && (best < 0 || v[i] > v[best]))
			best = i;
	return best;
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
	pct = bench_spread_width_pct(s);
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
