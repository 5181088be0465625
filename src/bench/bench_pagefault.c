// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench pagefault: map N MiB anonymous, write one byte per 4 KiB,
 * unmap, repeat (in the spirit of will-it-scale page_fault1), in a cgroup
 * with always, never, and always + a policy; the policy's overhead is
 * measured against always in the same run.
 *
 * A little above 500 lines: its three measures (the policy's overhead, the
 * --hook-cost floor of an empty program, the counters of both) share one
 * run loop and one table; split, each would carry a copy of the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "bench_common.h"
#include "mthpctl.h"
#include "parse.h"

#define PF_MAX_REPEATS BENCH_ROUNDS_MAX

struct pf_arg {
	__u64 size;
	unsigned int iterations;
	int fd;
};

/* What the worker sends back: its time, and the folios by size of one
 * more pass over its mapping, read (pagemap, kpageflags) while mapped. */
struct pf_result {
	__u64 ns;
	struct bench_folios folios;
};

static int touch_once(__u64 size)
{
	volatile char *p;
	__u64 off;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	for (off = 0; off < size; off += 4096)
		p[off] = 1;
	munmap((void *)p, size);
	return 0;
}

static int pf_worker(void *arg)
{
	struct pf_arg *a = arg;
	struct pf_result res;
	volatile char *p;
	unsigned int i;
	__u64 t0, off;

	if (touch_once(a->size))	/* warm-up: the page tables, the policy's first sample */
		return 1;
	t0 = bench_now_ns();
	for (i = 0; i < a->iterations; i++)
		if (touch_once(a->size))
			return 1;
	res.ns = bench_now_ns() - t0;
	/* untimed: one more pass, its folios read while it is mapped (the
	 * workload's own evidence of the sizes; the mTHP counters are the
	 * machine's) */
	p = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (off = 0; off < a->size; off += 4096)
		p[off] = 1;
	if (bench_self_folios((const void *)p, a->size, &res.folios))
		return 1;
	munmap((void *)p, a->size);
	return write(a->fd, &res, sizeof(res)) == sizeof(res) ? 0 : 1;
}

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

/* the modes whose policy was refused (their rows skipped), and why */
static bool skip[BENCH_NR_MODES], floor_skip;
static char skip_note[BENCH_NR_MODES][512], floor_note[512];

static const char *pf_col_name(int col, const struct bench_opts *o)
{
	return col == PF_FLOOR ? "floor-4K" : bench_mode_name(col, o);
}

static int pf_one(struct bench_opts *o, int col, struct pf_run *r)
{
	struct pf_arg a = { .size = o->pf_size, .iterations = o->pf_iterations };
	struct pf_result res;
	struct bench_counters before, after;
	struct bench_memstat ms0, ms1;
	__u64 c0 = 0, n0 = 0, c1, n1;
	int p[2], err, ret = 0, status, prog_fd = -1, link_fd = -1;
	char cg[600];
	pid_t pid;
	__u64 ns;

	r->done = false;
	r->ns_page = NAN;
	/* the floor runs on the host's setting, as the policy does */
	err = bench_mode_set_thp(col == PF_FLOOR ? BENCH_POLICY : (enum bench_mode)col, o);
	if (err)
		return err;
	err = bench_cg_create("pagefault", cg, sizeof(cg));
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a cgroup in %s: %s",
				     o->cgroup, strerror(-err));
	if (col == BENCH_POLICY || col == BENCH_SIMPLE) {
		__u32 last = o->pf_hook_cost ? bench_hook_last_prog_id() : 0;

		if (bench_mode_attach_or_skip(col, o, cg, &skip[col], skip_note[col],
					      sizeof(skip_note[col])))
			goto out;
		if (o->pf_hook_cost && col == BENCH_POLICY) {
			prog_fd = bench_hook_find_policy_prog(last);
			if (prog_fd < 0)
				fprintf(stderr, "mthpctl: warning: the policy's choose_orders program "
					"was not found: no hook cost\n");
		}
	} else if (col == PF_FLOOR) {
		if (bench_hook_floor_attach(cg, &prog_fd, &link_fd, floor_note, sizeof(floor_note))) {
			floor_skip = true;
			fprintf(stderr, "mthpctl: note: floor rows skipped: %s\n", floor_note);
			goto out;
		}
	}
	if (prog_fd >= 0 && bench_hook_stats(prog_fd, &c0, &n0)) {
		close(prog_fd);
		prog_fd = -1;
	}
	if (pipe2(p, O_CLOEXEC)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
		goto out;
	}
	a.fd = p[1];
	bench_counters_read(&before);
	bench_memstat_read(cg, &ms0);
	pid = bench_spawn(cg, NULL, -1, -1, pf_worker, &a);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "fork: %s", strerror(-pid));
		goto out;
	}
	err = bench_read_full(p[0], &res, sizeof(res), o->timeout_ns);
	ns = res.ns;
	close(p[0]);
	if (err == -EINTR) {
		ret = -EINTR;
		goto out;
	}
	if (err || bench_wait(pid, BENCH_CHILD_EXIT_TIMEOUT_NS, &status)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "the page-fault worker failed (%s)",
				    err ? strerror(-err) : "did not exit");
		goto out;
	}
	bench_counters_read(&after);
	bench_counters_delta(&before, &after, &r->delta);
	bench_memstat_read(cg, &ms1);
	bench_memstat_delta(&ms0, &ms1, &r->ms);
	r->folios = res.folios;
	if (prog_fd >= 0 && !bench_hook_stats(prog_fd, &c1, &n1)) {
		r->hook = true;
		r->calls = c1 - c0;
		r->run_ns = n1 - n0;
	}
	r->ns_page = (double)ns / ((double)o->pf_iterations * (o->pf_size / 4096));
	r->done = true;
out:
	if (prog_fd >= 0)
		close(prog_fd);
	if (link_fd >= 0)
		close(link_fd);		/* detaches the floor */
	bench_cg_remove(cg);
	return bench_stop ? -EINTR : ret;
}

static void med_counters(const struct pf_run *runs, int n, struct bench_counters *d)
{
	__u64 v[PF_MAX_REPEATS];
	int s, k, i, m, first = -1;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++)
		if (runs[i].done && first < 0)
			first = i;
	if (first < 0)
		return;
	*d = runs[first].delta;
	for (s = 0; s < d->nr; s++)
		for (k = 0; k < BENCH_NR_CNT; k++) {
			for (i = 0, m = 0; i < n; i++)
				if (runs[i].done)
					v[m++] = runs[i].delta.v[s][k];
			d->v[s][k] = bench_median_u64(v, m);
		}
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
	const struct bench_opts *o;
	const struct bench_rounds *rounds;
	struct pf_run (*runs)[PF_MAX_REPEATS];
	struct pf_col *cols;
	int ncols;
	struct bench_spread hook_ratio;		/* policy over floor ns per call */
	struct bench_spread page_vs_floor;	/* policy over floor ns per 4K page */
	double overhead, overhead_never;	/* policy vs always, vs never (%) */
	double floor_overhead_never;		/* floor vs never (%) */
};

static void pf_json_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "size", o->pf_size);
	jw_ku64(w, "iterations", o->pf_iterations);
	jw_ku64(w, "repeats", o->repeats);
	jw_kstr(w, "policy", o->policy_text);
	jw_kbool(w, "hook_cost", o->pf_hook_cost);
	jw_ku64(w, "bootstrap_resamples", BENCH_BOOT_RESAMPLES);
	jw_ku64(w, "bootstrap_seed", BENCH_BOOT_SEED);
}

static void pf_json_body(struct jw *w, void *ctx)
{
	const struct pf_report *p = ctx;
	const struct bench_opts *o = p->o;
	int m, i;

	jw_key(w, "modes");
	jw_arr_open(w);
	for (m = 0; m < p->ncols; m++) {
		struct pf_col *c = &p->cols[m];

		if (!c->n)
			continue;
		jw_obj_open(w);
		jw_kstr(w, "mode", pf_col_name(m, o));
		jw_ku64(w, "runs", c->n);
		jw_kdouble(w, "ns_per_4k", c->ns.median);
		jw_kdouble(w, "vs_always_pct",
			   bench_pct(c->ns.median, p->cols[BENCH_ALWAYS].ns.median));
		jw_key(w, "ns_per_4k_runs");
		jw_arr_open(w);
		for (i = 0; i < (int)p->rounds->started; i++)
			if (p->runs[m][i].done)
				jw_double(w, p->runs[m][i].ns_page);
		jw_arr_close(w);
		bench_json_spread(w, "ns_per_4k_spread", &c->ns);
		bench_json_ratio(w, "ratio_vs_always", &c->ratio);
		bench_json_ratio(w, "ratio_vs_never", &c->ratio_never);
		if (m == BENCH_POLICY || m == PF_FLOOR) {
			bench_json_spread(w, "hook_ns_per_call", &c->call_ns);
			jw_ku64(w, "hook_calls", c->calls);
		}
		bench_json_memstat(w, &c->ms);
		/* the workload's own folios (its mapping, kpageflags) */
		bench_json_folios(w, &c->f);
		jw_ku64(w, "largest_folio_kb", c->largest_kb);
		bench_json_counters(w, &c->d);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_kdouble(w, "policy_overhead_pct", p->overhead);
	jw_kdouble(w, "policy_overhead_vs_never_pct", p->overhead_never);
	if (o->pf_hook_cost) {
		jw_key(w, "hook_cost");
		jw_obj_open(w);
		bench_json_spread(w, "policy_ns_per_call", &p->cols[BENCH_POLICY].call_ns);
		bench_json_spread(w, "floor_ns_per_call", &p->cols[PF_FLOOR].call_ns);
		bench_json_ratio(w, "policy_vs_floor", &p->hook_ratio);
		jw_ku64(w, "policy_calls", p->cols[BENCH_POLICY].calls);
		jw_ku64(w, "floor_calls", p->cols[PF_FLOOR].calls);
		jw_kdouble(w, "floor_overhead_vs_never_pct", p->floor_overhead_never);
		bench_json_ratio(w, "policy_vs_floor_per_page", &p->page_vs_floor);
		jw_obj_close(w);
	}
}

static void pf_text_headline(void *ctx)
{
	const struct pf_report *p = ctx;
	const struct bench_opts *o = p->o;
	char b1[32];

	printf("%s mapped, touched every 4K, unmapped; %u iterations, %u rounds, "
	       "median [bootstrap 95%% interval]",
	       mthpctl_format_size(o->pf_size, b1, sizeof(b1)), o->pf_iterations,
	       p->rounds->done);
}

static void pf_text_body(void *ctx)
{
	const struct pf_report *p = ctx;
	const struct bench_opts *o = p->o;
	char b2[64], b3[64];
	int m, s;

	for (m = 0; m < BENCH_NR_MODES; m++)
		if (skip[m])
			printf("note: %s rows skipped: %s\n", bench_mode_name(m, o), skip_note[m]);
	if (floor_skip)
		printf("note: floor rows skipped: %s\n", floor_note);
	printf("%-14s %-28s %-34s   %s\n", "mode", "ns per 4K", "vs always (per round)",
	       "mTHP fault allocs per run (size:count)");
	for (m = 0; m < p->ncols; m++) {
		struct pf_col *c = &p->cols[m];
		char rt[96];

		if (!c->n)
			continue;
		if (m == BENCH_ALWAYS)
			snprintf(rt, sizeof(rt), "-");
		else
			snprintf(rt, sizeof(rt), "%s %s",
				 bench_spread_fmt(&c->ratio, "%.3f", b2, sizeof(b2)),
				 c->ratio.n > 1 && bench_spread_contains(&c->ratio, 1.0) ?
				 "(n.d.)" : "");
		printf("%-14s %-28s %-34s  ", pf_col_name(m, o),
		       bench_spread_fmt(&c->ns, "%.1f", b3, sizeof(b3)), rt);
		for (s = 0; s < c->d.nr; s++)
			if (c->d.v[s][0])
				printf(" %llukB:%llu", (unsigned long long)c->d.size_kb[s],
				       (unsigned long long)c->d.v[s][0]);
		printf("\n");
	}
	if (!isnan(p->overhead))
		printf("policy overhead (%s vs always, same run): %+.1f%%, ratio %s: %s\n",
		       bench_mode_name(BENCH_POLICY, o), p->overhead,
		       bench_spread_fmt(&p->cols[BENCH_POLICY].ratio, "%.3f", b2, sizeof(b2)),
		       bench_verdict(&p->cols[BENCH_POLICY].ratio));
	if (!isnan(p->overhead_never))
		printf("policy overhead (%s vs never, same run): %+.1f%%, ratio %s: %s\n",
		       bench_mode_name(BENCH_POLICY, o), p->overhead_never,
		       bench_spread_fmt(&p->cols[BENCH_POLICY].ratio_never, "%.3f", b2,
					sizeof(b2)),
		       bench_verdict(&p->cols[BENCH_POLICY].ratio_never));
	printf("memory.stat deltas of the cgroup (median):\n");
	bench_print_memstat_header();
	for (m = 0; m < p->ncols; m++)
		if (p->cols[m].n)
			bench_print_memstat(pf_col_name(m, o), &p->cols[m].ms);
	if (o->pf_hook_cost) {
		printf("hook cost (kernel.bpf_stats_enabled=1, run_time_ns / run_cnt):\n");
		printf("  policy %s ns/call (%llu calls per run)\n",
		       bench_spread_fmt(&p->cols[BENCH_POLICY].call_ns, "%.1f", b2, sizeof(b2)),
		       (unsigned long long)p->cols[BENCH_POLICY].calls);
		printf("  floor  %s ns/call (%llu calls per run, choose_orders \"return 0\")\n",
		       bench_spread_fmt(&p->cols[PF_FLOOR].call_ns, "%.1f", b2, sizeof(b2)),
		       (unsigned long long)p->cols[PF_FLOOR].calls);
		printf("  policy / floor %s: %s\n",
		       bench_spread_fmt(&p->hook_ratio, "%.2f", b2, sizeof(b2)),
		       bench_verdict(&p->hook_ratio));
		/* what any policy costs (an empty program, called the same way,
		 * with bpf_stats on) and what this one adds to that, per page */
		if (!isnan(p->floor_overhead_never))
			printf("  per 4K page: the floor %+.1f%% vs never; the policy vs the floor "
			       "%s: %s\n", p->floor_overhead_never,
			       bench_spread_fmt(&p->page_vs_floor, "%.3f", b2, sizeof(b2)),
			       bench_verdict(&p->page_vs_floor));
	}
	printf("(n.d.: not distinguishable, the per-round ratio's interval holds 1.0)\n");
}

/* The runs so far, their figures and the loop's state: one benchmark at a
 * time. */
static struct pf_run runs[PF_NR_COLS][PF_MAX_REPEATS];
static struct pf_col cols[PF_NR_COLS];
static struct pf_report pr;
/* One run of column m in round rep. 0, an exit code or -EINTR. */
static int pf_col_run(void *ctx, int m, int rep, const char *tag)
{
	struct bench_opts *o = ctx;
	struct pf_run *r = &runs[m][rep];
	int ret;

	if ((m < BENCH_NR_MODES && skip[m]) || (m == PF_FLOOR && floor_skip))
		return 0;
	bench_progress(o, "%s pagefault %s round %d ...", tag, pf_col_name(m, o), rep + 1);
	ret = pf_one(o, m, r);
	if (!ret && r->done) {
		if (r->hook && r->calls)
			bench_progress(o, "%s   %.1f ns per 4K page; choose_orders %llu calls, "
				       "%.1f ns/call", tag, r->ns_page, (unsigned long long)r->calls,
				       (double)r->run_ns / r->calls);
		else
			bench_progress(o, "%s   %.1f ns per 4K page", tag, r->ns_page);
	}
	return ret;
}

/* Spreads, per-round ratios and medians of every column over rounds. */
static void pf_compute(const struct bench_opts *o, int rounds)
{
	int m, rep;

	memset(cols, 0, sizeof(cols));
	for (m = 0; m < pr.ncols; m++) {
		double ns[PF_MAX_REPEATS], al[PF_MAX_REPEATS], nv[PF_MAX_REPEATS];
		double cn[PF_MAX_REPEATS];
		__u64 calls[PF_MAX_REPEATS];
		struct bench_memstat ms[PF_MAX_REPEATS];
		struct bench_folios fo[PF_MAX_REPEATS];
		int nc = 0, k;

		for (rep = 0; rep < rounds; rep++) {
			struct pf_run *r = &runs[m][rep];

			ns[rep] = r->done ? r->ns_page : NAN;
			al[rep] = runs[BENCH_ALWAYS][rep].done ? runs[BENCH_ALWAYS][rep].ns_page : NAN;
			nv[rep] = runs[BENCH_NEVER][rep].done ? runs[BENCH_NEVER][rep].ns_page : NAN;
			cn[rep] = r->done && r->hook && r->calls ? (double)r->run_ns / r->calls : NAN;
			if (r->done) {
				for (k = 0; k < BENCH_NR_ORDERS; k++)
					if (r->folios.bytes[k] && (4U << k) > cols[m].largest_kb)
						cols[m].largest_kb = 4U << k;
				fo[cols[m].n] = r->folios;
				ms[cols[m].n++] = r->ms;
				if (r->hook)
					calls[nc++] = r->calls;
			}
		}
		bench_spread(ns, rounds, &cols[m].ns);
		bench_ratio_spread(ns, al, rounds, &cols[m].ratio);
		bench_ratio_spread(ns, nv, rounds, &cols[m].ratio_never);
		bench_spread(cn, rounds, &cols[m].call_ns);
		cols[m].calls = bench_median_u64(calls, nc);
		bench_memstat_median(ms, cols[m].n, &cols[m].ms);
		bench_folios_median(fo, cols[m].n, &cols[m].f);
		med_counters(runs[m], rounds, &cols[m].d);
	}
	/* policy ns/call over floor ns/call, per round */
	{
		double pn[PF_MAX_REPEATS], fn[PF_MAX_REPEATS];

		for (rep = 0; rep < rounds; rep++) {
			struct pf_run *x = &runs[BENCH_POLICY][rep], *f = &runs[PF_FLOOR][rep];

			pn[rep] = x->done && x->hook && x->calls ? (double)x->run_ns / x->calls : NAN;
			fn[rep] = o->pf_hook_cost && f->done && f->hook && f->calls ?
				  (double)f->run_ns / f->calls : NAN;
		}
		bench_ratio_spread(pn, fn, rounds, &pr.hook_ratio);
		for (rep = 0; rep < rounds; rep++) {
			struct pf_run *x = &runs[BENCH_POLICY][rep], *f = &runs[PF_FLOOR][rep];

			pn[rep] = x->done ? x->ns_page : NAN;
			fn[rep] = o->pf_hook_cost && f->done ? f->ns_page : NAN;
		}
		bench_ratio_spread(pn, fn, rounds, &pr.page_vs_floor);
	}
}

static void pf_ratios(void *ctx, int rounds, struct bench_rounds_widest *w)
{
	const struct bench_opts *o = ctx;
	char name[96];
	int m;

	pf_compute(o, rounds);
	for (m = 0; m < pr.ncols; m++) {
		if (m != BENCH_ALWAYS) {
			snprintf(name, sizeof(name), "%s vs always", pf_col_name(m, o));
			bench_rounds_widest_note(w, name, &cols[m].ratio);
		}
		if (m != BENCH_NEVER) {
			snprintf(name, sizeof(name), "%s vs never", pf_col_name(m, o));
			bench_rounds_widest_note(w, name, &cols[m].ratio_never);
		}
	}
	bench_rounds_widest_note(w, "policy vs floor per call", &pr.hook_ratio);
	bench_rounds_widest_note(w, "policy vs floor per page", &pr.page_vs_floor);
}

int bench_pagefault(struct bench_opts *o)
{
	static struct bench_rounds rounds;
	struct bench_report report = {
		.name = "pagefault", .title = "pagefault",
		.ctx = &pr,
		.json_config = pf_json_config, .json_body = pf_json_body,
		.text_headline = pf_text_headline, .text_body = pf_text_body,
		.rounds = &rounds, .nr_rounds = 1,
	};
	int m, ret = 0, sel[PF_NR_COLS], nsel = 0;

	pr = (struct pf_report){ .o = o, .runs = runs, .cols = cols, .rounds = &rounds };
	if (o->pf_hook_cost && !(o->modes & (1u << BENCH_POLICY)))
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "pagefault: --hook-cost needs the policy mode (--modes ...,policy)");
	pr.ncols = o->pf_hook_cost ? PF_NR_COLS : BENCH_NR_MODES;
	ret = bench_setup(o);
	if (ret)
		return ret;
	if (o->pf_hook_cost) {
		int err = bench_set_knob("/proc/sys/kernel/bpf_stats_enabled", "1");

		if (err) {
			bench_restore();
			return mthpctl_error(MTHPCTL_EXIT_FAIL,
					     "cannot set kernel.bpf_stats_enabled=1 (needed by "
					     "--hook-cost): %s", strerror(-err));
		}
	}
	memset(runs, 0, sizeof(runs));
	bench_rounds_init(&rounds, o, PF_MAX_REPEATS, NULL);
	for (m = 0; m < pr.ncols; m++)
		if (m == PF_FLOOR || (o->modes & (1u << m)))
			sel[nsel++] = m;
	ret = bench_rounds_run(o, &rounds, sel, nsel, pf_col_run, pf_ratios, o);
	bench_restore();
	if (ret > 0)
		return ret;
	pf_compute(o, rounds.started);
	report.interrupted = ret == -EINTR;
	report.notes[0] = skip[BENCH_POLICY] ? skip_note[BENCH_POLICY] : NULL;
	report.notes[1] = floor_skip ? floor_note : NULL;
	report.notes[2] = skip[BENCH_SIMPLE] ? skip_note[BENCH_SIMPLE] : NULL;
	pr.overhead = bench_pct(cols[BENCH_POLICY].ns.median, cols[BENCH_ALWAYS].ns.median);
	pr.overhead_never = bench_pct(cols[BENCH_POLICY].ns.median, cols[BENCH_NEVER].ns.median);
	pr.floor_overhead_never = o->pf_hook_cost ?
				  bench_pct(cols[PF_FLOOR].ns.median, cols[BENCH_NEVER].ns.median) : NAN;
	return bench_report(o, &report);
}
