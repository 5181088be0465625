/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl bench redis: its results. bench_redis.c runs redis-server and
 * redis-benchmark (one run per mode, cap and memory.high level) and fills
 * them; bench_redis_report.c reads them into medians, ratios and the
 * report, and calls nothing of the runner's.
 */
#ifndef MTHPCTL_BENCH_REDIS_H
#define MTHPCTL_BENCH_REDIS_H

#include "bench_common.h"
#include "mthp_stats.h"

#define REDIS_MAX_REPEATS	BENCH_ROUNDS_MAX
/* Columns: the three modes, then one static cap per --sizes entry. */
#define REDIS_MAX_COLS		(BENCH_NR_MODES + BENCH_MAX_LIST)
/* runs[] is indexed by level, then column, then round (room for
 * REDIS_MAX_REPEATS: the rounds run differ from level to level) */
#define REDIS_RUN(runs, l, col, rep) \
	((runs)[((l) * REDIS_MAX_COLS + (col)) * REDIS_MAX_REPEATS + (rep)])

struct redis_run {
	bool done;
	struct bench_redis_row row;
	struct bench_counters delta;
	struct bench_cgstat cs;
	struct bench_folios folios;	/* the cgroup's, at the end of the run */
	/* --shipped: the same run with redis as shipped (disable-thp yes) */
	bool shipped_done;
	double shipped_rps;
	struct bench_folios shipped_folios;
	bool settled;			/* --settle: settled_folios were counted */
	struct bench_folios settled_folios;	/* --settle later */
	struct bench_memstat ms;	/* the cgroup's memory.stat delta */
	__u64 global_pswpout;		/* /proc/vmstat pswpout delta */
	double secs;
	/* the policy's own counters over the run (policy and cap modes) */
	struct bench_decisions dec;
};

struct redis_cell {		/* one mode at one level: medians */
	int n;
	double rps, avg, p50, p95, p99;
	double rps_runs[REDIS_MAX_REPEATS];
	__u64 high_events, psi_some_us, psi_full_us, peak;
	struct bench_counters delta;
	/* spreads over the repeats */
	struct bench_spread s_rps, s_avg, s_p50, s_p99;
	/* per-round rps ratios: against always; a policy's against each
	 * static column (no value for the others) and what they allow */
	struct bench_spread r_always;
	struct bench_spread r_static[REDIS_MAX_COLS];
	struct bench_tally vs_static;
	struct bench_folios folios;
	int n_shipped;				/* runs with shipped_folios */
	double shipped_rps;			/* median of those */
	struct bench_folios shipped_folios;
	int n_settled;				/* runs with settled_folios */
	struct bench_folios settled_folios;	/* median of those */
	struct bench_memstat ms;
	__u64 large_swp_pages, global_pswpout;
	bool swp_agree;
	struct bench_decisions dec;		/* medians of the runs with them */
};

/* What the runner found besides the runs: the columns, the policies it
 * could not attach, the rounds of each level. */
struct redis_results {
	struct bench_opts *o;
	bool policy_skip;
	char policy_note[512];
	bool simple_skip;		/* the simple baseline was refused: why */
	char simple_note[512];
	int ncols;
	char cap_names[BENCH_MAX_LIST][24];	/* "cap-16K" */
	/* per memory.high level: its rounds, labelled with the level */
	struct bench_rounds rounds[BENCH_MAX_LIST];
	char level_names[BENCH_MAX_LIST][32];
};

/* Every column but the policies' (caps are static): a policy's column is
 * compared with each of them. */
static inline bool redis_is_static(int col)
{
	return bench_mode_static(col);
}

/* "always", "never", "always+auto", "cap-16K" */
static inline const char *redis_col_name(const struct redis_results *c, int col)
{
	if (col < BENCH_NR_MODES)
		return bench_mode_name(col, c->o);
	return c->cap_names[col - BENCH_NR_MODES];
}

/* "max" or the size of a memory.high level */
const char *redis_high_str(__u64 high, char *buf, size_t len);

/* The cells (REDIS_MAX_COLS) of level l over its first rounds: medians,
 * spreads, ratios against always and each policy's against each static
 * column. */
void redis_level_cells(const struct redis_results *c, struct redis_run *runs, int l, int rounds,
		      struct redis_cell *cells);

/* Medians, ratios and the report (bench_report()) of runs (nr_high levels
 * x REDIS_MAX_COLS x REDIS_MAX_REPEATS); cells is room for nr_high x
 * REDIS_MAX_COLS. Returns the exit code. */
int redis_report(const struct redis_results *c, struct redis_run *runs, struct redis_cell *cells,
		 bool partial);

#endif
