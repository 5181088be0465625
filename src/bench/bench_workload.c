// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench shell, gups, bloat and memcached: workloads the field judges THP
 * policies with, each run in its own cgroup <bench>/<name> in every mode.
 *
 *   shell  concurrent pipelines of small programs (UnixBench shell8's shape:
 *          many short-lived small processes, where large folios only cost)
 *   gups   a large array written once per 4 KiB page in random order, then
 *          random read-modify-write updates (GUPS' shape: a hash table or an
 *          index filled as keys arrive)
 *   bloat  many threads, each allocating a little with malloc (glibc gives
 *          threads arenas of their own: the RSS bloat THP is blamed for)
 *   memcached  Debian's memcached in the cgroup, loaded by Debian's memaslap
 *          (memcaslap) from outside it
 *
 * What each workload does is in bench_wl_kinds.c; this file runs them and
 * reports (bench mixed, bench_mixed.c, starts and measures its own with
 * bench_wl_start() and bench_wl_finish()).
 *
 * One child process runs the workload in the cgroup, sends its timing and
 * holds its memory; then the figures that do not depend on timing are read
 * (memory.current, the anonymous folios of the cgroup's processes by size),
 * and at the end memory.peak and the memory.stat deltas (faults,
 * swap-outs). Under TCG the emulator's soft TLB does not turn large pages
 * into time (see mthpctl-bench(8)): gups' time shows fault and zeroing
 * cost, its folio bytes show what hardware would gain from.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "bench_common.h"
#include "bench_workload.h"
#include "mthpctl.h"
#include "parse.h"

#define WL_MAX_FD	1024	/* mthpctl opens far fewer */

/* --- one run ------------------------------------------------------------ */

/* A server's page faults so far (minflt and majflt of /proc/PID/stat; 0
 * if it is gone) */
static __u64 proc_faults(pid_t pid)
{
	unsigned long long minflt = 0, majflt = 0;
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (mthpctl_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* after the command's closing parenthesis: state ppid pgrp session
	 * tty_nr tpgid flags minflt cminflt majflt */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt,
			 &majflt) != 2)
		return 0;
	return minflt + majflt;
}

static int wl_child(void *arg)
{
	struct wl_child_arg *a = arg;
	struct wl_result res = { 0 };
	int fd;
	char c;

	/* only its own pipes: a copy of another workload's release end (bench
	 * mixed starts several) would keep that one from seeing EOF */
	for (fd = 3; fd < WL_MAX_FD; fd++)
		if (fd != a->res_fd && fd != a->hold_fd)
			close(fd);
	res.start_anon = bench_self_anon_bytes();
	a->k->run(a->o, &res);
	res.faults = bench_wl_rusage_faults(RUSAGE_SELF) + bench_wl_rusage_faults(RUSAGE_CHILDREN);
	if (write(a->res_fd, &res, sizeof(res)) != sizeof(res))
		return 1;
	while (read(a->hold_fd, &c, 1) > 0)	/* hold the memory until EOF */
		;
	return res.err ? 1 : 0;
}

/* the modes whose policy was refused (their rows skipped), and why */
static bool skip[BENCH_NR_MODES];
static char skip_note[BENCH_NR_MODES][512];

static __u64 cg_pgfault(const char *cg)
{
	char path[600], *buf = malloc(65536);
	__u64 v = 0;

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	if (buf && mthpctl_read_file(path, buf, 65536) > 0)
		mthpctl_stat_get(buf, "pgfault", &v);
	free(buf);
	return v;
}

int bench_wl_start(const struct bench_opts *o, const struct wl_kind *k, const char *cg,
		    struct wl_live *l)
{
	int res_p[2], hold[2];

	memset(l, 0, sizeof(*l));
	l->k = k;
	l->res_fd = l->hold_wr = -1;
	l->pid = -1;
	snprintf(l->cg, sizeof(l->cg), "%s", cg);
	bench_counters_read(&l->before);
	bench_memstat_read(cg, &l->ms0);
	l->pf0 = cg_pgfault(cg);
	if (k->serve)
		return k->serve(o, cg, &l->res, &l->pid);
	if (pipe2(res_p, O_CLOEXEC))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
	if (pipe2(hold, O_CLOEXEC)) {
		close(res_p[0]);
		close(res_p[1]);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
	}
	l->a = (struct wl_child_arg){ .o = o, .k = k, .res_fd = res_p[1], .hold_fd = hold[0],
				      .hold_wr = hold[1] };
	l->pid = bench_spawn(cg, NULL, -1, -1, wl_child, &l->a);
	close(res_p[1]);
	close(hold[0]);
	l->res_fd = res_p[0];
	l->hold_wr = hold[1];
	if (l->pid < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "fork: %s", strerror(-l->pid));
	return 0;
}

int bench_wl_finish(const struct bench_opts *o, struct wl_live *l, struct wl_run *r)
{
	struct bench_counters after, d;
	struct bench_memstat ms1;
	struct bench_cgstat cs;
	int err, status, i;

	if (!l->k->serve) {
		err = bench_read_full(l->res_fd, &l->res, sizeof(l->res), o->timeout_ns);
		if (!err && l->res.err)
			err = -l->res.err;
		if (err)
			return err == -EINTR ? -EINTR :
			       mthpctl_error(MTHPCTL_EXIT_FAIL, "%s: the workload failed (%s)",
					     l->k->name, strerror(-err));
	}
	bench_cgstat_read(l->cg, &cs);
	r->current = cs.current;
	bench_cg_folios(l->cg, &r->folios);
	if (l->k->serve) {
		l->res.faults = proc_faults(l->pid);
		bench_kill(l->pid);	/* a server does not end by itself */
	} else {
		close(l->hold_wr);	/* release it */
		l->hold_wr = -1;
		bench_wait(l->pid, BENCH_CHILD_EXIT_TIMEOUT_NS, &status);
	}
	l->pid = -1;
	bench_cgstat_read(l->cg, &cs);
	r->peak = cs.peak;
	bench_memstat_read(l->cg, &ms1);
	bench_memstat_delta(&l->ms0, &ms1, &r->ms);
	/* the cgroup's count (its children's children too) where there is one */
	r->pgfault = bench_cgroups_memory() ? cg_pgfault(l->cg) - l->pf0 : l->res.faults;
	bench_counters_read(&after);
	bench_counters_delta(&l->before, &after, &d);
	r->mthp_allocs = 0;
	for (i = 0; i < d.nr; i++)
		if (d.size_kb[i] > 4)
			r->mthp_allocs += d.v[i][BENCH_CNT_ALLOC];
	r->secs = l->res.secs;
	r->start_anon = l->res.start_anon;
	r->fill = l->res.fill;
	r->rate = l->res.rate;
	r->ops = l->res.ops;
	r->p99_ms = l->res.p99_ms;
	return 0;
}

void bench_wl_end(struct wl_live *l)
{
	if (l->pid > 0)
		bench_kill(l->pid);
	l->pid = -1;
	if (l->res_fd >= 0)
		close(l->res_fd);
	if (l->hold_wr >= 0)
		close(l->hold_wr);
	l->res_fd = l->hold_wr = -1;
}

static int wl_one(const struct bench_opts *o, const struct wl_kind *k, enum bench_mode mode,
		  struct wl_run *r, bool *done)
{
	struct wl_live l = { .res_fd = -1, .hold_wr = -1, .pid = -1 };
	char cg[600] = "";
	int err, ret;

	*done = false;
	err = bench_mode_set_thp(mode, o);
	if (err)
		return err;
	bench_settle_memory();
	err = bench_cg_create(k->name, cg, sizeof(cg));
	if (err) {
		cg[0] = '\0';
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a cgroup in %s: %s",
				     o->cgroup, strerror(-err));
	}
	if (bench_mode_attach_or_skip(mode, o, cg, &skip[mode], skip_note[mode],
				      sizeof(skip_note[mode]))) {
		bench_cg_remove(cg);
		return bench_stop ? -EINTR : 0;
	}
	ret = bench_wl_start(o, k, cg, &l);
	if (!ret)
		ret = bench_wl_finish(o, &l, r);
	*done = !ret;
	bench_wl_end(&l);
	bench_cg_remove(cg);
	return bench_stop ? -EINTR : ret;
}

/* --- the report ------------------------------------------------------- */

struct wl_mode {
	int n;				/* runs */
	struct bench_spread secs, fill, rate, peak, current;
	/* a policy's speed against each static mode's: per round, the static
	 * mode's time over this one's (> 1: faster); no value for the modes
	 * that are not static or did not run */
	struct bench_spread speed_vs_static[BENCH_NR_MODES];
	struct bench_tally vs_static;
	double pgfault, mthp_allocs, start_anon;
	struct bench_folios folios;
	struct bench_memstat ms;
};

struct wl_report {
	const struct bench_opts *o;
	const struct wl_kind *k;
	const struct bench_rounds *rounds;
	struct wl_mode m[BENCH_NR_MODES];
};

static void wl_json_config(struct jw *w, const struct bench_opts *o)
{
	const struct wl_kind *k = NULL;
	unsigned int i;

	for (i = 0; i < BENCH_WL_NR_KINDS; i++)
		if (!strcmp(bench_wl_kinds[i].name, o->which))
			k = &bench_wl_kinds[i];
	k->json_config(w, o);
	jw_ku64(w, "repeats", o->repeats);
	jw_kstr(w, "policy", o->policy_text);
}

/* The static modes' names, for the lists against each of them (NULL for a
 * policy's: its name is built in a buffer the next one overwrites). */
static void wl_static_names(const struct bench_opts *o, const char *names[BENCH_NR_MODES])
{
	int m;

	for (m = 0; m < BENCH_NR_MODES; m++)
		names[m] = bench_mode_static(m) ? bench_mode_name(m, o) : NULL;
}

static void wl_json_body(struct jw *w, void *ctx)
{
	const struct wl_report *p = ctx;
	const struct bench_opts *o = p->o;
	const char *names[BENCH_NR_MODES];
	int m;

	wl_static_names(o, names);
	jw_key(w, "modes");
	jw_arr_open(w);
	for (m = 0; m < BENCH_NR_MODES; m++) {
		const struct wl_mode *x = &p->m[m];

		if (!bench_json_mode_open(w, o, m, x->n))
			continue;
		jw_kbool(w, "static", bench_mode_static(m));
		jw_ku64(w, "runs", x->n);
		bench_json_spread(w, "seconds", &x->secs);
		if (!strcmp(p->k->name, "gups"))
			bench_json_spread(w, "fill_seconds", &x->fill);
		if (p->k->serve)
			bench_json_spread(w, "ops_per_second", &x->rate);
		if (!bench_mode_static(m))
			bench_json_vs_each_static(w, "speed", names, x->speed_vs_static,
						  BENCH_NR_MODES, &x->vs_static);
		bench_json_spread(w, "memory_peak", &x->peak);
		bench_json_spread(w, "memory_current_held", &x->current);
		jw_kdouble(w, "peak_vs_never_pct",
			   bench_pct(x->peak.median, p->m[BENCH_NEVER].peak.median));
		jw_kdouble(w, "pgfault", x->pgfault);
		jw_kdouble(w, "mthp_fault_allocs_global", x->mthp_allocs);
		jw_kdouble(w, "start_anon_bytes", x->start_anon);
		bench_json_folios(w, &x->folios);
		bench_json_memstat(w, &x->ms);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void wl_text_headline(void *ctx)
{
	const struct wl_report *p = ctx;

	p->k->headline(p->o);
	printf(", median of %u rounds [interval] coverage", p->rounds->started);
}

static void wl_text_body(void *ctx)
{
	const struct wl_report *p = ctx;
	const struct bench_opts *o = p->o;
	bool gups = !strcmp(p->k->name, "gups");
	const char *names[BENCH_NR_MODES];
	char title[160];
	int m;

	for (m = 0; m < BENCH_NR_MODES; m++)
		if (skip[m])
			printf("note: %s rows skipped: %s\n", bench_mode_name(m, o), skip_note[m]);
	printf("%-16s %-24s %-24s %9s %10s\n", "mode",
	       gups ? "s (fill s)" : p->k->serve ? "ops/s" : "s",
	       "peak MiB", "vs never", "faults");
	for (m = 0; m < BENCH_NR_MODES; m++) {
		const struct wl_mode *x = &p->m[m];
		double pn = bench_pct(x->peak.median, p->m[BENCH_NEVER].peak.median);
		char t[64], f[48], tt[112], pk[64], pc[16];
		struct bench_spread mib = x->peak;

		if (!x->n)
			continue;
		bench_spread_fmt(&x->secs, "%.2f", t, sizeof(t));
		if (gups)
			snprintf(tt, sizeof(tt), "%s (%s)", t,
				 bench_spread_fmt(&x->fill, "%.2f", f, sizeof(f)));
		else if (p->k->serve)
			bench_spread_fmt(&x->rate, "%.0f", tt, sizeof(tt));
		else
			snprintf(tt, sizeof(tt), "%s", t);
		mib.median /= 1048576;
		mib.min /= 1048576;
		mib.max /= 1048576;
		mib.lo /= 1048576;
		mib.hi /= 1048576;
		snprintf(pc, sizeof(pc), isnan(pn) ? "-" : "%+.1f%%", pn);
		printf("%-16s %-24s %-24s %9s %10.0f\n", bench_mode_name(m, o), tt,
		       bench_spread_fmt(&mib, "%.1f", pk, sizeof(pk)), pc, x->pgfault);
	}
	wl_static_names(o, names);
	for (m = 0; m < BENCH_NR_MODES; m++) {
		if (bench_mode_static(m) || !p->m[m].n)
			continue;
		snprintf(title, sizeof(title), "%s speed against each static setting (the "
			 "setting's time over this mode's, per round)", bench_mode_name(m, o));
		bench_print_vs_each_static(title, names, p->m[m].speed_vs_static, BENCH_NR_MODES,
					   &p->m[m].vs_static);
	}
	printf("anon folios of the cgroup's processes while they hold their memory "
	       "(MiB by size, median):\n");
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (p->m[m].n)
			bench_print_folios(bench_mode_name(m, o), &p->m[m].folios);
	printf("memory.stat deltas of the cgroup (median):\n");
	bench_print_memstat_header();
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (p->m[m].n)
			bench_print_memstat(bench_mode_name(m, o), &p->m[m].ms);
	if (gups)
		printf("(under TCG the emulator's soft TLB does not reward large folios: the time "
		       "shows faults and zeroing, the folio sizes what a hardware TLB would gain)\n");
	bench_print_interval_legend();
}

/* The runs so far, their medians and per-round ratios: one benchmark at
 * a time. */
static struct wl_run runs[BENCH_NR_MODES][WL_MAX_REPEATS];
static double round_s[BENCH_NR_MODES][WL_MAX_REPEATS];	/* NAN: no run */
static struct wl_report wr;

/* One run of mode m in round rep. 0, an exit code or -EINTR. */
static int wl_col(void *ctx, int m, int rep, const char *tag)
{
	const struct bench_opts *o = ctx;
	struct wl_run *r = &runs[m][wr.m[m].n];
	bool done;
	int ret;

	if (skip[m])
		return 0;
	bench_progress(o, "%s %s %s round %d ...", tag, wr.k->name, bench_mode_name(m, o), rep + 1);
	ret = wl_one(o, wr.k, m, r, &done);
	if (!ret && done) {
		wr.m[m].n++;
		round_s[m][rep] = r->secs;
		bench_progress(o, "%s   %.2f s, peak %.1f MiB, PMD %.1f MiB", tag, r->secs,
			       r->peak / 1048576.0, r->folios.bytes[BENCH_NR_ORDERS - 1] / 1048576.0);
	}
	return ret;
}

/* Medians, spreads and each policy's per-round speed against each static
 * mode over rounds. */
static void wl_compute(int rounds)
{
	const double *statics[BENCH_NR_MODES];
	int m, i;

	for (m = 0; m < BENCH_NR_MODES; m++) {
		struct wl_mode *x = &wr.m[m];
		double s[WL_MAX_REPEATS], f[WL_MAX_REPEATS], ra[WL_MAX_REPEATS], pk[WL_MAX_REPEATS],
		       cu[WL_MAX_REPEATS], pf[WL_MAX_REPEATS], al[WL_MAX_REPEATS],
		       sa[WL_MAX_REPEATS];
		struct bench_folios fo[WL_MAX_REPEATS];
		struct bench_memstat ms[WL_MAX_REPEATS];

		for (i = 0; i < x->n; i++) {
			const struct wl_run *r = &runs[m][i];

			s[i] = r->secs;
			f[i] = r->fill.secs;
			ra[i] = r->rate;
			pk[i] = r->peak;
			cu[i] = r->current;
			pf[i] = r->pgfault;
			al[i] = r->mthp_allocs;
			sa[i] = r->start_anon;
			fo[i] = r->folios;
			ms[i] = r->ms;
		}
		bench_spread(s, x->n, &x->secs);
		bench_spread(f, x->n, &x->fill);
		bench_spread(ra, x->n, &x->rate);
		bench_spread(pk, x->n, &x->peak);
		bench_spread(cu, x->n, &x->current);
		x->pgfault = bench_median(pf, x->n);
		x->mthp_allocs = bench_median(al, x->n);
		x->start_anon = bench_median(sa, x->n);
		bench_folios_median(fo, x->n, &x->folios);
		bench_memstat_median(ms, x->n, &x->ms);
		statics[m] = bench_mode_static(m) && x->n ? round_s[m] : NULL;
	}
	/* against each static mode, not the fastest of them: picked from the
	 * same rounds, the fastest is favoured by their noise */
	for (m = 0; m < BENCH_NR_MODES; m++) {
		struct wl_mode *x = &wr.m[m];

		if (bench_mode_static(m) || !x->n) {
			memset(x->speed_vs_static, 0, sizeof(x->speed_vs_static));
			memset(&x->vs_static, 0, sizeof(x->vs_static));
			continue;
		}
		bench_vs_each(round_s[m], statics, BENCH_NR_MODES, rounds, true, x->speed_vs_static,
			      &x->vs_static);
	}
}

/* after each round: each policy's speed against each static mode */
static void wl_ratios(void *ctx, int rounds, struct bench_rounds_widest *w)
{
	const struct bench_opts *o = ctx;
	char name[96];
	int m, s;

	wl_compute(rounds);
	for (m = 0; m < BENCH_NR_MODES; m++)
		for (s = 0; s < BENCH_NR_MODES; s++) {
			if (!wr.m[m].speed_vs_static[s].n)
				continue;
			snprintf(name, sizeof(name), "%s speed vs %s", bench_mode_name(m, o),
				 bench_mode_name(s, o));
			bench_rounds_widest_note(w, name, &wr.m[m].speed_vs_static[s]);
		}
}

int bench_workload(struct bench_opts *o)
{
	static struct bench_rounds rounds;
	struct bench_report report = {
		.title = NULL, .ctx = &wr,
		.json_config = wl_json_config, .json_body = wl_json_body,
		.text_headline = wl_text_headline, .text_body = wl_text_body,
		.rounds = &rounds, .nr_rounds = 1,
	};
	int m, i, ret = 0, sel[BENCH_NR_MODES], nsel;
	unsigned int ki;

	memset(&wr, 0, sizeof(wr));
	wr.o = o;
	for (ki = 0; ki < BENCH_WL_NR_KINDS; ki++)
		if (!strcmp(bench_wl_kinds[ki].name, o->which))
			wr.k = &bench_wl_kinds[ki];
	report.name = report.title = wr.k->name;
	if (wr.k->serve) {
		ret = bench_need_program(o->memcached,
					 "memcached (Debian: apt install memcached)", "--memcached");
		if (!ret)
			ret = bench_need_program(o->memaslap, "libmemcached-tools", "--memaslap");
		if (ret)
			return ret;
		if (bench_wl_port_listening(o->port))
			return mthpctl_error(MTHPCTL_EXIT_STATE,
					     "port %u on 127.0.0.1 is busy: stop what listens there "
					     "or give --port", o->port);
	}
	if (wr.k->check) {
		ret = wr.k->check(o);
		if (ret)
			return ret;
	}
	ret = bench_setup(o);
	if (ret)
		return ret;
	bench_rounds_init(&rounds, o, WL_MAX_REPEATS, NULL);
	wr.rounds = &rounds;
	nsel = bench_selected_modes(o, sel);
	for (m = 0; m < BENCH_NR_MODES; m++)
		for (i = 0; i < WL_MAX_REPEATS; i++)
			round_s[m][i] = NAN;
	ret = bench_rounds_run(o, &rounds, sel, nsel, wl_col, wl_ratios, o);
	bench_restore();
	if (ret > 0)
		return ret;
	wl_compute(rounds.started);
	report.interrupted = ret == -EINTR;
	report.notes[0] = skip[BENCH_POLICY] ? skip_note[BENCH_POLICY] : NULL;
	report.notes[1] = skip[BENCH_SIMPLE] ? skip_note[BENCH_SIMPLE] : NULL;
	return bench_report(o, &report);
}
