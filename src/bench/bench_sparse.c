// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench sparse: many small processes, each touching one page per
 * stride of a large mapping, in cgroup <bench>/sparse/small, next to one large
 * process touching a mapping densely in the sibling <bench>/sparse/large.
 * The policy is attached to <bench>/sparse, i.e. to both. Reports the small
 * cgroup's memory.current/peak and the large process' run time.
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

#define SP_MAX_REPEATS BENCH_ROUNDS_MAX

struct small_arg {
	__u64 size, stride;
	int ready_fd, hold_fd, hold_wr;
};

static int small_worker(void *arg)
{
	struct small_arg *a = arg;
	volatile char *p;
	__u64 off;
	char c = 1;

	close(a->hold_wr);
	p = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (off = 0; off < a->size; off += a->stride)
		p[off] = 1;
	if (write(a->ready_fd, &c, 1) != 1)
		return 1;
	while (read(a->hold_fd, &c, 1) > 0)	/* hold the memory until EOF */
		;
	return 0;
}

struct large_arg {
	__u64 size;
	unsigned int passes;
	int fd;
};

static int large_worker(void *arg)
{
	struct large_arg *a = arg;
	volatile char *p;
	unsigned int i;
	__u64 off, t0 = bench_now_ns(), ns;

	for (i = 0; i < a->passes; i++) {
		p = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		for (off = 0; off < a->size; off += 4096)
			p[off] = 1;
		munmap((void *)p, a->size);
	}
	ns = bench_now_ns() - t0;
	return write(a->fd, &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1;
}

struct sp_run {
	__u64 small_current, small_peak, large_peak;
	double large_s;
	struct bench_counters delta;
	struct bench_folios folios;	/* the small processes', while they hold */
	struct bench_memstat ms;	/* the large cgroup's memory.stat delta */
};

/* the modes whose policy was refused (their rows skipped), and why */
static bool skip[BENCH_NR_MODES];
static char skip_note[BENCH_NR_MODES][512];

static int sp_one(struct bench_opts *o, enum bench_mode mode, struct sp_run *r, bool *done)
{
	char parent[600] = "", small[600] = "", large[600] = "", buf[256];
	int lp[2] = { -1, -1 }, ready[2] = { -1, -1 }, hold[2] = { -1, -1 };
	struct large_arg la = { .size = o->sp_dense_size, .passes = o->sp_dense_passes };
	struct small_arg sa = { .size = o->sp_map_size, .stride = o->sp_stride };
	struct bench_counters before, after;
	struct bench_memstat ms0, ms1;
	struct bench_cgstat cs;
	pid_t lpid = -1, spid[200];
	unsigned int i, nsmall = 0;
	int err, ret = 0, status;
	__u64 ns;

	*done = false;
	err = bench_mode_set_thp(mode, o);
	if (err)
		return err;
	bench_settle_memory();
	err = bench_cg_create("sparse", parent, sizeof(parent));
	if (!err)
		err = bench_cg_create("sparse/small", small, sizeof(small));
	if (!err)
		err = bench_cg_create("sparse/large", large, sizeof(large));
	ret = bench_cgroups_attach(err, mode, o, parent, &skip[mode], skip_note[mode],
				   sizeof(skip_note[mode]));
	if (ret || skip[mode])
		goto out;
	if (pipe2(lp, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
		goto out;
	}
	bench_counters_read(&before);
	bench_memstat_read(large, &ms0);
	la.fd = lp[1];
	lpid = bench_spawn(large, NULL, -1, -1, large_worker, &la);
	close(lp[1]);
	lp[1] = -1;
	if (pipe2(hold, O_CLOEXEC)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
		goto out;
	}
	sa.ready_fd = ready[1];
	sa.hold_fd = hold[0];
	sa.hold_wr = hold[1];
	for (i = 0; i < o->sp_procs; i++) {
		spid[i] = bench_spawn(small, NULL, -1, -1, small_worker, &sa);
		if (spid[i] < 0) {
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "fork: %s", strerror(-spid[i]));
			goto out;
		}
		nsmall++;
	}
	close(ready[1]);
	ready[1] = -1;
	err = bench_read_full(ready[0], buf, o->sp_procs, o->timeout_ns);
	if (err) {
		ret = err == -EINTR ? -EINTR :
		      mthpctl_error(MTHPCTL_EXIT_FAIL, "the small processes failed (%s)", strerror(-err));
		goto out;
	}
	bench_cgstat_read(small, &cs);
	bench_cg_folios(small, &r->folios);
	r->small_current = cs.current;
	r->small_peak = cs.peak;
	close(hold[1]);		/* release the small processes */
	hold[1] = -1;
	for (i = 0; i < nsmall; i++)
		bench_wait(spid[i], BENCH_CHILD_EXIT_TIMEOUT_NS, &status);
	nsmall = 0;
	err = bench_read_full(lp[0], &ns, sizeof(ns), o->timeout_ns);
	if (err) {
		ret = err == -EINTR ? -EINTR :
		      mthpctl_error(MTHPCTL_EXIT_FAIL, "the large process failed (%s)", strerror(-err));
		goto out;
	}
	bench_wait(lpid, BENCH_CHILD_EXIT_TIMEOUT_NS, &status);
	lpid = -1;
	bench_memstat_read(large, &ms1);
	bench_memstat_delta(&ms0, &ms1, &r->ms);
	bench_cgstat_read(large, &cs);
	r->large_peak = cs.peak;
	r->large_s = ns / 1e9;
	bench_counters_read(&after);
	bench_counters_delta(&before, &after, &r->delta);
	*done = true;
out:
	for (i = 0; i < nsmall; i++)
		bench_kill(spid[i]);
	if (lpid > 0)
		bench_kill(lpid);
	for (i = 0; i < 2; i++) {
		if (lp[i] >= 0)
			close(lp[i]);
		if (ready[i] >= 0)
			close(ready[i]);
		if (hold[i] >= 0)
			close(hold[i]);
	}
	bench_cg_remove(small);
	bench_cg_remove(large);
	bench_cg_remove(parent);
	return bench_stop ? -EINTR : ret;
}

/* What the report of a sparse run reads: medians per mode. */
struct sp_report {
	const struct bench_opts *o;
	const struct bench_rounds *rounds;
	int n[BENCH_NR_MODES];			/* runs */
	double cur[BENCH_NR_MODES], peak[BENCH_NR_MODES];	/* small cgroup */
	double lt[BENCH_NR_MODES];		/* large process, s */
	__u64 alloc[BENCH_NR_MODES];		/* mTHP fault allocations */
	struct bench_spread s_cur[BENCH_NR_MODES], s_lt[BENCH_NR_MODES];
	struct bench_spread r_lt[BENCH_NR_MODES];	/* large vs always per round */
	struct bench_folios fol[BENCH_NR_MODES];
	struct bench_memstat msm[BENCH_NR_MODES];
};

static void sp_json_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "procs", o->sp_procs);
	jw_ku64(w, "map_size", o->sp_map_size);
	jw_ku64(w, "stride", o->sp_stride);
	jw_ku64(w, "dense_size", o->sp_dense_size);
	jw_ku64(w, "dense_passes", o->sp_dense_passes);
	jw_ku64(w, "repeats", o->repeats);
	jw_kstr(w, "policy", o->policy_text);
}

static void sp_json_body(struct jw *w, void *ctx)
{
	const struct sp_report *p = ctx;
	const struct bench_opts *o = p->o;
	int m;

	jw_key(w, "modes");
	jw_arr_open(w);
	for (m = 0; m < BENCH_NR_MODES; m++) {
		if (!bench_json_mode_open(w, o, m, p->n[m]))
			continue;
		jw_ku64(w, "runs", p->n[m]);
		jw_ku64(w, "small_memory_current", (__u64)p->cur[m]);
		jw_ku64(w, "small_memory_peak", (__u64)p->peak[m]);
		jw_kdouble(w, "small_current_vs_never_pct",
			   bench_pct(p->cur[m], p->cur[BENCH_NEVER]));
		jw_kdouble(w, "large_seconds", p->lt[m]);
		jw_kdouble(w, "large_vs_always_pct", bench_pct(p->lt[m], p->lt[BENCH_ALWAYS]));
		jw_ku64(w, "mthp_fault_allocs", p->alloc[m]);
		bench_json_spread(w, "small_memory_current_spread", &p->s_cur[m]);
		bench_json_spread(w, "large_seconds_spread", &p->s_lt[m]);
		bench_json_ratio(w, "large_ratio_vs_always", &p->r_lt[m]);
		bench_json_folios(w, &p->fol[m]);
		jw_key(w, "large");
		jw_obj_open(w);
		bench_json_memstat(w, &p->msm[m]);
		jw_obj_close(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void sp_text_headline(void *ctx)
{
	const struct sp_report *p = ctx;
	const struct bench_opts *o = p->o;
	char b1[32], b2[32], b3[32];

	printf("%u small processes each touching one 4K page per %s of %s (cgroup small), "
	       "one large process touching %s densely %u times (cgroup large), median of %u rounds",
	       o->sp_procs, mthpctl_format_size(o->sp_stride, b1, sizeof(b1)),
	       mthpctl_format_size(o->sp_map_size, b2, sizeof(b2)),
	       mthpctl_format_size(o->sp_dense_size, b3, sizeof(b3)), o->sp_dense_passes,
	       p->rounds->started);
}

static void sp_text_body(void *ctx)
{
	const struct sp_report *p = ctx;
	const struct bench_opts *o = p->o;
	int m;

	for (m = 0; m < BENCH_NR_MODES; m++)
		if (skip[m])
			printf("note: %s rows skipped: %s\n", bench_mode_name(m, o), skip_note[m]);
	printf("%-14s %14s %14s %9s %-22s %-32s %12s\n", "mode", "small current",
	       "small peak", "vs never", "large s", "large vs always (per round)",
	       "mTHP allocs");
	for (m = 0; m < BENCH_NR_MODES; m++) {
		double pn = bench_pct(p->cur[m], p->cur[BENCH_NEVER]);
		char c1[16], s1[32], s2[32], t[64], r2[96];

		if (!p->n[m])
			continue;
		snprintf(c1, sizeof(c1), isnan(pn) ? "-" : "%+.1f%%", pn);
		snprintf(s1, sizeof(s1), "%.1f MiB", p->cur[m] / 1048576);
		snprintf(s2, sizeof(s2), "%.1f MiB", p->peak[m] / 1048576);
		if (m == BENCH_ALWAYS)
			snprintf(r2, sizeof(r2), "-");
		else
			bench_ratio_fmt(&p->r_lt[m], "%.3f", r2, sizeof(r2));
		printf("%-14s %14s %14s %9s %-22s %-32s %12llu\n", bench_mode_name(m, o), s1,
		       s2, c1, bench_spread_fmt(&p->s_lt[m], "%.2f", t, sizeof(t)), r2,
		       (unsigned long long)p->alloc[m]);
	}
	printf("anon folios of the small processes while they hold their memory "
	       "(MiB by size, median):\n");
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (p->n[m])
			bench_print_folios(bench_mode_name(m, o), &p->fol[m]);
	printf("memory.stat deltas of the large cgroup (median):\n");
	bench_print_memstat_header();
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (p->n[m])
			bench_print_memstat(bench_mode_name(m, o), &p->msm[m]);
	printf("(large s: the large processes' time)\n");
	bench_print_interval_legend();
}

/* The runs so far: one benchmark at a time. */
static struct sp_run runs[BENCH_NR_MODES][SP_MAX_REPEATS];
static double round_s[BENCH_NR_MODES][SP_MAX_REPEATS];	/* NAN: no run */
static struct sp_report sr;

/* One run of mode m in round rep. 0, an exit code or -EINTR. */
static int sp_col(void *ctx, int m, int rep, const char *tag)
{
	struct bench_opts *o = ctx;
	struct sp_run *r = &runs[m][sr.n[m]];
	bool done;
	int ret;

	if (skip[m])
		return 0;
	bench_progress(o, "%s sparse %s round %d ...", tag, bench_mode_name(m, o), rep + 1);
	ret = sp_one(o, m, r, &done);
	if (!ret && done) {
		sr.n[m]++;
		round_s[m][rep] = r->large_s;
		bench_progress(o, "%s   small cgroup %llu KiB (peak %llu KiB), large %.2f s", tag,
			       (unsigned long long)r->small_current >> 10,
			       (unsigned long long)r->small_peak >> 10, r->large_s);
	}
	return ret;
}

/* per round: the large process' time against always in the same round */
static void sp_ratio_spreads(int rounds)
{
	int m, i;

	for (m = 0; m < BENCH_NR_MODES; m++) {
		double x[SP_MAX_REPEATS], y[SP_MAX_REPEATS];

		for (i = 0; i < rounds; i++) {
			x[i] = round_s[m][i];
			y[i] = round_s[BENCH_ALWAYS][i];
		}
		bench_ratio_spread(x, y, rounds, &sr.r_lt[m]);
	}
}

static void sp_ratios(void *ctx, int rounds, struct bench_rounds_widest *w)
{
	const struct bench_opts *o = ctx;
	char name[64];
	int m;

	sp_ratio_spreads(rounds);
	for (m = 0; m < BENCH_NR_MODES; m++) {
		if (m == BENCH_ALWAYS)
			continue;
		snprintf(name, sizeof(name), "%s large vs always", bench_mode_name(m, o));
		bench_rounds_widest_note(w, name, &sr.r_lt[m]);
	}
}

int bench_sparse(struct bench_opts *o)
{
	static struct bench_rounds rounds;
	struct bench_report report = {
		.name = "sparse", .title = "sparse",
		.ctx = &sr,
		.json_config = sp_json_config, .json_body = sp_json_body,
		.text_headline = sp_text_headline, .text_body = sp_text_body,
		.rounds = &rounds, .nr_rounds = 1,
	};
	int m, ret = 0, i, s, sel[BENCH_NR_MODES], nsel;

	memset(&sr, 0, sizeof(sr));
	sr.o = o;
	sr.rounds = &rounds;
	if (o->sp_stride > o->sp_map_size)
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "sparse: --stride exceeds --map-size");
	ret = bench_setup(o);
	if (ret)
		return ret;
	bench_rounds_init(&rounds, o, SP_MAX_REPEATS, NULL);
	nsel = bench_selected_modes(o, sel);
	for (m = 0; m < BENCH_NR_MODES; m++)
		for (i = 0; i < SP_MAX_REPEATS; i++)
			round_s[m][i] = NAN;
	ret = bench_rounds_run(o, &rounds, sel, nsel, sp_col, sp_ratios, o);
	bench_restore();
	if (ret > 0)
		return ret;
	sp_ratio_spreads(rounds.started);
	for (m = 0; m < BENCH_NR_MODES; m++) {
		double a[SP_MAX_REPEATS], b[SP_MAX_REPEATS], c[SP_MAX_REPEATS];
		__u64 al[SP_MAX_REPEATS];
		struct bench_folios f[SP_MAX_REPEATS];
		struct bench_memstat ms[SP_MAX_REPEATS];

		for (i = 0; i < sr.n[m]; i++) {
			a[i] = runs[m][i].small_current;
			b[i] = runs[m][i].small_peak;
			c[i] = runs[m][i].large_s;
			f[i] = runs[m][i].folios;
			ms[i] = runs[m][i].ms;
			al[i] = 0;
			for (s = 0; s < runs[m][i].delta.nr; s++)
				if (runs[m][i].delta.size_kb[s] > 4)
					al[i] += runs[m][i].delta.v[s][BENCH_CNT_ALLOC];
		}
		sr.cur[m] = bench_median(a, sr.n[m]);
		sr.peak[m] = bench_median(b, sr.n[m]);
		sr.lt[m] = bench_median(c, sr.n[m]);
		sr.alloc[m] = bench_median_u64(al, sr.n[m]);
		bench_spread(a, sr.n[m], &sr.s_cur[m]);
		bench_spread(c, sr.n[m], &sr.s_lt[m]);
		bench_folios_median(f, sr.n[m], &sr.fol[m]);
		bench_memstat_median(ms, sr.n[m], &sr.msm[m]);
	}
	report.interrupted = ret == -EINTR;
	report.notes[0] = skip[BENCH_POLICY] ? skip_note[BENCH_POLICY] : NULL;
	report.notes[1] = skip[BENCH_SIMPLE] ? skip_note[BENCH_SIMPLE] : NULL;
	return bench_report(o, &report);
}
