// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the order-statistics interval of a median and its exact
 * coverage (see bench_interval.h for why not a bootstrap).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_interval.h"

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

double bench_median_coverage(unsigned int n, unsigned int k)
{
	double binom = 1, below = 0;	/* C(n, i); sum of C(n, i) for i < k */
	unsigned int i;

	if (!k || 2 * k > n + 1)
		return 0;
	for (i = 0; i < k; i++) {
		below += binom;
		binom = binom * (n - i) / (i + 1);
	}
	/* both tails: fewer than k values below the median, or above it */
	return 1 - 2 * ldexp(below, -(int)n);
}

unsigned int bench_median_interval_k(unsigned int n)
{
	unsigned int k;

	if (!n)
		return 0;
	/* coverage falls as k grows: the first k that misses ends the search */
	for (k = 1; bench_median_coverage(n, k + 1) >= BENCH_COVERAGE_WANTED; k++)
		;
	return k;
}

void bench_spread(const double *v, size_t n, struct bench_spread *s)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));
	size_t k, ord;

	s->n = 0;
	s->median = s->min = s->max = s->lo = s->hi = s->coverage = NAN;
	if (!c)
		return;
	k = sorted_numbers(v, n, c);
	if (k) {
		ord = bench_median_interval_k(k);
		s->n = k;
		s->median = sorted_median(c, k);
		s->min = c[0];
		s->max = c[k - 1];
		s->lo = c[ord - 1];
		s->hi = c[k - ord];
		s->coverage = bench_median_coverage(k, ord);
	}
	free(c);
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

enum bench_verdict bench_spread_verdict(const struct bench_spread *s, double x)
{
	if (!s->n)
		return BENCH_VERDICT_NONE;
	if (!(s->coverage >= BENCH_COVERAGE_WANTED))
		return BENCH_VERDICT_UNRANKED;
	if (s->lo > x)
		return BENCH_VERDICT_ABOVE;
	if (s->hi < x)
		return BENCH_VERDICT_BELOW;
	return BENCH_VERDICT_HOLDS;
}

bool bench_spread_distinguishable(const struct bench_spread *s, double x)
{
	enum bench_verdict v = bench_spread_verdict(s, x);

	return v == BENCH_VERDICT_ABOVE || v == BENCH_VERDICT_BELOW;
}

const char *bench_verdict_name(enum bench_verdict v)
{
	switch (v) {
	case BENCH_VERDICT_UNRANKED: return "no ranking (coverage below " BENCH_COVERAGE_WANTED_STR ")";
	case BENCH_VERDICT_HOLDS: return "not distinguishable";
	case BENCH_VERDICT_ABOVE:
	case BENCH_VERDICT_BELOW: return "distinguishable";
	default: return "-";
	}
}

const char *bench_verdict_mark(enum bench_verdict v)
{
	switch (v) {
	case BENCH_VERDICT_UNRANKED: return "unranked";
	case BENCH_VERDICT_HOLDS: return "n.d.";
	default: return "";
	}
}

char *bench_spread_fmt(const struct bench_spread *s, const char *fmt, char *buf, size_t len)
{
	char a[32], b[32], c[32], cov[16];
	size_t end;

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
	/* "75", "87.5", "96.9": one decimal, none when it is 0 */
	snprintf(cov, sizeof(cov), "%.1f", s->coverage * 100);
	end = strlen(cov);
	if (end > 2 && !strcmp(cov + end - 2, ".0"))
		cov[end - 2] = '\0';
	snprintf(buf, len, "%s [%s..%s] %s%%", a, b, c, cov);
	return buf;
}

char *bench_ratio_fmt(const struct bench_spread *s, const char *fmt, char *buf, size_t len)
{
	const char *mark = bench_verdict_mark(bench_spread_verdict(s, 1.0));
	char v[96];

	bench_spread_fmt(s, fmt, v, sizeof(v));
	snprintf(buf, len, "%s%s%s", v, *mark ? " " : "", mark);
	return buf;
}

void bench_tally_add(struct bench_tally *t, const struct bench_spread *ratio)
{
	switch (bench_spread_verdict(ratio, 1.0)) {
	case BENCH_VERDICT_NONE: return;
	case BENCH_VERDICT_UNRANKED: t->unranked++; break;
	case BENCH_VERDICT_HOLDS: t->holds++; break;
	case BENCH_VERDICT_ABOVE: t->above++; break;
	case BENCH_VERDICT_BELOW: t->below++; break;
	}
	t->n++;
}

bool bench_tally_all_above(const struct bench_tally *t)
{
	return t->n && t->above == t->n;
}

void bench_vs_each(const double *mine, const double *const theirs[], size_t nr, size_t rounds,
		   bool lower_is_better, struct bench_spread *ratio, struct bench_tally *t)
{
	size_t j;

	memset(t, 0, sizeof(*t));
	for (j = 0; j < nr; j++) {
		if (!theirs[j])
			bench_spread(NULL, 0, &ratio[j]);
		else if (lower_is_better)
			bench_ratio_spread(theirs[j], mine, rounds, &ratio[j]);
		else
			bench_ratio_spread(mine, theirs[j], rounds, &ratio[j]);
		bench_tally_add(t, &ratio[j]);
	}
}

char *bench_tally_fmt(const struct bench_tally *t, char *buf, size_t len)
{
	if (!t->n)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "above %d of %d, n.d. %d, below %d, unranked %d", t->above, t->n,
			 t->holds, t->below, t->unranked);
	return buf;
}
