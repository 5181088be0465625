/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl bench pagefault: its results. bench_pagefault.c runs the
 * map/touch/unmap child in every column and round and fills them;
 * bench_pagefault_report.c reads them into spreads, per-round ratios and
 * the report, and calls nothing of the runner's.
 */
#ifndef MTHPCTL_BENCH_PAGEFAULT_H
#define MTHPCTL_BENCH_PAGEFAULT_H

#include "bench_common.h"

#define PF_MAX_REPEATS BENCH_ROUNDS_MAX

/* Columns: the modes, then the floor (--hook-cost). */
#define PF_FLOOR	BENCH_NR_MODES
#define PF_NR_COLS	(BENCH_NR_MODES + 1)

struct pf_run {
	bool done;
	double ns_page;
	struct bench_counters delta;
	struct bench_memstat ms;
	struct bench_folios folios;	/* of the mapping's last pass */
	bool hook;			/* hook figures below are valid */
	__u64 calls, run_ns;
};

static inline const char *pf_col_name(int col, const struct bench_opts *o)
{
	return col == PF_FLOOR ? "floor-4K" : bench_mode_name(col, o);
}

struct pf_col {
	int n;
	struct bench_spread ns, ratio;		/* ns per 4K; per-round ratio vs always */
	struct bench_spread ratio_never;	/* per-round ratio vs never */
	struct bench_spread call_ns;		/* hook ns per call */
	__u64 calls;				/* median calls per run */
	struct bench_memstat ms;
	struct bench_counters d;
	struct bench_folios f;			/* median bytes per size */
	__u32 largest_kb;			/* largest folio of any run, 0: none */
};

/* What the report of a pagefault run reads. */
struct pf_report {
	struct bench_opts *o;
	const struct bench_rounds *rounds;
	struct pf_run (*runs)[PF_MAX_REPEATS];
	struct pf_col *cols;
	int ncols;
	struct bench_spread hook_ratio;		/* policy over floor ns per call */
	struct bench_spread page_vs_floor;	/* policy over floor ns per 4K page */
	double overhead, overhead_never;	/* policy vs always, vs never (%) */
	double floor_overhead_never;		/* floor vs never (%) */
	/* the modes whose policy was refused, the floor if it was: their
	 * rows skipped, and why */
	bool skip[BENCH_NR_MODES], floor_skip;
	char skip_note[BENCH_NR_MODES][512], floor_note[512];
};

/* Spreads, per-round ratios and medians of every column over the first
 * rounds of p->runs, into p->cols. */
void pf_compute(struct pf_report *p, int rounds);
/* After a round (bench_rounds_run(), ctx: the pf_report): every column
 * against always and never, and the --hook-cost ratios. */
void pf_ratios(void *ctx, int rounds, struct bench_rounds_widest *w);
/* The report (bench_report()) of p, computed over rounds->started. Returns
 * the exit code. */
int pf_report_write(struct pf_report *p, bool interrupted);

#endif
