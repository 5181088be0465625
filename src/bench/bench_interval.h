/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl bench: the interval of a median of a few rounds, and what it
 * allows the report to say. Pure, unit-tested in tests/unit/test_interval.c.
 *
 * A benchmark runs few rounds (3 by default), so the interval has to mean
 * what it says at small n. For the median of n values the order statistics
 * [x(k), x(n-k+1)] cover the true median with probability
 *
 *	1 - 2 * P(Binomial(n, 1/2) <= k - 1)
 *
 * whatever the (continuous) distribution: each value falls below the
 * median with probability 1/2. The largest k, the narrowest interval,
 * whose coverage is BENCH_COVERAGE_WANTED or more is taken; below n = 6
 * no k reaches it and the interval is [min..max] with the coverage it has
 * (n = 3: 75%, n = 5: 93.75%).
 * A ratio is ranked against 1.0 only by an interval of the wanted coverage.
 */
#ifndef MTHPCTL_BENCH_INTERVAL_H
#define MTHPCTL_BENCH_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>

/* The coverage a report needs to call a ratio distinguishable from 1.0,
 * in percent (for the report's words) and as a probability. */
#define BENCH_COVERAGE_WANTED_PCT	95
#define BENCH_COVERAGE_WANTED		(BENCH_COVERAGE_WANTED_PCT / 100.0)
#define BENCH_STR_(x)			#x
#define BENCH_STR(x)			BENCH_STR_(x)
#define BENCH_COVERAGE_WANTED_STR	BENCH_STR(BENCH_COVERAGE_WANTED_PCT) "%"

/* Median, min, max and the order-statistics interval [lo, hi] of the
 * median of the values that are not NAN, with its coverage. n == 1: lo and
 * hi are the value, coverage 0; n == 0: every double NAN. */
struct bench_spread {
	int n;
	double median, min, max;
	double lo, hi;		/* x(k) and x(n-k+1) of the sorted values */
	double coverage;	/* the probability that [lo, hi] holds the median */
};

/* Median of n values (v is left untouched, NAN values ignored); NAN if
 * none. */
double bench_median(const double *v, size_t n);

/* The coverage of [x(k), x(n-k+1)] for the median of n values: exact,
 * 1 - 2 * P(Binomial(n, 1/2) <= k - 1). 0 when k is 0 or beyond the
 * middle (2k > n + 1). */
double bench_median_coverage(unsigned int n, unsigned int k);

/* The k of the interval for n values: the largest whose coverage is at
 * least BENCH_COVERAGE_WANTED, else 1 ([min..max]); 0 when n is 0. */
unsigned int bench_median_interval_k(unsigned int n);

void bench_spread(const double *v, size_t n, struct bench_spread *s);

/* Per-pair ratios num[i] / den[i] (pairs with a NAN or a den <= 0 are
 * skipped) and their spread: the ratio of two modes measured in the same
 * interleaved round. */
void bench_ratio_spread(const double *num, const double *den, size_t n, struct bench_spread *s);

/* What an interval allows a report to say about x (1.0 for a ratio). */
enum bench_verdict {
	BENCH_VERDICT_NONE,		/* no value */
	BENCH_VERDICT_UNRANKED,		/* coverage below BENCH_COVERAGE_WANTED */
	BENCH_VERDICT_HOLDS,		/* the interval holds x: not distinguishable */
	BENCH_VERDICT_ABOVE,		/* the interval is above x */
	BENCH_VERDICT_BELOW,
};
enum bench_verdict bench_spread_verdict(const struct bench_spread *s, double x);
/* ABOVE or BELOW: the interval excludes x at the wanted coverage. */
bool bench_spread_distinguishable(const struct bench_spread *s, double x);

/*
 * A claim against several settings at once ("beats every global setting")
 * is the claim against each: the ratios against each one tallied by
 * verdict, and the claim made only when every one is above 1.0 at the
 * wanted coverage. Not against the best of them picked from the same
 * rounds: a maximum of noisy medians is biased upwards.
 */
struct bench_tally {
	int n;			/* ratios with a value */
	int above, below, holds, unranked;
};
/* Add one ratio (against 1.0); one without a value is left out. */
void bench_tally_add(struct bench_tally *t, const struct bench_spread *ratio);
/* Every ratio noted is above 1.0 at the wanted coverage (and there is one). */
bool bench_tally_all_above(const struct bench_tally *t);
/*
 * One setting against each of nr others measured in the same interleaved
 * rounds (mine[i] and theirs[j][i] from round i): ratio[j] is the spread of
 * the per-round ratios mine / theirs[j], or theirs[j] / mine when lower is
 * better (times: the ratio is then a speed), so that above 1.0 always means
 * mine is better. theirs[j] NULL: not compared (ratio[j] without a value).
 * *t is reset and tallies every ratio with a value.
 */
void bench_vs_each(const double *mine, const double *const theirs[], size_t nr, size_t rounds,
		   bool lower_is_better, struct bench_spread *ratio, struct bench_tally *t);
/* "above 1 of 4, n.d. 2, below 0, unranked 1"; "none" without ratios.
 * Returns buf. */
char *bench_tally_fmt(const struct bench_tally *t, char *buf, size_t len);

/* "-", "no ranking (coverage below 95%)", "not distinguishable",
 * "distinguishable" */
const char *bench_verdict_name(enum bench_verdict v);
/* The short mark after a ratio in a table: "" (distinguishable), "n.d."
 * (not distinguishable), "unranked" (coverage too low), "" for no value. */
const char *bench_verdict_mark(enum bench_verdict v);

/* "29958 [27100..31020] 75%" with fmt applied to each number ("%.0f",
 * "%.2f") and the interval's coverage; "-" when s->n == 0; only the median
 * when n == 1. Returns buf. */
char *bench_spread_fmt(const struct bench_spread *s, const char *fmt, char *buf, size_t len);
/* A ratio: bench_spread_fmt() and its mark against 1.0 after a space
 * ("0.960 [0.900..1.020] 75% unranked"). Returns buf. */
char *bench_ratio_fmt(const struct bench_spread *s, const char *fmt, char *buf, size_t len);

#endif
