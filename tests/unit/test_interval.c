// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl bench: the interval of a median and its coverage
 * (bench_interval.c). */
#include <math.h>
#include <string.h>
#include "tests.h"
#include "bench/bench_interval.h"

#define close_to(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/*
 * The coverage of [x(k), x(n-k+1)] is 1 - 2 * T / 2^n with T the lower
 * tail C(n, 0) + ... + C(n, k - 1), from Pascal's triangle: tail[n][k - 1]
 * for n = 3..12 and every k up to the middle.
 */
static const unsigned int tail[13][6] = {
	[3] = { 1, 4 },
	[4] = { 1, 5 },
	[5] = { 1, 6, 16 },
	[6] = { 1, 7, 22 },
	[7] = { 1, 8, 29, 64 },
	[8] = { 1, 9, 37, 93 },
	[9] = { 1, 10, 46, 130, 256 },
	[10] = { 1, 11, 56, 176, 386 },
	[11] = { 1, 12, 67, 232, 562, 1024 },
	[12] = { 1, 13, 79, 299, 794, 1586 },
};

static void coverage_exact(void **state)
{
	unsigned int n, k;

	for (n = 3; n <= 12; n++)
		for (k = 1; 2 * k <= n + 1; k++)
			assert_true(bench_median_coverage(n, k) ==
				    1 - 2.0 * tail[n][k - 1] / (1u << n));
	/* the figures the reports quote */
	close_to(bench_median_coverage(3, 1), 0.75);
	close_to(bench_median_coverage(4, 1), 0.875);
	close_to(bench_median_coverage(5, 1), 0.9375);
	close_to(bench_median_coverage(6, 1), 0.96875);
	/* no interval: k 0, or past the middle */
	assert_true(bench_median_coverage(5, 0) == 0);
	assert_true(bench_median_coverage(5, 4) == 0);
	assert_true(bench_median_coverage(1, 1) == 0);
}

static void interval_k(void **state)
{
	/* the largest k of 95% or more, else 1 */
	static const unsigned int want[13] = {
		[1] = 1, [2] = 1, [3] = 1, [4] = 1, [5] = 1, [6] = 1, [7] = 1, [8] = 1,
		[9] = 2, [10] = 2, [11] = 2, [12] = 3,
	};
	unsigned int n;

	assert_int_equal(bench_median_interval_k(0), 0);
	for (n = 1; n <= 12; n++)
		assert_int_equal(bench_median_interval_k(n), want[n]);
	/* wide enough at 64 rounds, and no wider than it may be */
	n = bench_median_interval_k(64);
	assert_true(bench_median_coverage(64, n) >= BENCH_COVERAGE_WANTED);
	assert_true(bench_median_coverage(64, n + 1) < BENCH_COVERAGE_WANTED);
}

static void spread_of_rounds(void **state)
{
	const double three[] = { 1.05, 1.20, 1.10 };
	const double nine[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5 };
	const double gaps[] = { 29958, 27100, 31020, NAN, 30500, 28000 };
	const double one = 5;
	struct bench_spread s;
	char buf[64];

	/* 3 rounds: [min..max] at 75%, all above 1.0 and still no ranking */
	bench_spread(three, 3, &s);
	assert_int_equal(s.n, 3);
	close_to(s.median, 1.10);
	close_to(s.lo, 1.05);
	close_to(s.hi, 1.20);
	close_to(s.coverage, 0.75);
	assert_int_equal(bench_spread_verdict(&s, 1.0), BENCH_VERDICT_UNRANKED);
	assert_false(bench_spread_distinguishable(&s, 1.0));
	assert_string_equal(bench_verdict_name(BENCH_VERDICT_UNRANKED),
			    "no ranking (coverage below 95%)");
	assert_string_equal(bench_spread_fmt(&s, "%.2f", buf, sizeof(buf)),
			    "1.10 [1.05..1.20] 75%");
	assert_string_equal(bench_ratio_fmt(&s, "%.2f", buf, sizeof(buf)),
			    "1.10 [1.05..1.20] 75% unranked");
	/* 9 rounds: [x(2), x(8)] at 96.1% */
	bench_spread(nine, 9, &s);
	close_to(s.median, 5);
	close_to(s.lo, 2);
	close_to(s.hi, 8);
	close_to(s.coverage, 0.9609375);
	assert_string_equal(bench_spread_fmt(&s, "%.0f", buf, sizeof(buf)), "5 [2..8] 96.1%");
	/* NAN left out: 5 values, [min..max] at 93.75% */
	bench_spread(gaps, 6, &s);
	assert_int_equal(s.n, 5);
	close_to(s.median, 29958);
	close_to(s.lo, 27100);
	close_to(s.hi, 31020);
	assert_string_equal(bench_spread_fmt(&s, "%.0f", buf, sizeof(buf)),
			    "29958 [27100..31020] 93.8%");
	/* one value: no interval */
	bench_spread(&one, 1, &s);
	assert_int_equal(s.n, 1);
	assert_true(s.coverage == 0);
	assert_string_equal(bench_spread_fmt(&s, "%.0f", buf, sizeof(buf)), "5");
	assert_int_equal(bench_spread_verdict(&s, 1.0), BENCH_VERDICT_UNRANKED);
	/* none */
	bench_spread(gaps, 0, &s);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.median) && isnan(s.lo) && isnan(s.coverage));
	assert_string_equal(bench_spread_fmt(&s, "%.0f", buf, sizeof(buf)), "-");
	assert_int_equal(bench_spread_verdict(&s, 1.0), BENCH_VERDICT_NONE);
	assert_string_equal(bench_verdict_name(BENCH_VERDICT_NONE), "-");
}

static void ratio_verdicts(void **state)
{
	/* 6 rounds, every one faster: above 1.0 at 96.9% */
	const double a[] = { 110, 121, 99, 130, 105, 112 };
	const double b[] = { 100, 110, 90, 118, 100, 100 };
	/* 6 rounds around 1.0 */
	const double c[] = { 101, 95, 104, 99, 100, 98 };
	const double d[] = { 100, 100, 100, 100, 100, 100 };
	/* a zero or NAN in a pair drops the pair */
	const double e[] = { 5, NAN, 7 }, f[] = { 0, 3, 7 };
	struct bench_spread s;
	char buf[64];

	bench_ratio_spread(a, b, 6, &s);
	assert_int_equal(s.n, 6);
	close_to(s.coverage, 0.96875);
	assert_int_equal(bench_spread_verdict(&s, 1.0), BENCH_VERDICT_ABOVE);
	assert_true(bench_spread_distinguishable(&s, 1.0));
	assert_string_equal(bench_verdict_name(bench_spread_verdict(&s, 1.0)), "distinguishable");
	/* the slower one of the pair: below */
	bench_ratio_spread(b, a, 6, &s);
	assert_int_equal(bench_spread_verdict(&s, 1.0), BENCH_VERDICT_BELOW);
	bench_ratio_spread(c, d, 6, &s);
	assert_int_equal(bench_spread_verdict(&s, 1.0), BENCH_VERDICT_HOLDS);
	assert_false(bench_spread_distinguishable(&s, 1.0));
	assert_string_equal(bench_ratio_fmt(&s, "%.3f", buf, sizeof(buf)),
			    "0.995 [0.950..1.040] 96.9% n.d.");
	/* 5 of the 6 rounds: 93.75%, short of 95% */
	bench_ratio_spread(a, b, 5, &s);
	assert_int_equal(bench_spread_verdict(&s, 1.0), BENCH_VERDICT_UNRANKED);
	bench_ratio_spread(e, f, 3, &s);
	assert_int_equal(s.n, 1);
	close_to(s.median, 1.0);
}

static void tally(void **state)
{
	struct bench_spread above = { .n = 6, .median = 1.2, .lo = 1.1, .hi = 1.3, .coverage = 0.97 };
	struct bench_spread holds = { .n = 6, .median = 1.0, .lo = 0.9, .hi = 1.1, .coverage = 0.97 };
	struct bench_spread few = { .n = 3, .median = 1.2, .lo = 1.1, .hi = 1.3, .coverage = 0.75 };
	struct bench_spread none = { .n = 0 };
	struct bench_tally t = { 0 };
	char buf[80];

	assert_false(bench_tally_all_above(&t));	/* nothing beaten */
	assert_string_equal(bench_tally_fmt(&t, buf, sizeof(buf)), "none");
	bench_tally_add(&t, &above);
	bench_tally_add(&t, &none);			/* a setting not run */
	bench_tally_add(&t, &above);
	assert_true(bench_tally_all_above(&t));
	/* all above 1.0 but one at 75%: no claim */
	bench_tally_add(&t, &few);
	assert_false(bench_tally_all_above(&t));
	bench_tally_add(&t, &holds);
	assert_string_equal(bench_tally_fmt(&t, buf, sizeof(buf)),
			    "above 2 of 4, n.d. 1, below 0, unranked 1");
}

/* A mode's times against each static setting's, 6 interleaved rounds. */
static void vs_each(void **state)
{
	const double mine[6] = { 1.0, 1.1, 1.0, 1.2, 1.0, 1.1 };
	const double slower[6] = { 2.0, 2.1, 2.0, 2.3, 2.1, 2.0 };	/* every round slower */
	const double alike[6] = { 0.9, 1.2, 1.1, 1.1, 0.9, 1.2 };	/* faster in some rounds */
	const double *theirs[3] = { slower, NULL, alike };
	struct bench_spread r[3];
	struct bench_tally t = { .n = 9 };	/* reset by bench_vs_each() */

	bench_vs_each(mine, theirs, 3, 6, true, r, &t);
	assert_int_equal(r[0].n, 6);
	assert_true(r[0].lo > 1.0);		/* a speed: their time over mine */
	assert_int_equal(bench_spread_verdict(&r[0], 1.0), BENCH_VERDICT_ABOVE);
	assert_int_equal(r[1].n, 0);		/* not compared, not tallied */
	assert_int_equal(bench_spread_verdict(&r[2], 1.0), BENCH_VERDICT_HOLDS);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.above, 1);
	assert_int_equal(t.holds, 1);
	assert_false(bench_tally_all_above(&t));	/* beats one, not every one */
	/* the same with only the slower one: beats every one */
	theirs[2] = NULL;
	bench_vs_each(mine, theirs, 3, 6, true, r, &t);
	assert_true(bench_tally_all_above(&t));
	/* higher is better (a rate): the same figures now say mine is worse */
	bench_vs_each(mine, theirs, 3, 6, false, r, &t);
	assert_int_equal(bench_spread_verdict(&r[0], 1.0), BENCH_VERDICT_BELOW);
	assert_int_equal(t.below, 1);
	/* 3 rounds, all faster: 75%, no claim */
	bench_vs_each(mine, theirs, 3, 3, true, r, &t);
	assert_true(r[0].min > 1.0);
	assert_int_equal(t.unranked, 1);
	assert_false(bench_tally_all_above(&t));
}

int run_interval_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(coverage_exact), cmocka_unit_test(interval_k),
		cmocka_unit_test(spread_of_rounds), cmocka_unit_test(ratio_verdicts),
		cmocka_unit_test(tally), cmocka_unit_test(vs_each),
	};
	return cmocka_run_group_tests_name("bench interval", t, NULL, NULL);
}
