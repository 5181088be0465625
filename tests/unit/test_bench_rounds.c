// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl bench: the rule that stops the rounds (bench_stats.c) and
 * --until-width's parser (bench_calc.c). */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "tests.h"
#include "bench/bench_calc.h"

#define SEC 1000000000ULL

static void fixed_rounds(void **state)
{
	struct bench_rounds_rule r = { .min = 3, .max = 64 };

	assert_int_equal(bench_rounds_next(&r, 1, 10 * SEC, INFINITY), BENCH_ROUNDS_MORE);
	assert_int_equal(bench_rounds_next(&r, 2, 20 * SEC, 50), BENCH_ROUNDS_MORE);
	/* wide or narrow, three rounds and no width asked: stop */
	assert_int_equal(bench_rounds_next(&r, 3, 30 * SEC, 50), BENCH_ROUNDS_FIXED);
	assert_int_equal(bench_rounds_next(&r, 3, 30 * SEC, 0), BENCH_ROUNDS_FIXED);
}

static void until_width(void **state)
{
	struct bench_rounds_rule r = { .min = 3, .max = 10, .width_pct = 5 };

	/* narrow before --repeats: the minimum still runs */
	assert_int_equal(bench_rounds_next(&r, 2, 20 * SEC, 1), BENCH_ROUNDS_MORE);
	assert_int_equal(bench_rounds_next(&r, 3, 30 * SEC, 5.01), BENCH_ROUNDS_MORE);
	assert_int_equal(bench_rounds_next(&r, 4, 40 * SEC, 5), BENCH_ROUNDS_CONVERGED);
	/* a ratio without interval never converges */
	assert_int_equal(bench_rounds_next(&r, 4, 40 * SEC, INFINITY), BENCH_ROUNDS_MORE);
	/* no ratio at all (one mode): nothing to wait for, after the minimum */
	assert_int_equal(bench_rounds_next(&r, 2, 20 * SEC, -1), BENCH_ROUNDS_MORE);
	assert_int_equal(bench_rounds_next(&r, 3, 30 * SEC, -1), BENCH_ROUNDS_CONVERGED);
	/* the room of the benchmark is the last word */
	assert_int_equal(bench_rounds_next(&r, 10, 100 * SEC, 6), BENCH_ROUNDS_ROUND_CAP);
	/* converged on the last round it had room for: converged */
	assert_int_equal(bench_rounds_next(&r, 10, 100 * SEC, 4), BENCH_ROUNDS_CONVERGED);
}

static void time_cap(void **state)
{
	struct bench_rounds_rule r = { .min = 2, .max = 64, .width_pct = 2, .max_ns = 100 * SEC };

	/* 3 rounds in 60 s: a 4th would end at 80 s, under the cap */
	assert_int_equal(bench_rounds_next(&r, 3, 60 * SEC, 10), BENCH_ROUNDS_MORE);
	/* 4 rounds in 80 s: a 5th would end at 100 s, on the cap: allowed */
	assert_int_equal(bench_rounds_next(&r, 4, 80 * SEC, 10), BENCH_ROUNDS_MORE);
	/* 5 rounds in 100 s: a 6th would end past it */
	assert_int_equal(bench_rounds_next(&r, 5, 100 * SEC, 10), BENCH_ROUNDS_TIME_CAP);
	/* converged wins over the cap when both hold */
	assert_int_equal(bench_rounds_next(&r, 5, 100 * SEC, 1.5), BENCH_ROUNDS_CONVERGED);
	/* the minimum runs even past the cap */
	r.min = 8;
	assert_int_equal(bench_rounds_next(&r, 5, 200 * SEC, 10), BENCH_ROUNDS_MORE);
	/* --max-time alone: rounds until the cap, never "converged" */
	r = (struct bench_rounds_rule){ .min = 1, .max = 64, .max_ns = 30 * SEC };
	assert_int_equal(bench_rounds_next(&r, 2, 10 * SEC, 0), BENCH_ROUNDS_MORE);
	assert_int_equal(bench_rounds_next(&r, 3, 27 * SEC, 0), BENCH_ROUNDS_TIME_CAP);
	assert_string_equal(bench_rounds_why_name(BENCH_ROUNDS_TIME_CAP), "time cap reached");
	assert_string_equal(bench_rounds_why_name(BENCH_ROUNDS_CONVERGED), "converged");
}

static void widest(void **state)
{
	struct bench_spread a = { .n = 6, .median = 1.0, .lo = 0.98, .hi = 1.02, .coverage = 0.97 };
	struct bench_spread b = { .n = 6, .median = 0.5, .lo = 0.45, .hi = 0.55, .coverage = 0.97 };
	/* narrow, but 3 rounds: [min..max] at 75% */
	struct bench_spread few = { .n = 3, .median = 1.0, .lo = 0.99, .hi = 1.01, .coverage = 0.75 };
	struct bench_spread one = { .n = 1, .median = 1.0, .lo = NAN, .hi = NAN };
	struct bench_spread none = { .n = 0, .median = NAN, .lo = NAN, .hi = NAN };
	struct bench_rounds_widest w;
	double v[] = { 1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02 };
	struct bench_spread s;

	assert_true(fabs(bench_spread_width_pct(&a) - 4) < 1e-9);
	assert_true(fabs(bench_spread_width_pct(&b) - 20) < 1e-9);
	assert_true(isinf(bench_spread_width_pct(&one)));
	bench_rounds_widest_reset(&w);
	assert_true(w.pct < 0);
	bench_rounds_widest_note(&w, "none", &none);	/* a skipped mode: left out */
	assert_true(w.pct < 0);
	bench_rounds_widest_note(&w, "a", &a);
	bench_rounds_widest_note(&w, "b", &b);
	bench_rounds_widest_note(&w, "a again", &a);
	assert_string_equal(w.name, "b");
	assert_true(fabs(w.pct - 20) < 1e-9);
	/* short of 95%: not converged, however narrow */
	bench_rounds_widest_note(&w, "few", &few);
	assert_string_equal(w.name, "few");
	assert_true(isinf(w.pct));
	bench_rounds_widest_reset(&w);
	bench_rounds_widest_note(&w, "one", &one);
	assert_string_equal(w.name, "one");
	assert_true(isinf(w.pct));
	/* a real interval of 7 rounds: finite, and what the rule reads */
	bench_rounds_widest_reset(&w);
	bench_spread(v, 7, &s);
	bench_rounds_widest_note(&w, "seven", &s);
	assert_true(isfinite(w.pct) && w.pct > 0);
}

static void pct(void **state)
{
	double v;

	assert_int_equal(bench_parse_pct("5", &v), 0);
	assert_true(v == 5);
	assert_int_equal(bench_parse_pct("2.5%", &v), 0);
	assert_true(v == 2.5);
	assert_int_equal(bench_parse_pct("100", &v), 0);
	assert_int_equal(bench_parse_pct("0", &v), -EINVAL);
	assert_int_equal(bench_parse_pct("101", &v), -EINVAL);
	assert_int_equal(bench_parse_pct("-1", &v), -EINVAL);
	assert_int_equal(bench_parse_pct("5%%", &v), -EINVAL);
	assert_int_equal(bench_parse_pct("x", &v), -EINVAL);
	assert_int_equal(bench_parse_pct("", &v), -EINVAL);
	assert_int_equal(bench_parse_pct(NULL, &v), -EINVAL);
}

int run_bench_rounds_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(fixed_rounds), cmocka_unit_test(until_width),
		cmocka_unit_test(time_cap), cmocka_unit_test(widest), cmocka_unit_test(pct),
	};
	return cmocka_run_group_tests_name("bench rounds", t, NULL, NULL);
}
