// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>
#include "tests.h"
#include "bench_calc.h"

#define close_to(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* Captured from redis-benchmark 7.0.15 (Debian 12):
 * redis-benchmark --csv -p 16399 -r 1000 -n 2000 -d 1024 -c 4 -P 8 -t set */
static const char real_7_0[] =
	"\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\","
	"\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n"
	"\"SET\",\"153846.16\",\"0.183\",\"0.048\",\"0.159\",\"0.255\",\"2.103\",\"2.135\"\n";

static void csv_real_output(void **state)
{
	struct bench_redis_row r;

	assert_int_equal(bench_parse_redis_csv(real_7_0, "SET", &r), 0);
	assert_string_equal(r.test, "SET");
	close_to(r.rps, 153846.16);
	close_to(r.avg, 0.183);
	close_to(r.min, 0.048);
	close_to(r.p50, 0.159);
	close_to(r.p95, 0.255);
	close_to(r.p99, 2.103);
	close_to(r.max, 2.135);
	/* case-insensitive, NULL = first row */
	assert_int_equal(bench_parse_redis_csv(real_7_0, "set", &r), 0);
	assert_int_equal(bench_parse_redis_csv(real_7_0, NULL, &r), 0);
	close_to(r.rps, 153846.16);
	assert_int_equal(bench_parse_redis_csv(real_7_0, "GET", &r), -ENOENT);
}

static void csv_variants(void **state)
{
	struct bench_redis_row r;
	/* -t set,get, CRLF line ends, a second real line */
	const char two[] =
		"\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\","
		"\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\r\n"
		"\"SET\",\"124999.99\",\"0.235\",\"0.048\",\"0.103\",\"0.279\",\"4.695\",\"4.751\"\r\n"
		"\"GET\",\"200000.00\",\"0.100\",\"0.040\",\"0.090\",\"0.150\",\"0.300\",\"0.400\"\r\n";
	/* columns in another order: found by name */
	const char reordered[] =
		"\"rps\",\"test\",\"p99_latency_ms\",\"avg_latency_ms\"\n"
		"\"1000.50\",\"SET\",\"9.5\",\"3.25\"\n";
	/* redis-benchmark < 6.2: no header, rps only */
	const char legacy[] = "\"SET\",\"46555.00\"\n";

	assert_int_equal(bench_parse_redis_csv(two, "GET", &r), 0);
	close_to(r.rps, 200000.0);
	close_to(r.p99, 0.3);
	assert_int_equal(bench_parse_redis_csv(two, "SET", &r), 0);
	close_to(r.rps, 124999.99);
	close_to(r.max, 4.751);
	assert_int_equal(bench_parse_redis_csv(reordered, "SET", &r), 0);
	close_to(r.rps, 1000.5);
	close_to(r.p99, 9.5);
	close_to(r.avg, 3.25);
	assert_true(isnan(r.p50) && isnan(r.p95) && isnan(r.min));
	assert_int_equal(bench_parse_redis_csv(legacy, "SET", &r), 0);
	close_to(r.rps, 46555.0);
	assert_true(isnan(r.avg) && isnan(r.p99));
}

static void csv_errors(void **state)
{
	struct bench_redis_row r;

	assert_int_equal(bench_parse_redis_csv("", "SET", &r), -ENOENT);
	assert_int_equal(bench_parse_redis_csv(NULL, "SET", &r), -EINVAL);
	/* the header only: redis-benchmark could not connect */
	assert_int_equal(bench_parse_redis_csv(
		"\"test\",\"rps\",\"avg_latency_ms\"\n", "SET", &r), -ENOENT);
	/* junk numbers, unterminated quote, single field */
	assert_int_equal(bench_parse_redis_csv(
		"\"test\",\"rps\"\n\"SET\",\"fast\"\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv(
		"\"test\",\"rps\"\n\"SET\",\"-5\"\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv(
		"\"test\",\"rps\"\n\"SET\",\"1\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv("Could not connect\n", "SET", &r), -EINVAL);
	/* a header without rps */
	assert_int_equal(bench_parse_redis_csv(
		"\"test\",\"avg_latency_ms\"\n\"SET\",\"1\"\n", "SET", &r), -EINVAL);
	/* a row shorter than the header */
	assert_int_equal(bench_parse_redis_csv(
		"\"test\",\"rps\",\"avg_latency_ms\"\n\"SET\",\"1\"\n", "SET", &r), -EINVAL);
}

static void median(void **state)
{
	const double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };
	const double withnan[] = { NAN, 5, NAN, 7, 6 };
	const __u64 u[] = { 9, 1, 5, 3 };
	double one = 42;

	close_to(bench_median(odd, 3), 2);
	close_to(bench_median(even, 4), 2.5);
	close_to(bench_median(withnan, 5), 6);
	close_to(bench_median(&one, 1), 42);
	assert_true(isnan(bench_median(odd, 0)));
	assert_true(isnan(bench_median(withnan, 1)));
	assert_true(bench_median_u64(u, 4) == 3);	/* lower middle */
	assert_true(bench_median_u64(u, 3) == 5);
	assert_true(bench_median_u64(u, 0) == 0);
	/* input untouched */
	assert_true(odd[0] == 3 && odd[1] == 1);
}

static void ratios(void **state)
{
	/* baseline.md figures: always collapses under pressure */
	close_to(bench_oracle(46555, 46555, 34465), 1.0);
	close_to(bench_oracle(34465, 46555, 34465), 34465.0 / 46555);
	close_to(bench_oracle(1816, 1816, 29159), 1816.0 / 29159);
	close_to(bench_oracle(27701, 1816, 29159), 27701.0 / 29159);
	close_to(bench_oracle(10, NAN, 20), 0.5);
	close_to(bench_oracle(10, 40, NAN), 0.25);
	assert_true(isnan(bench_oracle(10, NAN, NAN)));
	assert_true(isnan(bench_oracle(NAN, 1, 2)));
	assert_true(isnan(bench_oracle(1, 0, 0)));
	close_to(bench_pct(34465, 46555), (34465.0 - 46555) / 46555 * 100);
	close_to(bench_pct(110, 100), 10);
	close_to(bench_pct(100, 100), 0);
	assert_true(isnan(bench_pct(1, 0)));
	assert_true(isnan(bench_pct(NAN, 1)));
}

static void lists(void **state)
{
	__u64 v[BENCH_MAX_LIST];
	unsigned int m = 0;
	char spec[] = "  fixed --max-size\t64K ", spec2[] = "a b c", *w[4];

	assert_int_equal(bench_parse_high_list("max", v, BENCH_MAX_LIST), 1);
	assert_true(v[0] == BENCH_HIGH_MAX);
	assert_int_equal(bench_parse_high_list("max,128M,1G", v, BENCH_MAX_LIST), 3);
	assert_true(v[1] == 128ULL << 20 && v[2] == 1ULL << 30);
	assert_int_equal(bench_parse_high_list("max,128M", v, 1), -E2BIG);
	assert_int_equal(bench_parse_high_list("", v, 4), -EINVAL);
	assert_int_equal(bench_parse_high_list("max,", v, 4), -EINVAL);
	assert_int_equal(bench_parse_high_list(",max", v, 4), -EINVAL);
	assert_int_equal(bench_parse_high_list("max,,1G", v, 4), -EINVAL);
	assert_int_equal(bench_parse_high_list("0", v, 4), -EINVAL);
	assert_int_equal(bench_parse_high_list("12Q", v, 4), -EINVAL);

	assert_int_equal(bench_parse_modes("always,never,policy", &m), 0);
	assert_int_equal(m, 7);
	assert_int_equal(bench_parse_modes("p,a", &m), 0);
	assert_int_equal(m, (1 << BENCH_POLICY) | (1 << BENCH_ALWAYS));
	assert_int_equal(bench_parse_modes("all", &m), 0);
	assert_int_equal(m, 7);
	assert_int_equal(bench_parse_modes("never", &m), 0);
	assert_int_equal(m, 1 << BENCH_NEVER);
	assert_int_equal(bench_parse_modes("sometimes", &m), -EINVAL);
	assert_int_equal(bench_parse_modes("", &m), -EINVAL);
	assert_int_equal(bench_parse_modes("always,", &m), -EINVAL);

	assert_int_equal(bench_split_words(spec, w, 4), 3);
	assert_string_equal(w[0], "fixed");
	assert_string_equal(w[1], "--max-size");
	assert_string_equal(w[2], "64K");
	assert_int_equal(bench_split_words(spec2, w, 2), -E2BIG);
}

int run_bench_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(csv_real_output), cmocka_unit_test(csv_variants),
		cmocka_unit_test(csv_errors), cmocka_unit_test(median),
		cmocka_unit_test(ratios), cmocka_unit_test(lists),
	};
	return cmocka_run_group_tests_name("bench", t, NULL, NULL);
}
