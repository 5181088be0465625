/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* mthpctl bench: pure helpers (redis-benchmark CSV, medians, ratios, lists). */
#ifndef MTHPCTL_BENCH_CALC_H
#define MTHPCTL_BENCH_CALC_H

#include <stddef.h>
#include <linux/types.h>

/* One row of `redis-benchmark --csv`; latencies in ms, NAN when the output
 * does not carry them (redis-benchmark before 6.2 printed only rps). */
struct bench_redis_row {
	char test[32];
	double rps, avg, min, p50, p95, p99, max;
};

/* Parse redis-benchmark --csv output and return the row of test (e.g. "SET",
 * case-insensitive; NULL: the first row). 7.x prints a header line
 * "test","rps","avg_latency_ms",...; older versions print rows only.
 * Returns 0, -ENOENT (no such row) or -EINVAL (malformed). */
int bench_parse_redis_csv(const char *buf, const char *test, struct bench_redis_row *row);

/* Median of n values (v is left untouched); NAN if n == 0. NAN values are
 * ignored. */
double bench_median(const double *v, size_t n);
__u64 bench_median_u64(const __u64 *v, size_t n);

/* Percent change of x against base: (x - base) / base * 100; NAN if base is
 * 0 or either is NAN. */
double bench_pct(double x, double base);

/* Oracle ratio: rps / max(always, never); either may be NAN (mode not run).
 * NAN when both are. */
double bench_oracle(double rps, double always, double never);

#define BENCH_MAX_LIST 16
#define BENCH_HIGH_MAX (~0ULL)

/* "max,128M,1G" -> sizes (max = BENCH_HIGH_MAX). Returns the count or
 * -EINVAL (empty item, bad size, 0) / -E2BIG (more than max). */
int bench_parse_high_list(const char *s, __u64 *out, int max);

/* Benchmark modes. */
enum bench_mode { BENCH_ALWAYS, BENCH_NEVER, BENCH_POLICY, BENCH_NR_MODES };
/* "always,never,policy" (any order, unique prefixes, "all") -> bit mask of
 * 1 << enum bench_mode. Returns 0 or -EINVAL. */
int bench_parse_modes(const char *s, unsigned int *mask);

/* Split a policy spec "auto --threshold 50ms" into words (in place). Returns
 * the count or -E2BIG. */
int bench_split_words(char *s, char **words, int max);

#endif
