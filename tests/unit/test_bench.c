// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>
#include "tests.h"
#include "bench/bench_calc.h"

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
	/* not measurements: infinite, NaN, signed, spaced (fuzz_redis_csv) */
	assert_int_equal(bench_parse_redis_csv("SET,inf\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv("SET,1e999\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv("SET,nan\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv("SET,+5\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv("SET, 5\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv("\"test\",\"rps\",\"p99_latency_ms\"\n"
					       "\"SET\",\"5\",\"-inf\"\n", "SET", &r), -EINVAL);
	assert_int_equal(bench_parse_redis_csv("SET,5\n", "SET", &r), 0);
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
	double odd[] = { 3, 1, 2 };	/* not const: bench_median() must not sort it */
	const double even[] = { 4, 1, 3, 2 };
	const double withnan[] = { NAN, 5, NAN, 7, 6 };
	__u64 u[] = { 9, 1, 5, 3 };	/* not const, as odd */
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
	assert_true(odd[0] == 3 && odd[1] == 1 && odd[2] == 2);
	assert_true(u[0] == 9 && u[1] == 1 && u[2] == 5 && u[3] == 3);
}

static void ratios(void **state)
{
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
	assert_int_equal(m, (1 << BENCH_NR_MODES) - 1);
	assert_int_equal(bench_parse_modes("simple,host", &m), 0);
	assert_int_equal(m, (1 << BENCH_SIMPLE) | (1 << BENCH_HOST));
	assert_false(bench_mode_static(BENCH_SIMPLE) || bench_mode_static(BENCH_POLICY));
	assert_true(bench_mode_static(BENCH_HOST) && bench_mode_static(BENCH_NR_MODES));
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

/* memaslap's closing line, as Debian's memcaslap 1.1.4 prints it */
/* Captured from redis-server 7.0.15 (Debian 12) after redis-benchmark -n 2000
 * -t set: INFO commandstats latencystats */
static const char info_7_0[] =
	"$336\r\n# Commandstats\r\n"
	"cmdstat_config|get:calls=2,usec=10,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n"
	"cmdstat_set:calls=2000,usec=401,usec_per_call=0.20,rejected_calls=0,failed_calls=0\r\n"
	"\r\n# Latencystats\r\n"
	"latency_percentiles_usec_config|get:p50=3.007,p99=7.007,p99.9=7.007\r\n"
	"latency_percentiles_usec_set:p50=0.001,p99=1.003,p99.9=5.023\r\n\r\n";

static void redis_info(void **state)
{
	/* latency-tracking no: no percentiles; the next line's p99 is not
	 * the command's */
	const char untracked[] =
		"# Commandstats\r\ncmdstat_set:calls=7,usec=1\r\n\r\n# Latencystats\r\n"
		"latency_percentiles_usec_set:p50=1.0\r\nlatency_percentiles_usec_get:p99=9.0\r\n";
	__u64 calls;
	double p99;

	assert_int_equal(bench_parse_redis_info(info_7_0, "set", &calls, &p99), 0);
	assert_int_equal(calls, 2000);
	close_to(p99, 1.003 / 1000);
	/* config|get is not set; a command never called: 0, no latency */
	assert_int_equal(bench_parse_redis_info(info_7_0, "config|get", &calls, &p99), 0);
	assert_int_equal(calls, 2);
	assert_int_equal(bench_parse_redis_info(info_7_0, "get", &calls, &p99), 0);
	assert_int_equal(calls, 0);
	assert_true(isnan(p99));
	assert_int_equal(bench_parse_redis_info(untracked, "set", &calls, &p99), 0);
	assert_int_equal(calls, 7);
	assert_true(isnan(p99));
	/* not INFO's reply, or a count that is not one */
	assert_int_equal(bench_parse_redis_info("-ERR unknown command\r\n", "set", &calls, &p99),
			 -EINVAL);
	assert_int_equal(bench_parse_redis_info("# Commandstats\r\ncmdstat_set:calls=x,\r\n", "set",
						&calls, &p99), -EINVAL);
}

static void memaslap_output(void **state)
{
	static const char out[] =
		"servers: 127.0.0.1:16393\nthreads count: 1\nconcurrency: 8\n"
		"cmd_get: 18000\ncmd_set: 2000\nget_misses: 0\n\n"
		"Run time: 0.2s Ops: 20000 TPS: 96455 Net_rate: 107.9M/s\n";
	static const char two[] =
		"Run time: 1.0s Ops: 10 TPS: 10 Net_rate: 1M/s\n"
		"Run time: 12.5s Ops: 200000 TPS: 16000 Net_rate: 9.1M/s\n";
	double tps = 0, secs = 0;

	assert_int_equal(bench_parse_memaslap(out, &tps, &secs), 0);
	assert_true(tps == 96455 && secs == 0.2);
	/* the last line is the closing one */
	assert_int_equal(bench_parse_memaslap(two, &tps, &secs), 0);
	assert_true(tps == 16000 && secs == 12.5);
	assert_int_equal(bench_parse_memaslap("connection refused\n", &tps, &secs), -ENOENT);
	assert_int_equal(bench_parse_memaslap("Run time: xs Ops: 1 TPS: 1\n", &tps, &secs),
			 -EINVAL);
	assert_int_equal(bench_parse_memaslap("Run time: 1s Ops: 1\nTPS: 5\n", &tps, &secs),
			 -EINVAL);
	assert_int_equal(bench_parse_memaslap("Run time: 1s Ops: 1 TPS: -5\n", &tps, &secs),
			 -EINVAL);
}

/* --policy "--object FILE [--ops NAME]" */
static void object_words(void **state)
{
	char *ok1[] = { "--object", "my.bpf.o" }, *ok2[] = { "--ops=x_ops", "--object=a/b.o" };
	char *bad[][3] = {
		{ "--ops", "x" },			/* no --object */
		{ "--object" },				/* its value missing */
		{ "--object", "a.o", "--private" },	/* not an option of its */
		{ "--object", "a.o", "--object=b.o" },	/* twice */
		{ "--object=" },			/* empty */
	};
	static const int nbad[] = { 2, 1, 3, 3, 1 };
	const char *file, *ops;
	char err[256];
	unsigned int i;

	assert_int_equal(bench_parse_object_words(ok1, 2, &file, &ops, err, sizeof(err)), 0);
	assert_string_equal(file, "my.bpf.o");
	assert_null(ops);
	assert_int_equal(bench_parse_object_words(ok2, 2, &file, &ops, err, sizeof(err)), 0);
	assert_string_equal(file, "a/b.o");
	assert_string_equal(ops, "x_ops");
	for (i = 0; i < sizeof(nbad) / sizeof(nbad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(bench_parse_object_words(bad[i], nbad[i], &file, &ops, err,
							  sizeof(err)), -EINVAL);
		assert_true(err[0] != '\0');
	}
}

static void prng(void **state)
{
	__u64 st = 0;

	/* the PRNG is splitmix64: the first value for seed 0 */
	assert_true(bench_prng_next(&st) == 0xe220a8397b1dcdafULL);
}

#define KPF(bit) (1ULL << (bit))
#define ANON KPF(BENCH_KPF_ANON)
#define HEAD (ANON | KPF(BENCH_KPF_COMPOUND_HEAD))
#define TAIL (ANON | KPF(BENCH_KPF_COMPOUND_TAIL))

static void folios(void **state)
{
	struct bench_folios f;
	int i;

	bench_folios_init(&f);
	/* a 2M folio: head + 511 tails */
	bench_folios_feed(&f, true, 1000, HEAD);
	for (i = 1; i < 512; i++)
		bench_folios_feed(&f, true, 1000 + i, TAIL);
	/* a 16K folio right after, then two 4K pages */
	bench_folios_feed(&f, true, 5000, HEAD);
	for (i = 1; i < 4; i++)
		bench_folios_feed(&f, true, 5000 + i, TAIL);
	bench_folios_feed(&f, true, 7000, ANON);
	bench_folios_feed(&f, true, 7001, ANON);
	/* absent, file-backed and zero pages: not counted */
	bench_folios_feed(&f, false, 0, 0);
	bench_folios_feed(&f, true, 8000, 0);
	bench_folios_feed(&f, true, 8001, ANON | KPF(BENCH_KPF_ZERO_PAGE));
	/* a 64K folio of which the mapping shows only 9 pages (rounded up to 64K) */
	bench_folios_feed(&f, true, 9000, HEAD);
	for (i = 1; i < 9; i++)
		bench_folios_feed(&f, true, 9000 + i, TAIL);
	bench_folios_flush(&f);
	/* tails of a folio whose head is outside the mapping, then tails of
	 * another folio (PFN jump): two folios */
	bench_folios_feed(&f, true, 20001, TAIL);
	bench_folios_feed(&f, true, 20002, TAIL);
	bench_folios_feed(&f, true, 30003, TAIL);
	bench_folios_flush(&f);
	bench_folios_flush(&f);	/* idempotent */

	assert_true(f.bytes[9] == 2ULL << 20);
	assert_true(f.bytes[2] == 16384);
	assert_true(f.bytes[0] == 2 * 4096 + 4096);	/* 2 small + 1 lone tail */
	assert_true(f.bytes[4] == 9 * 4096);
	assert_true(f.bytes[1] == 2 * 4096);
	assert_true(f.bytes[3] == 0 && f.bytes[8] == 0);
}

static void memstat(void **state)
{
	/* an excerpt of a 7.x memory.stat */
	const char a[] = "anon 1048576\nfile 0\npgmajfault 3\npswpin 0\npswpout 10\n"
			 "thp_swpout 0\nthp_swpout_fallback 1\nworkingset_refault_anon 2\n";
	const char b[] = "anon 2048\npgmajfault 9\npswpin 4\npswpout 522\n"
			 "thp_swpout 1\nthp_swpout_fallback 1\nworkingset_refault_anon 7\n";
	const char old[] = "anon 2048\npgmajfault 9\n";
	struct bench_memstat x, y, d;

	bench_memstat_parse(a, &x);
	bench_memstat_parse(b, &y);
	bench_memstat_delta(&x, &y, &d);
	assert_true(d.have[BENCH_MS_PSWPOUT] && d.v[BENCH_MS_PSWPOUT] == 512);
	assert_true(d.v[BENCH_MS_PSWPIN] == 4 && d.v[BENCH_MS_THP_SWPOUT] == 1);
	assert_true(d.v[BENCH_MS_THP_SWPOUT_FALLBACK] == 0);
	assert_true(d.v[BENCH_MS_WORKINGSET_REFAULT_ANON] == 5);
	assert_true(d.v[BENCH_MS_PGMAJFAULT] == 6);
	/* a kernel without the swap keys: absent, not 0 */
	bench_memstat_parse(old, &x);
	assert_false(x.have[BENCH_MS_PSWPOUT]);
	assert_true(x.have[BENCH_MS_PGMAJFAULT]);
	bench_memstat_delta(&x, &y, &d);
	assert_false(d.have[BENCH_MS_PSWPOUT]);
	assert_true(d.have[BENCH_MS_PGMAJFAULT] && d.v[BENCH_MS_PGMAJFAULT] == 0);
	bench_memstat_parse(NULL, &x);
	assert_false(x.have[BENCH_MS_PGMAJFAULT]);

	assert_true(bench_swap_attributed(512, 1000, 1000));
	assert_true(bench_swap_attributed(0, 0, 0));
	assert_true(bench_swap_attributed(512, 1005, 1000));	/* within 16 pages */
	assert_false(bench_swap_attributed(512, 2000, 1000));	/* others swapped too */
	assert_false(bench_swap_attributed(4096, 1000, 1000));	/* sizes exceed the cgroup */
}

static void size_list(void **state)
{
	__u64 v[BENCH_MAX_LIST];

	assert_int_equal(bench_parse_size_list("16K,32K,64K,2M", v, BENCH_MAX_LIST), 4);
	assert_true(v[0] == 16384 && v[3] == 2ULL << 20);
	assert_int_equal(bench_parse_size_list("4K", v, 4), -EINVAL);
	assert_int_equal(bench_parse_size_list("48K", v, 4), -EINVAL);
	assert_int_equal(bench_parse_size_list("16K,16K", v, 4), -EINVAL);
	assert_int_equal(bench_parse_size_list("16K,", v, 4), -EINVAL);
	assert_int_equal(bench_parse_size_list("max", v, 4), -EINVAL);
	assert_int_equal(bench_parse_size_list("16K,32K", v, 1), -E2BIG);
}

/* Over n rounds every column runs once in every position, and no column
 * runs right after the same other one in every round. */
static void round_order(void **state)
{
	int sel[] = { 0, 2, 3 }, n = 3, rep, i, pos[4][3] = {}, after[4][4] = {};

	for (rep = 0; rep < n; rep++)
		for (i = 0; i < n; i++) {
			int m = bench_round_col(sel, n, rep, i);

			pos[m][i]++;
			if (i)
				after[m][bench_round_col(sel, n, rep, i - 1)]++;
		}
	for (i = 0; i < n; i++) {
		assert_int_equal(pos[sel[i]][0] + pos[sel[i]][1] + pos[sel[i]][2], n);
		assert_int_equal(pos[sel[i]][i], 1);
		for (rep = 0; rep < n; rep++)
			assert_true(after[sel[i]][sel[rep]] < n);
	}
	/* one column: always first */
	assert_int_equal(bench_round_col(sel, 1, 5, 0), 0);
}

static void counts(void **state)
{
	__u64 v;

	assert_int_equal(bench_parse_count("16", 1, 100, &v), 0);
	assert_true(v == 16);
	assert_int_equal(bench_parse_count("0", 1, 100, &v), -EINVAL);
	assert_int_equal(bench_parse_count("101", 1, 100, &v), -EINVAL);
	assert_int_equal(bench_parse_count("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(bench_parse_count(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(bench_parse_count("1k", 0, 100, &v), -EINVAL);
	assert_int_equal(bench_parse_count("99999999999999999999", 0, ~0ULL, &v), -EINVAL);
	assert_int_equal(bench_parse_count("", 0, 100, &v), -EINVAL);
	assert_int_equal(bench_parse_count(NULL, 0, 100, &v), -EINVAL);
}

/* /proc/buddyinfo of the 2 GiB VM (kernel 7.3.4, 11 orders) */
static const char buddyinfo_vm[] =
	"Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
	"Node 0, zone    DMA32    120     88     51     33     20     12      7      5      4      6    301 \n";

static void start_state(void **state)
{
	__u64 v;

	/* order 9: DMA 1 + 3 x 2, DMA32 6 + 301 x 2 */
	assert_int_equal(bench_parse_buddyinfo(buddyinfo_vm, 9, &v), 0);
	assert_true(v == 1 + 6 + 6 + 602);
	assert_int_equal(bench_parse_buddyinfo(buddyinfo_vm, 10, &v), 0);
	assert_true(v == 3 + 301);
	/* no column for order 11; no zone at all; a word among the counts */
	assert_int_equal(bench_parse_buddyinfo(buddyinfo_vm, 11, &v), -EINVAL);
	assert_int_equal(bench_parse_buddyinfo("", 9, &v), -EINVAL);
	assert_int_equal(bench_parse_buddyinfo("Node 0, zone Normal 1 2 x 4\n", 1, &v), -EINVAL);

	assert_int_equal(bench_parse_meminfo_kb("MemTotal:        2014532 kB\nSwapTotal:       1048572 kB\n"
						"SwapFree:         1040000 kB\n", "SwapFree", &v), 0);
	assert_true(v == 1040000);
	/* a key that is only a prefix of another is not it */
	assert_int_equal(bench_parse_meminfo_kb("SwapFreeX: 1 kB\n", "SwapFree", &v), -ENOENT);
	assert_int_equal(bench_parse_meminfo_kb("Cached: kB\n", "Cached", &v), -EINVAL);
}

int run_bench_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(csv_real_output), cmocka_unit_test(csv_variants),
		cmocka_unit_test(csv_errors), cmocka_unit_test(median),
		cmocka_unit_test(ratios), cmocka_unit_test(lists), cmocka_unit_test(object_words), cmocka_unit_test(memaslap_output), cmocka_unit_test(redis_info), cmocka_unit_test(counts), cmocka_unit_test(round_order),
		cmocka_unit_test(prng), cmocka_unit_test(folios),
		cmocka_unit_test(memstat), cmocka_unit_test(size_list), cmocka_unit_test(start_state),
	};
	return cmocka_run_group_tests_name("bench", t, NULL, NULL);
}
