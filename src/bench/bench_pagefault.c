// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench pagefault: map N MiB anonymous, write one byte per 4 KiB,
 * unmap, repeat (in the spirit of will-it-scale page_fault1), in a cgroup
 * with always, never, and always + a policy; the policy's overhead is
 * measured against always in the same run.
 * This file runs it (the child, one run per column and round); the
 * figures and the report are in bench_pagefault_report.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "bench_pagefault.h"
#include "mthpctl.h"
#include "parse.h"


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

/* The runs so far, their figures, what was skipped: one benchmark at a
 * time. */
static struct pf_run runs[PF_NR_COLS][PF_MAX_REPEATS];
static struct pf_col cols[PF_NR_COLS];
static struct pf_report pr;

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
	bench_settle_memory();
	err = bench_cg_create("pagefault", cg, sizeof(cg));
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a cgroup in %s: %s",
				     o->cgroup, strerror(-err));
	if (col == BENCH_POLICY || col == BENCH_SIMPLE) {
		__u32 last = o->pf_hook_cost ? bench_hook_last_prog_id() : 0;

		if (bench_mode_attach_or_skip(col, o, cg, &pr.skip[col], pr.skip_note[col],
					      sizeof(pr.skip_note[col])))
			goto out;
		if (o->pf_hook_cost && col == BENCH_POLICY) {
			prog_fd = bench_hook_find_policy_prog(last);
			if (prog_fd < 0)
				fprintf(stderr, "mthpctl: warning: the policy's choose_orders program "
					"was not found: no hook cost\n");
		}
	} else if (col == PF_FLOOR) {
		if (bench_hook_floor_attach(cg, &prog_fd, &link_fd, pr.floor_note, sizeof(pr.floor_note))) {
			pr.floor_skip = true;
			fprintf(stderr, "mthpctl: note: floor rows skipped: %s\n", pr.floor_note);
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

/* One run of column m in round rep. 0, an exit code or -EINTR. */
static int pf_col_run(void *ctx, int m, int rep, const char *tag)
{
	struct pf_report *p = ctx;
	struct bench_opts *o = p->o;
	struct pf_run *r = &runs[m][rep];
	int ret;

	if ((m < BENCH_NR_MODES && p->skip[m]) || (m == PF_FLOOR && p->floor_skip))
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

int bench_pagefault(struct bench_opts *o)
{
	static struct bench_rounds rounds;
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
	ret = bench_rounds_run(o, &rounds, sel, nsel, pf_col_run, pf_ratios, &pr);
	bench_restore();
	if (ret > 0)
		return ret;
	return pf_report_write(&pr, ret == -EINTR);
}
