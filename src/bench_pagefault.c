// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench pagefault: map N MiB anonymous, write one byte per 4 KiB,
 * unmap, repeat (in the spirit of will-it-scale page_fault1), in a cgroup
 * with always, never, and always + a policy; the policy's overhead is
 * measured against always in the same run.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "bench_common.h"
#include "mthpctl.h"
#include "parse.h"

#define PF_MAX_REPEATS 64

struct pf_arg {
	__u64 size;
	unsigned int iterations;
	int fd;
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
	__u64 t0, ns;
	unsigned int i;

	if (touch_once(a->size))	/* warm-up: the page tables, the policy's first sample */
		return 1;
	t0 = bench_now_ns();
	for (i = 0; i < a->iterations; i++)
		if (touch_once(a->size))
			return 1;
	ns = bench_now_ns() - t0;
	return write(a->fd, &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1;
}

struct pf_result {
	int n;
	double ns_page[PF_MAX_REPEATS];
	struct bench_counters delta[PF_MAX_REPEATS];
};

static bool policy_skip;
static char policy_note[512];

static int pf_one(struct bench_opts *o, enum bench_mode mode, double *ns_page,
		  struct bench_counters *delta)
{
	struct pf_arg a = { .size = o->pf_size, .iterations = o->pf_iterations };
	struct bench_counters before, after;
	char cg[600];
	int p[2], err, ret = 0, status;
	pid_t pid;
	__u64 ns;

	*ns_page = NAN;
	err = bench_set_thp(mode == BENCH_NEVER ? "never" : "always");
	if (err)
		return err;
	err = bench_cg_create("pagefault", cg, sizeof(cg));
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a cgroup in %s: %s",
				     o->cgroup, strerror(-err));
	if (mode == BENCH_POLICY &&
	    bench_policy_attach(o, cg, policy_note, sizeof(policy_note))) {
		policy_skip = true;
		fprintf(stderr, "mthpctl: note: policy rows skipped: %s\n", policy_note);
		goto out;
	}
	if (pipe2(p, O_CLOEXEC)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
		goto out;
	}
	a.fd = p[1];
	bench_counters_read(&before);
	pid = bench_spawn(cg, NULL, -1, -1, pf_worker, &a);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "fork: %s", strerror(-pid));
		goto out;
	}
	err = bench_read_full(p[0], &ns, sizeof(ns), o->timeout_ns);
	close(p[0]);
	if (err == -EINTR) {
		ret = -EINTR;
		goto out;
	}
	if (err || bench_wait(pid, 10000000000ULL, &status)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "the page-fault worker failed (%s)",
				    err ? strerror(-err) : "did not exit");
		goto out;
	}
	bench_counters_read(&after);
	bench_counters_delta(&before, &after, delta);
	*ns_page = (double)ns / ((double)o->pf_iterations * (o->pf_size / 4096));
out:
	bench_cg_remove(cg);
	return bench_stop ? -EINTR : ret;
}

static void med_counters(const struct pf_result *r, struct bench_counters *d)
{
	__u64 v[PF_MAX_REPEATS];
	int s, k, i;

	memset(d, 0, sizeof(*d));
	if (!r->n)
		return;
	*d = r->delta[0];
	for (s = 0; s < d->nr; s++)
		for (k = 0; k < BENCH_NR_CNT; k++) {
			for (i = 0; i < r->n; i++)
				v[i] = r->delta[i].v[s][k];
			d->v[s][k] = bench_median_u64(v, r->n);
		}
}

int bench_pagefault(struct bench_opts *o)
{
	static struct pf_result res[BENCH_NR_MODES];
	double med[BENCH_NR_MODES], overhead;
	struct bench_counters d;
	struct utsname u;
	struct jw *w;
	char b1[32];
	int m, rep, ret = 0, k = 0, total = 0, s, i;

	if (o->repeats > PF_MAX_REPEATS)
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "pagefault: --repeats is at most %d",
				     PF_MAX_REPEATS);
	ret = bench_setup(o);
	if (ret)
		return ret;
	memset(res, 0, sizeof(res));
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (o->modes & (1u << m))
			total += o->repeats;
	for (rep = 0; rep < (int)o->repeats && !ret; rep++)
		for (m = 0; m < BENCH_NR_MODES && !ret; m++) {
			double ns;

			if (!(o->modes & (1u << m)))
				continue;
			k++;
			if (m == BENCH_POLICY && policy_skip)
				continue;
			bench_progress(o, "[%d/%d] pagefault %s run %d/%u ...", k, total,
				       bench_mode_name(m, o), rep + 1, o->repeats);
			ret = pf_one(o, m, &ns, &res[m].delta[res[m].n]);
			if (!ret && !isnan(ns)) {
				res[m].ns_page[res[m].n++] = ns;
				bench_progress(o, "[%d/%d]   %.1f ns per 4K page", k, total, ns);
			}
		}
	bench_restore();
	if (ret > 0)
		return ret;
	for (m = 0; m < BENCH_NR_MODES; m++)
		med[m] = bench_median(res[m].ns_page, res[m].n);
	overhead = bench_pct(med[BENCH_POLICY], med[BENCH_ALWAYS]);
	uname(&u);

	w = bench_json_begin(o);
	if (w) {
		jw_obj_open(w);
		jw_kstr(w, "benchmark", "pagefault");
		jw_kstr(w, "kernel", u.release);
		jw_kbool(w, "interrupted", ret == -EINTR);
		jw_key(w, "config");
		jw_obj_open(w);
		jw_ku64(w, "size", o->pf_size);
		jw_ku64(w, "iterations", o->pf_iterations);
		jw_ku64(w, "repeats", o->repeats);
		jw_kstr(w, "policy", o->policy_words[0]);
		jw_obj_close(w);
		jw_key(w, "notes");
		jw_arr_open(w);
		if (policy_skip)
			jw_str(w, policy_note);
		jw_arr_close(w);
		jw_key(w, "modes");
		jw_arr_open(w);
		for (m = 0; m < BENCH_NR_MODES; m++) {
			if (!res[m].n)
				continue;
			jw_obj_open(w);
			jw_kstr(w, "mode", bench_mode_name(m, o));
			jw_ku64(w, "runs", res[m].n);
			jw_key(w, "ns_per_4k");
			jw_double(w, med[m]);
			jw_key(w, "vs_always_pct");
			jw_double(w, bench_pct(med[m], med[BENCH_ALWAYS]));
			jw_key(w, "ns_per_4k_runs");
			jw_arr_open(w);
			for (i = 0; i < res[m].n; i++)
				jw_double(w, res[m].ns_page[i]);
			jw_arr_close(w);
			med_counters(&res[m], &d);
			jw_key(w, "mthp");
			jw_arr_open(w);
			for (s = 0; s < d.nr; s++) {
				jw_obj_open(w);
				jw_ku64(w, "size_kb", d.size_kb[s]);
				for (i = 0; i < BENCH_NR_CNT; i++)
					jw_ku64(w, bench_cnt_names[i], d.v[s][i]);
				jw_obj_close(w);
			}
			jw_arr_close(w);
			jw_obj_close(w);
		}
		jw_arr_close(w);
		jw_key(w, "policy_overhead_pct");
		jw_double(w, overhead);
		jw_obj_close(w);
		bench_json_end(o, w);
	}
	if (!g.json) {
		printf("pagefault on %s: %s mapped, touched every 4K, unmapped; %u iterations, "
		       "median of %u%s\n", u.release, mthpctl_format_size(o->pf_size, b1, sizeof(b1)),
		       o->pf_iterations, o->repeats, ret == -EINTR ? " (INTERRUPTED: partial)" : "");
		if (policy_skip)
			printf("note: policy rows skipped: %s\n", policy_note);
		printf("%-14s %12s %10s   %s\n", "mode", "ns per 4K", "vs always",
		       "mTHP fault allocs per run (size:count)");
		for (m = 0; m < BENCH_NR_MODES; m++) {
			double pct = bench_pct(med[m], med[BENCH_ALWAYS]);
			char pc[16];

			if (!res[m].n)
				continue;
			snprintf(pc, sizeof(pc), isnan(pct) ? "-" : "%+.1f%%", pct);
			printf("%-14s %12.1f %10s  ", bench_mode_name(m, o), med[m], pc);
			med_counters(&res[m], &d);
			for (s = 0, i = 0; s < d.nr; s++)
				if (d.v[s][0])
					printf(" %llukB:%llu", (unsigned long long)d.size_kb[s],
					       (unsigned long long)d.v[s][0]);
			printf("\n");
		}
		if (!isnan(overhead))
			printf("policy overhead (%s vs always, same run): %+.1f%%\n",
			       bench_mode_name(BENCH_POLICY, o), overhead);
	}
	fflush(stdout);
	if (ret == -EINTR) {
		fprintf(stderr, "mthpctl: interrupted by signal %d; settings restored\n", bench_stop);
		return bench_interrupted();
	}
	return 0;
}
