/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* mthpctl bench: pure helpers. Parsers (redis-benchmark CSV, lists, folio
 * sizes, memory.stat) in bench_calc.c; percent changes and the rounds'
 * rule in bench_stats.c; medians and their intervals in bench_interval.h. */
#ifndef MTHPCTL_BENCH_CALC_H
#define MTHPCTL_BENCH_CALC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "bench_interval.h"

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

/* redis' reply to INFO commandstats latencystats (7.0 and later): the
 * calls of command cmd (lower case, e.g. "set") and their p99 inside redis
 * in ms (NAN: redis tracks no latency). A command not called yet: 0 calls,
 * NAN. 0, or -EINVAL when buf holds no command statistics or malformed
 * ones. */
int bench_parse_redis_info(const char *buf, const char *cmd, __u64 *calls, double *p99_ms);

/* memaslap's (memcaslap in Debian's libmemcached-tools) closing line
 * "Run time: 0.2s Ops: 20000 TPS: 96455 Net_rate: 107.9M/s" anywhere in buf:
 * its operations per second and run time. 0, -ENOENT (no such line) or
 * -EINVAL (malformed). */
int bench_parse_memaslap(const char *buf, double *tps, double *secs);

/* Median of n counts; an even n gives the lower middle (an observed value). */
__u64 bench_median_u64(const __u64 *v, size_t n);

/* Percent change of x against base: (x - base) / base * 100; NAN if base is
 * 0 or either is NAN. */
double bench_pct(double x, double base);

/* A decimal count from min to max ("16"; no sign, no space, no unit).
 * Returns 0 or -EINVAL. */
int bench_parse_count(const char *s, __u64 min, __u64 max, __u64 *v);

/* A percentage above 0 and at most 100 ("5", "2.5", "5%"). 0 or -EINVAL. */
int bench_parse_pct(const char *s, double *v);

#define BENCH_MAX_LIST 16
#define BENCH_HIGH_MAX (~0ULL)

/* "max,128M,1G" -> sizes (max = BENCH_HIGH_MAX). Returns the count or
 * -EINVAL (empty item, bad size, 0) / -E2BIG (more than max). */
int bench_parse_high_list(const char *s, __u64 *out, int max);

/*
 * Benchmark modes: every size at always or never; the --policy (default
 * auto) or the simple baseline attached to the run's cgroup, on the host's
 * setting (--host); the host's setting alone (host: worth a row only on a
 * madvise host, where it differs from always).
 */
enum bench_mode { BENCH_ALWAYS, BENCH_NEVER, BENCH_POLICY, BENCH_SIMPLE, BENCH_HOST,
		  BENCH_NR_MODES };
#define BENCH_MODE_NAMES	{ "always", "never", "policy", "simple", "host" }
/* "always,never,policy" (any order, unique prefixes, "all") -> bit mask of
 * 1 << enum bench_mode. Returns 0 or -EINVAL. */
int bench_parse_modes(const char *s, unsigned int *mask);
/* A static setting (no policy): what a policy is compared with, each one. */
static inline bool bench_mode_static(int m)
{
	return m != BENCH_POLICY && m != BENCH_SIMPLE;
}

/* --policy's words for a policy of the user's own: "--object FILE" and
 * optionally "--ops NAME" (each also as --object=FILE, --ops=NAME), in any
 * order. *file and *ops point into words (ops NULL when not given). 0, or
 * -EINVAL with why in err. */
int bench_parse_object_words(char *const words[], int n, const char **file, const char **ops,
			     char *err, size_t len);

/* Split a policy spec "auto --threshold 50ms" into words (in place). Returns
 * the count or -E2BIG. */
int bench_split_words(char *s, char **words, int max);

/* --- rounds: when to stop (bench_stats.c; run by bench_rounds.c) ---- */

/*
 * A benchmark runs rounds (every selected mode once, interleaved) until its
 * rule says stop. Without a width and a time cap it runs min rounds (fixed:
 * --repeats). With --until-width it goes on past min until the interval
 * of every ratio it reports has the wanted coverage (BENCH_COVERAGE_WANTED:
 * 6 rounds at least) and is at most width_pct percent of that ratio's
 * median wide (converged), or until the next round would end past
 * --max-time (time cap reached), or until max rounds (round cap reached).
 * --max-time alone spends the time: rounds until the cap.
 */
enum bench_rounds_why {
	BENCH_ROUNDS_MORE,		/* run another round */
	BENCH_ROUNDS_FIXED,		/* min rounds, no width or time asked */
	BENCH_ROUNDS_CONVERGED,
	BENCH_ROUNDS_TIME_CAP,
	BENCH_ROUNDS_ROUND_CAP,
	BENCH_ROUNDS_INTERRUPTED,	/* a signal or an error ended the rounds */
};
/* "fixed", "converged", "time cap reached", "round cap reached",
 * "interrupted" ("" for MORE) */
const char *bench_rounds_why_name(enum bench_rounds_why why);

struct bench_rounds_rule {
	unsigned int min, max;		/* --repeats; the benchmark's room */
	double width_pct;		/* --until-width; 0: none */
	__u64 max_ns;			/* --max-time; 0: none */
};

/* The widest interval among the ratios noted after a round. */
struct bench_rounds_widest {
	double pct;			/* -1: none noted; INFINITY: one has no interval */
	char name[64];			/* the ratio's name, as noted */
};
void bench_rounds_widest_reset(struct bench_rounds_widest *w);
/* Note one ratio: its interval's width in percent of its median. A ratio
 * with no value at all (s->n == 0: a mode skipped) is left out; one with a
 * single value, an interval not known or one short of the wanted coverage
 * counts as infinitely wide. */
void bench_rounds_widest_note(struct bench_rounds_widest *w, const char *name,
			      const struct bench_spread *s);
/* (hi - lo) / |median| * 100; INFINITY when n < 2, a bound is NAN or the
 * median is 0. */
double bench_spread_width_pct(const struct bench_spread *s);

/* After done rounds that took elapsed_ns, with the widest ratio interval
 * widest_pct (-1: no ratio to judge, as with one mode: the width holds):
 * stop, and
 * why, or BENCH_ROUNDS_MORE. The time cap looks ahead by the mean round:
 * it stops when one more round would end past max_ns. */
enum bench_rounds_why bench_rounds_next(const struct bench_rounds_rule *rule, unsigned int done,
					__u64 elapsed_ns, double widest_pct);

/* The deterministic PRNG (splitmix64) of the workloads' random orders. */
__u64 bench_prng_next(__u64 *state);

/* --- folio sizes from /proc/kpageflags ------------------------------ */

#define BENCH_KPF_ANON		12
#define BENCH_KPF_COMPOUND_HEAD	15
#define BENCH_KPF_COMPOUND_TAIL	16
#define BENCH_KPF_ZERO_PAGE	24
#define BENCH_NR_ORDERS		10	/* 4K .. 2M (order 9 = PMD on x86-64) */

/* Bytes of anonymous memory by folio order, fed one virtual page at a time
 * in address order (a /proc/PID/pagemap walk). A folio is a head page (or a
 * page without compound flags) followed by tail pages of consecutive PFNs;
 * its order is that of the smallest power of two holding the pages seen,
 * capped at BENCH_NR_ORDERS - 1. Pages that are not present, not anonymous
 * or the zero page end the current folio and are not counted. */
struct bench_folios {
	__u64 bytes[BENCH_NR_ORDERS];
	/* walk state */
	__u64 run, last_pfn;
};
void bench_folios_init(struct bench_folios *f);
void bench_folios_feed(struct bench_folios *f, bool present, __u64 pfn, __u64 kpf);
/* End of a mapping (or of the walk): count the folio in progress. */
void bench_folios_flush(struct bench_folios *f);

/* --- memory.stat --------------------------------------------------- */

enum {
	BENCH_MS_PSWPOUT, BENCH_MS_PSWPIN, BENCH_MS_THP_SWPOUT, BENCH_MS_THP_SWPOUT_FALLBACK,
	BENCH_MS_WORKINGSET_REFAULT_ANON, BENCH_MS_PGMAJFAULT, BENCH_NR_MS
};
extern const char *const bench_ms_names[BENCH_NR_MS];
struct bench_memstat {
	bool have[BENCH_NR_MS];		/* key present */
	__u64 v[BENCH_NR_MS];
};
/* Parse a memory.stat (or /proc/vmstat) text: keys not there stay absent. */
void bench_memstat_parse(const char *buf, struct bench_memstat *m);
/* d = b - a; absent when absent in either. */
void bench_memstat_delta(const struct bench_memstat *a, const struct bench_memstat *b,
			 struct bench_memstat *d);

/* Swap-out attribution: pages swapped out in large folios (sum over sizes of
 * the global swpout delta x pages per folio) plus the 4K rest of the global
 * pswpout delta, against the cgroup's pswpout delta. They agree when the
 * global pswpout delta equals the cgroup's within 1% (or 16 pages) and the
 * large-folio pages do not exceed it. */
bool bench_swap_attributed(__u64 large_pages, __u64 global_pswpout, __u64 cg_pswpout);

/* "16K,64K,2M" -> folio sizes for the per-size caps: powers of two from 8K
 * to 1G, no duplicates. Returns the count, -EINVAL or -E2BIG. */
int bench_parse_size_list(const char *s, __u64 *out, int max);

/*
 * The column to run i-th in repeat rep, of the n selected in sel[]: modes
 * are interleaved within a repeat (drift hits every mode alike) and their
 * order rotates from one repeat to the next, so that no mode always runs
 * right after the same other one (a run leaves freed memory and khugepaged
 * and kcompactd work behind for the next).
 */
static inline int bench_round_col(const int *sel, int n, int rep, int i)
{
	return sel[(i + rep) % n];
}

/* --- the machine's state at a benchmark's start (bench_start.c) ------ */

/* Free blocks of at least order (the PMD order: 9 on x86-64) in
 * /proc/buddyinfo, over every node and zone, counted in blocks of that
 * order (a free order-10 block is two). 0, or -EINVAL (no zone line, or a
 * line without a column for order). */
int bench_parse_buddyinfo(const char *buf, unsigned int order, __u64 *blocks);
/* The value of "KEY:   N kB" in /proc/meminfo's text. 0, -ENOENT or -EINVAL. */
int bench_parse_meminfo_kb(const char *buf, const char *key, __u64 *kb);

#endif
