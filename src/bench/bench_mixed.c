// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench mixed: one host that every global setting has to serve.
 * Three workloads at once, each in its own cgroup under <bench>/mixed,
 * whose memory.high (--node-high) is below what they use together:
 *
 *   service  redis-server, loaded from outside its cgroup by one
 *            redis-benchmark (SET): redis' own count of SETs per second
 *            over the window, their p99 inside redis
 *   batch    a data-processing job, over and over: a buffer of
 *            --array-size mapped, written once per 4K page in random
 *            order, updated at random (a fixed amount of work per buffer)
 *            and unmapped: MiB of buffers processed per second (MiB/s),
 *            each buffer's fill counted in the window
 *   small    --pipelines shells running short pipelines of small programs
 *            over and over: pipelines per second, and their memory
 *
 * Each is measured as its throughput over the same --window, not run to
 * completion: a workload that ends early would leave the others a host
 * with more room, and a figure of milliseconds is noise. The static
 * columns are the global settings: always, never and each --sizes size
 * alone ("only-64K"); policy and simple are attached to <bench>/mixed and
 * decide for each cgroup below it. A policy column is compared with each
 * global setting, per round: each workload's throughput over the
 * setting's, and their geometric mean. It "beats every global setting"
 * only when its geometric mean is above 1.0 against each of them at the
 * wanted coverage (bench_interval.h); not against a best one picked from
 * the same rounds, whose maximum of noisy medians would favour it.
 *
 * --stock: for a kernel without the series, where a hardware MMU can show
 * what a per-workload choice earns (the machines this builds on run one):
 * no policy, and one more column in its place, the per-workload split a
 * stock kernel allows: a madvise host where only the batch advises its
 * buffers (MADV_HUGEPAGE), compared with each global setting as a policy
 * is. A cgroup2 hierarchy without the memory controller will do there
 * (a host with memory on cgroup v1): then no node limit, and the faults
 * are each workload's own (getrusage, /proc/PID/stat).
 *
 * Sizes for TCG: QEMU's soft TLB does not reward large folios, so the
 * differences have to come from what TCG does model: page faults (a 2M
 * folio is one fault for 512 4K pages of each of the batch's fills),
 * zeroing (every large folio a short-lived small process touches is
 * zeroed whole) and reclaim under the node limit (what large folios add to
 * the service's and the small processes' memory is pushed to swap, and
 * faulted back).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench_common.h"
#include "bench_workload.h"
#include "mthpctl.h"
#include "parse.h"

enum { MX_SERVICE, MX_BATCH, MX_SMALL, MX_NR };
/* the static modes, one column per --sizes size and --stock's split */
#define MX_MAX_COLS		(BENCH_NR_MODES + BENCH_MAX_LIST + 1)
/*
 * mixed's own defaults for the options not given: sized so that under TCG
 * on 2 vCPUs every workload has a throughput in every column of one 20 s
 * window. A fill of the batch's buffer (16,384 faults at 4K, 32 at 2M)
 * ended in 1.1-3.0 s in 5 of the 6 columns of one run on a host busy with
 * another VM's kernel build; in never's it took 40 s while the whole guest
 * crawled (redis 101 SETs/s, 0.1 pipelines/s). Such a stall of one column
 * in some rounds is the guest's, not the host's: it came back on an idle
 * host (never: a 41 s fill, 173 SETs/s; another run: only-16K twice, 276
 * and 743 SETs/s), with no memory.high event and no swap-out in it, while
 * a redis-server just started spent 12 s of CPU with under 2 MiB resident
 * (the cause not found; every round starts with the page cache dropped and
 * the binaries are read again over 9p). A round in which a static column
 * did nothing gives no ratio, hence make bench's seventh round. Measured with
 * 200,000 keys and 256M (and the service counted in whole redis-benchmark
 * runs of 20,000 requests): no service run and no fill ended, in any
 * column. The three share the vCPUs at equal priority: redis made 400-650
 * SETs per second beside the others, so it writes about 30% of its keys.
 */
#define MX_DEFAULT_KEYS		30000
#define MX_DEFAULT_ARRAY_SIZE	(64ULL << 20)
#define MX_DEFAULT_PIPELINES	4
/* the sizes alone without --sizes: the middle sizes a policy picks from */
static const __u64 mx_default_sizes[] = { 16ULL << 10, 64ULL << 10 };
/* updates between two looks at the clock */
#define MX_UPDATE_CHUNK		65536
/*
 * The batch's processing of one buffer: one random read-modify-write update
 * per 128 bytes of it (32 per 4K page: 524,288 for 64M), so that a buffer
 * is worked on at random, not only filled, and a cycle fits the window
 * several times. Under TCG on 2 vCPUs beside the others, a 64M fill took
 * 1.2-5.1 s and a window held 2 to 7 cycles (the committed run,
 * tests/results/20261129T101521Z). On hardware with 1G (2 CPUs,
 * tests/hardware/20261129T113919Z) a fill took 1.7-9.3 s and a window 1
 * to 7 cycles, but for one advised fill of 18.7 s, which left its round's
 * batch no cycle.
 */
#define MX_BATCH_BYTES_PER_UPDATE	128
#define MX_SMALL_POLL_MS	100
/* how often the service's load is checked for having ended early */
#define MX_SERVICE_POLL_NS	(100 * NSEC_PER_MSEC)

static const char *const mx_names[MX_NR] = { "service", "batch", "small" };
static const char *const mx_units[MX_NR] = { "requests/s", "MiB/s", "pipelines/s" };

/* The end of the round's window (CLOCK_MONOTONIC ns), set before the
 * batch and small children are forked: they inherit it. */
static __u64 mx_deadline_ns;
/* the batch's madvise() advice for its buffers (0: none), set before it is
 * forked: MADV_HUGEPAGE in --stock's split column */
static int mx_batch_advice;

/* one column in one round */
struct mx_run {
	bool done;
	struct wl_run w[MX_NR];
	struct bench_cgstat node;	/* the parent's, at the end */
	struct bench_memstat node_ms;	/* the parent's memory.stat delta */
	/* the policy's own counters over the window (policy, simple): its
	 * decisions for the three workloads together */
	struct bench_decisions dec;
	/* at the run's start: as the run before left it, and settled */
	struct bench_start_state found, settled;
};

/* one column over the rounds */
struct mx_cell {
	int n;
	struct bench_spread thr[MX_NR], peak[MX_NR], p99;
	/* the batch's fill per cycle (each round's mean): its time, its
	 * faults (median) */
	struct bench_spread fill_secs;
	double fill_faults;
	/* a policy column against each static column g, per round: each
	 * workload's throughput over g's, and their geometric mean */
	struct bench_spread vs_static[MX_MAX_COLS][MX_NR], vs_global[MX_MAX_COLS];
	/* the claims made of them: the geometric means above 1.0 against
	 * every global setting; a workload's against every static one */
	struct bench_tally global, per_static[MX_NR];
	/* ops: the requests, the batch's cycles or the pipelines done */
	double pgfault[MX_NR], ops[MX_NR];
	struct bench_folios folios[MX_NR];
	struct bench_memstat ms[MX_NR], node_ms;
	double node_high_events, node_peak;
	struct bench_decisions dec;	/* medians of the rounds */
	/* medians at the runs' starts: free 2M blocks and swap in use as the
	 * run before left them, free 2M blocks settled */
	double found_pmd_blocks, found_swap_used, free_pmd_blocks;
};

static struct {
	const struct bench_opts *o;
	struct bench_rounds rounds;
	int ncols;
	char col_names[MX_MAX_COLS][64];
	__u64 col_size[MX_MAX_COLS];		/* a size alone: its size */
	int split_col;				/* --stock's split, or -1 */
	bool skip[MX_MAX_COLS];			/* a policy refused: why */
	char skip_note[MX_MAX_COLS][512];
	__u64 node_high;
	char tmpdir[64];
	struct mx_run runs[MX_MAX_COLS][WL_MAX_REPEATS];
	struct mx_cell cells[MX_MAX_COLS];
} mx;

/* a global setting: what a policy, or --stock's split, is compared with */
static bool col_static(int col)
{
	if (col == mx.split_col)
		return false;
	return col >= BENCH_NR_MODES || bench_mode_static(col);
}

/* --- the workloads ------------------------------------------------------ */

/*
 * batch (a child in its cgroup): cycles to the window's end, each a buffer
 * mapped and filled, processed (MX_BATCH_BYTES_PER_UPDATE) and unmapped
 * (its unmapping counted in the next cycle's time). The throughput is the
 * MiB of the buffers processed whole over the time their cycles took. A
 * cycle the deadline cuts off is left out, its time with it: its fill and
 * its updates cost differently in each column (faults against TLB misses),
 * so no fraction of it "done" weighs both alike, and counting whole cycles
 * over their own time, not over the window, rounds none of it off. The
 * fill's time and faults sent are the mean over every buffer filled, the
 * cut-off one's too.
 */
static int batch_run(const struct bench_opts *o, struct wl_result *res)
{
	__u64 size = o->wl_array_size, updates = size / MX_BATCH_BYTES_PER_UPDATE;
	__u64 seed = BENCH_WL_ARRAY_SEED, t0 = bench_now_ns(), t_done = t0, fills = 0;
	struct wl_fill_cost fill, sum = { 0 };
	__u64 *buf;

	for (;;) {
		__u64 left = updates;

		buf = bench_wl_array_fill(size, mx_batch_advice, &seed, &fill);
		if (!buf) {
			res->err = errno;
			return -res->err;
		}
		fills++;
		sum.secs += fill.secs;
		sum.faults += fill.faults;
		while (left && bench_now_ns() < mx_deadline_ns) {
			__u64 n = left < MX_UPDATE_CHUNK ? left : MX_UPDATE_CHUNK;

			bench_wl_array_update(buf, size, n, &seed);
			left -= n;
		}
		if (left)
			break;
		res->ops++;
		t_done = bench_now_ns();
		if (t_done >= mx_deadline_ns)
			break;
		munmap(buf, size);
	}
	res->secs = (t_done - t0) / 1e9;
	res->rate = res->ops ? res->ops * (size / 1048576.0) / res->secs : 0;
	res->fill.secs = sum.secs / fills;
	res->fill.faults = sum.faults / fills;
	return 0;	/* the last buffer stays mapped: the parent reads its folios */
}

/* small (a child in its cgroup): --pipelines shells, each running the
 * pipeline over and over and writing a line after each; the lines counted
 * to the window's end, then the shells and their pipelines killed */
static int small_run(const struct bench_opts *o, struct wl_result *res)
{
	static const char script[] = "while :; do " BENCH_WL_PIPELINE " || exit 1; echo; done";
	pid_t pids[BENCH_WL_MAX_PIPELINES];
	unsigned int i, started;
	__u64 t0 = bench_now_ns(), lines = 0;
	char buf[4096];
	int p[2], err;

	if (pipe(p)) {
		res->err = errno;
		return -res->err;
	}
	/* the read end is not the shells' (their EOF is all of them ending) */
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	started = bench_wl_shells_start(script, "sh", o->wl_pipelines, p[1], pids, &err);
	close(p[1]);
	while (!err) {
		__u64 now = bench_now_ns();
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int left_ms = now >= mx_deadline_ns ? 0 : (mx_deadline_ns - now) / NSEC_PER_MSEC;
		ssize_t n;

		if (now >= mx_deadline_ns)
			break;
		if (poll(&pfd, 1, left_ms < MX_SMALL_POLL_MS ? left_ms : MX_SMALL_POLL_MS) <= 0)
			continue;
		n = read(p[0], buf, sizeof(buf));
		if (n <= 0) {
			err = ECHILD;	/* every shell ended: a pipeline failed */
			break;
		}
		for (ssize_t k = 0; k < n; k++)
			lines += buf[k] == '\n';
	}
	res->secs = (bench_now_ns() - t0) / 1e9;
	for (i = 0; i < started; i++) {
		kill(-pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	close(p[0]);
	res->ops = lines;
	res->rate = lines / res->secs;
	res->err = err;
	return err ? -err : 0;
}

/* redis' count of SETs so far and their p99 inside redis (ms; NAN: not
 * tracked), asked again until --timeout while it does not answer (no
 * answer within 5 s was seen once in the VM, under always at a node limit
 * of 40M). 0 or an exit code (printed). */
static int service_stats(const struct bench_opts *o, __u64 *sets, double *p99_ms)
{
	static char info[32768];
	__u64 t0 = bench_now_ns();
	int n;

	do
		n = bench_redis_command(o->port, "INFO commandstats latencystats", info,
					sizeof(info));
	while (n == -ETIMEDOUT && !bench_stop && bench_now_ns() - t0 < o->timeout_ns);
	if (n < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "no INFO from redis-server on port %u: %s",
				     o->port, strerror(-n));
	if (bench_parse_redis_info(info, "set", sets, p99_ms))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "no SET statistics in redis' INFO (reply: "
				     "\"%.200s\"): redis-server 7.0 or later is needed", info);
	return 0;
}

/* service: redis-server in cg, listening (*server its pid); its load is
 * service_load(), from the parent */
static int service_serve(const struct bench_opts *o, const char *cg, struct wl_result *res,
			 pid_t *server)
{
	char port[16];
	/* no save points, no append-only file: its memory is the figure */
	char *argv[] = {
		(char *)o->redis_server, "--port", port, "--bind", "127.0.0.1",
		"--disable-thp", "no", "--daemonize", "no", "--dir", mx.tmpdir,
		"--appendonly", "no", "--logfile", "", "--save", "", NULL,
	};

	(void)res;
	snprintf(port, sizeof(port), "%u", o->port);
	*server = bench_spawn(cg, argv, -2, -2, NULL, NULL);
	return bench_wl_server_wait(o->redis_server, o->port, server);
}

/*
 * service: one redis-benchmark from outside the cgroups, loading redis to
 * the window's end; the SETs redis did in the window (its own count, INFO
 * commandstats) are the throughput, their p99 inside redis (INFO
 * latencystats) the latency. Counted by redis, not per redis-benchmark
 * run: a run cut off by the window's end was lost, and a new run per
 * batch costs an exec and its connections, seconds on a busy host.
 */
static int service_load(const struct bench_opts *o, struct wl_result *res)
{
	char num[5][24];
	/* -n: more than it can do in any window; killed at the window's end */
	char *argv[] = {
		(char *)o->redis_benchmark, "-h", "127.0.0.1", "-p", num[0], "-r", num[1],
		"-n", "1000000000", "-d", num[2], "-c", num[3], "-P", num[4], "-t", "set", NULL,
	};
	__u64 t0 = bench_now_ns(), sets0, sets1;
	int ret, status;
	pid_t cli;

	snprintf(num[0], sizeof(num[0]), "%u", o->port);
	snprintf(num[1], sizeof(num[1]), "%llu", (unsigned long long)o->keys);
	snprintf(num[2], sizeof(num[2]), "%llu", (unsigned long long)o->value_size);
	snprintf(num[3], sizeof(num[3]), "%u", o->clients);
	snprintf(num[4], sizeof(num[4]), "%u", o->pipeline);
	ret = service_stats(o, &sets0, &res->p99_ms);
	if (ret)
		return ret;
	cli = bench_spawn(NULL, argv, -2, -2, NULL, NULL);
	if (cli < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot start %s: %s", o->redis_benchmark,
				     strerror(-cli));
	while (!bench_stop && bench_now_ns() < mx_deadline_ns) {
		if (!bench_wait(cli, MX_SERVICE_POLL_NS, &status))
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "%s ended before the window did "
					     "(status %d): run it by hand against redis-server to "
					     "see why", o->redis_benchmark, status);
	}
	ret = service_stats(o, &sets1, &res->p99_ms);
	res->secs = (bench_now_ns() - t0) / 1e9;
	bench_kill(cli);
	if (bench_stop)
		return -EINTR;
	if (ret)
		return ret;
	res->ops = sets1 - sets0;
	res->rate = res->ops / res->secs;
	return 0;
}

static const struct wl_kind mx_kinds[MX_NR] = {
	[MX_SERVICE] = { "service", NULL, service_serve },
	[MX_BATCH] = { "batch", batch_run },
	[MX_SMALL] = { "small", small_run },
};

/* --- one round of a column ------------------------------------------------ */

static int col_set_thp(int col)
{
	/* the split's host is the host mode's (--stock: madvise); only the
	 * batch's advice differs */
	if (col == mx.split_col)
		return bench_mode_set_thp(BENCH_HOST, mx.o);
	if (col < BENCH_NR_MODES)
		return bench_mode_set_thp(col, mx.o);
	return bench_set_thp_only(mx.col_size[col] >> 10);
}

/* The column's host setting, the cgroups (the parent with --node-high),
 * its policy on the parent; the service up, then the window: the batch
 * and the small processes started, the service loaded until its end; each
 * measured while it still holds its memory. 0, an exit code or -EINTR. */
static int mx_round(int col, struct mx_run *r)
{
	const struct bench_opts *o = mx.o;
	struct wl_live l[MX_NR];
	char parent[600] = "", cg[MX_NR][600], high[32];
	struct bench_memstat ms0, ms1;
	int w, err, ret = 0;

	r->done = false;
	for (w = 0; w < MX_NR; w++) {
		cg[w][0] = '\0';
		l[w] = (struct wl_live){ .res_fd = -1, .hold_wr = -1, .pid = -1 };
	}
	ret = col_set_thp(col);
	if (ret)
		return ret;
	bench_start_state_read(&r->found);
	bench_settle_memory();
	bench_start_state_read(&r->settled);
	err = bench_cg_create("mixed", parent, sizeof(parent));
	snprintf(high, sizeof(high), "%llu", (unsigned long long)mx.node_high);
	if (!err && mx.node_high)
		err = bench_cg_write(parent, "memory.high", high);
	for (w = 0; w < MX_NR && !err; w++) {
		char name[64];

		snprintf(name, sizeof(name), "mixed/%s", mx_names[w]);
		err = bench_cg_create(name, cg[w], sizeof(cg[w]));
	}
	/* a size alone is a host setting: no policy, as always */
	ret = bench_cgroups_attach(err, col < BENCH_NR_MODES ? col : BENCH_ALWAYS, o, parent,
				   &mx.skip[col], mx.skip_note[col], sizeof(mx.skip_note[col]));
	if (ret || mx.skip[col])
		goto out;
	bench_memstat_read(parent, &ms0);
	mx_batch_advice = col == mx.split_col ? MADV_HUGEPAGE : 0;
	ret = bench_wl_start(o, &mx_kinds[MX_SERVICE], cg[MX_SERVICE], &l[MX_SERVICE]);
	mx_deadline_ns = bench_now_ns() + o->mx_window_ns;
	for (w = MX_BATCH; w < MX_NR && !ret; w++)
		ret = bench_wl_start(o, &mx_kinds[w], cg[w], &l[w]);
	if (!ret)
		ret = service_load(o, &l[MX_SERVICE].res);
	for (w = 0; w < MX_NR && !ret; w++)
		ret = bench_wl_finish(o, &l[w], &r->w[w]);
	if (!ret) {
		/* the columns with a policy attached (not --stock's split) */
		if (col < BENCH_NR_MODES && !bench_mode_static(col))
			bench_policy_decisions(parent, &r->dec);
		bench_cgstat_read(parent, &r->node);
		bench_memstat_read(parent, &ms1);
		bench_memstat_delta(&ms0, &ms1, &r->node_ms);
		r->done = true;
	}
out:
	for (w = 0; w < MX_NR; w++) {
		bench_wl_end(&l[w]);
		bench_cg_remove(cg[w]);
	}
	bench_cg_remove(parent);
	return bench_stop ? -EINTR : ret;
}

/* One round of column col. 0, an exit code or -EINTR. */
static int mx_col(void *ctx, int col, int rep, const char *tag)
{
	struct mx_run *r = &mx.runs[col][rep];
	int ret;

	(void)ctx;
	if (mx.skip[col])
		return 0;
	bench_progress(mx.o, "%s mixed %s round %d ...", tag, mx.col_names[col], rep + 1);
	ret = mx_round(col, r);
	if (!ret && r->done)
		bench_progress(mx.o, "%s   service %.0f rps (p99 %.1f ms), batch %.1f MiB/s "
			       "(%llu cycles, fill %.2f s, %.0f faults each), small %.2f "
			       "pipelines/s (peak %.1f MiB)", tag, r->w[MX_SERVICE].rate,
			       r->w[MX_SERVICE].p99_ms, r->w[MX_BATCH].rate,
			       (unsigned long long)r->w[MX_BATCH].ops, r->w[MX_BATCH].fill.secs,
			       r->w[MX_BATCH].fill.faults, r->w[MX_SMALL].rate,
			       r->w[MX_SMALL].peak / 1048576.0);
	return ret;
}

/* --- the figures ---------------------------------------------------------- */

/* The medians and spreads of column col over its rounds. */
static void cell_compute(int col, int rounds)
{
	struct mx_cell *c = &mx.cells[col];
	double a[WL_MAX_REPEATS], b[WL_MAX_REPEATS], d[WL_MAX_REPEATS], e[WL_MAX_REPEATS],
	       ff[WL_MAX_REPEATS];
	struct bench_folios fo[WL_MAX_REPEATS];
	struct bench_memstat ms[WL_MAX_REPEATS];
	struct bench_decisions dec[WL_MAX_REPEATS];
	int rep, w, n;

	memset(c, 0, sizeof(*c));
	for (w = 0; w < MX_NR; w++) {
		double pk[WL_MAX_REPEATS];

		for (rep = 0, n = 0; rep < rounds; rep++) {
			const struct wl_run *x = &mx.runs[col][rep].w[w];

			if (!mx.runs[col][rep].done)
				continue;
			a[n] = x->rate;
			pk[n] = x->peak;
			b[n] = x->pgfault;
			d[n] = x->ops;
			fo[n] = x->folios;
			ms[n++] = x->ms;
		}
		c->n = n;
		bench_spread(a, n, &c->thr[w]);
		bench_spread(pk, n, &c->peak[w]);
		c->pgfault[w] = bench_median(b, n);
		c->ops[w] = bench_median(d, n);
		bench_folios_median(fo, n, &c->folios[w]);
		bench_memstat_median(ms, n, &c->ms[w]);
	}
	for (rep = 0, n = 0; rep < rounds; rep++) {
		const struct mx_run *x = &mx.runs[col][rep];

		if (!x->done)
			continue;
		a[n] = x->w[MX_SERVICE].p99_ms;
		b[n] = x->w[MX_BATCH].fill.secs;
		ff[n] = x->w[MX_BATCH].fill.faults;
		d[n] = x->node.high_events;
		e[n] = x->node.peak;
		dec[n] = x->dec;
		ms[n++] = x->node_ms;
	}
	bench_decisions_median(dec, n, &c->dec);
	bench_spread(a, n, &c->p99);
	bench_spread(b, n, &c->fill_secs);
	c->fill_faults = bench_median(ff, n);
	c->node_high_events = bench_median(d, n);
	c->node_peak = bench_median(e, n);
	bench_memstat_median(ms, n, &c->node_ms);
	for (rep = 0, n = 0; rep < rounds; rep++) {
		const struct mx_run *x = &mx.runs[col][rep];

		if (!x->done)
			continue;
		a[n] = x->found.free_pmd_blocks;
		b[n] = x->found.swap_used;
		d[n++] = x->settled.free_pmd_blocks;
	}
	c->found_pmd_blocks = bench_median(a, n);
	c->found_swap_used = bench_median(b, n);
	c->free_pmd_blocks = bench_median(d, n);
}

/* Round rep's geometric mean over the workloads of col's throughput over
 * g's: NAN when either has no such round or g did nothing, 0 when col did
 * nothing. */
static double round_geomean(int col, int g, int rep)
{
	const struct mx_run *x = &mx.runs[col][rep], *y = &mx.runs[g][rep];
	double sum = 0;
	int w;

	if (!x->done || !y->done)
		return NAN;
	for (w = 0; w < MX_NR; w++) {
		if (y->w[w].rate <= 0)
			return NAN;
		if (x->w[w].rate <= 0)
			return 0;
		sum += log(x->w[w].rate / y->w[w].rate);
	}
	return exp(sum / MX_NR);
}

/* A policy column against static column g: each workload's ratio and
 * their geometric mean, per round. */
static void compare_with(int col, int g, int rounds)
{
	struct mx_cell *c = &mx.cells[col];
	double num[WL_MAX_REPEATS], den[WL_MAX_REPEATS], gm[WL_MAX_REPEATS];
	int rep, w;

	for (w = 0; w < MX_NR; w++) {
		for (rep = 0; rep < rounds; rep++) {
			num[rep] = mx.runs[col][rep].done ? mx.runs[col][rep].w[w].rate : NAN;
			den[rep] = mx.runs[g][rep].done ? mx.runs[g][rep].w[w].rate : NAN;
		}
		bench_ratio_spread(num, den, rounds, &c->vs_static[g][w]);
		bench_tally_add(&c->per_static[w], &c->vs_static[g][w]);
	}
	for (rep = 0; rep < rounds; rep++)
		gm[rep] = round_geomean(col, g, rep);
	bench_spread(gm, rounds, &c->vs_global[g]);
	bench_tally_add(&c->global, &c->vs_global[g]);
}

static void mx_compute(int rounds)
{
	int col, g;

	for (col = 0; col < mx.ncols; col++)
		cell_compute(col, rounds);
	for (col = 0; col < mx.ncols; col++)
		for (g = 0; g < mx.ncols && !col_static(col); g++)
			if (col_static(g) && mx.cells[g].n)
				compare_with(col, g, rounds);
}

/* after each round: the policies' geometric means against each global
 * setting are the figures --until-width narrows */
static void mx_ratios(void *ctx, int rounds, struct bench_rounds_widest *wd)
{
	char name[160];
	int col, g;

	(void)ctx;
	mx_compute(rounds);
	for (col = 0; col < mx.ncols; col++)
		for (g = 0; g < mx.ncols && !col_static(col); g++) {
			if (!col_static(g))
				continue;
			snprintf(name, sizeof(name), "%s vs %s", mx.col_names[col], mx.col_names[g]);
			bench_rounds_widest_note(wd, name, &mx.cells[col].vs_global[g]);
		}
}

/* --- the report ----------------------------------------------------------- */

static void mx_json_config(struct jw *w, const struct bench_opts *o)
{
	int i;

	jw_key(w, "workloads");
	jw_arr_open(w);
	for (i = 0; i < MX_NR; i++)
		jw_str(w, mx_names[i]);
	jw_arr_close(w);
	jw_kdouble(w, "window_s", o->mx_window_ns / 1e9);
	/* 0: no node limit (--stock without the memory controller) */
	jw_ku64(w, "node_high", mx.node_high);
	jw_kbool(w, "stock", o->stock);
	jw_kbool(w, "memory_controller", bench_cgroups_memory());
	jw_ku64(w, "keys", o->keys);
	jw_ku64(w, "value_size", o->value_size);
	jw_ku64(w, "clients", o->clients);
	jw_ku64(w, "pipeline", o->pipeline);
	jw_ku64(w, "array_size", o->wl_array_size);
	jw_ku64(w, "batch_updates_per_cycle", o->wl_array_size / MX_BATCH_BYTES_PER_UPDATE);
	jw_ku64(w, "pipelines", o->wl_pipelines);
	jw_key(w, "sizes");
	jw_arr_open(w);
	for (i = BENCH_NR_MODES; i < mx.ncols; i++)
		jw_u64(w, mx.col_size[i]);
	jw_arr_close(w);
	jw_ku64(w, "repeats", o->repeats);
	jw_kstr(w, "policy", o->policy_text);
}

static void json_workload(struct jw *w, const struct mx_cell *c, int k)
{
	jw_key(w, mx_names[k]);
	jw_obj_open(w);
	jw_kstr(w, "unit", mx_units[k]);
	bench_json_spread(w, "throughput", &c->thr[k]);
	/* the batch's work is counted in cycles (its earlier "done" were
	 * updates) */
	jw_kdouble(w, k == MX_BATCH ? "cycles" : "done", c->ops[k]);
	if (k == MX_SERVICE)
		bench_json_spread(w, "p99_ms", &c->p99);
	if (k == MX_BATCH) {
		bench_json_spread(w, "fill_seconds_per_cycle", &c->fill_secs);
		jw_kdouble(w, "fill_pgfault_per_cycle", c->fill_faults);
	}
	bench_json_spread(w, "memory_peak", &c->peak[k]);
	if (k == MX_SMALL)
		jw_kdouble(w, "peak_vs_never_pct",
			   bench_pct(c->peak[k].median, mx.cells[BENCH_NEVER].peak[k].median));
	jw_kdouble(w, "pgfault", c->pgfault[k]);
	bench_json_folios(w, &c->folios[k]);
	bench_json_memstat(w, &c->ms[k]);
	jw_obj_close(w);
}

/* "vs_each_global": [{"mode", "geomean", "service", "batch", "small"}]
 * (ratios per round), "beats_every_global", "beats_every_static":
 * {"service", "batch", "small"} */
static void json_vs_each_global(struct jw *w, int col)
{
	const struct mx_cell *c = &mx.cells[col];
	int g, k;

	jw_key(w, "vs_each_global");
	jw_arr_open(w);
	for (g = 0; g < mx.ncols; g++) {
		if (!col_static(g) || !mx.cells[g].n)
			continue;
		jw_obj_open(w);
		jw_kstr(w, "mode", mx.col_names[g]);
		bench_json_ratio(w, "geomean", &c->vs_global[g]);
		for (k = 0; k < MX_NR; k++)
			bench_json_ratio(w, mx_names[k], &c->vs_static[g][k]);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_kbool(w, "beats_every_global", bench_tally_all_above(&c->global));
	jw_key(w, "beats_every_static");
	jw_obj_open(w);
	for (k = 0; k < MX_NR; k++)
		jw_kbool(w, mx_names[k], bench_tally_all_above(&c->per_static[k]));
	jw_obj_close(w);
}

static void mx_json_body(struct jw *w, void *ctx)
{
	int col, k;

	(void)ctx;
	jw_key(w, "modes");
	jw_arr_open(w);
	for (col = 0; col < mx.ncols; col++) {
		const struct mx_cell *c = &mx.cells[col];

		if (!c->n)
			continue;
		jw_obj_open(w);
		jw_kstr(w, "mode", mx.col_names[col]);
		jw_kbool(w, "static", col_static(col));
		if (col >= BENCH_NR_MODES && col != mx.split_col)
			jw_ku64(w, "size_alone", mx.col_size[col]);
		if (col == mx.split_col)
			jw_kstr(w, "split", "madvise host, the batch advises its buffers");
		jw_ku64(w, "rounds", c->n);
		if (!col_static(col))
			json_vs_each_global(w, col);
		if (c->dec.have)
			bench_json_decisions(w, "policy_decisions", &c->dec);
		jw_kdouble(w, "free_pmd_blocks_at_start", c->free_pmd_blocks);
		jw_kdouble(w, "free_pmd_blocks_found", c->found_pmd_blocks);
		jw_kdouble(w, "swap_used_found", c->found_swap_used);
		jw_key(w, "node");
		jw_obj_open(w);
		jw_kdouble(w, "memory_high_events", c->node_high_events);
		jw_kdouble(w, "memory_peak", c->node_peak);
		bench_json_memstat(w, &c->node_ms);
		jw_obj_close(w);
		jw_key(w, "workloads");
		jw_obj_open(w);
		for (k = 0; k < MX_NR; k++)
			json_workload(w, c, k);
		jw_obj_close(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void mx_text_headline(void *ctx)
{
	const struct bench_opts *o = mx.o;
	char a[32], b[32], h[32], limit[64] = "with no node limit (no memory controller)";

	(void)ctx;
	if (mx.node_high)
		snprintf(limit, sizeof(limit), "under memory.high=%s of their parent",
			 mthpctl_format_size(mx.node_high, h, sizeof(h)));
	printf("%sa service (redis SET, %llu keys of %s), a batch job "
	       "(buffers of %s, each mapped, written in random order, updated at random and "
	       "unmapped, over and over) and %u concurrent pipelines of small programs at once "
	       "%s, each over a %.0f s window; median of %u rounds [interval] coverage",
	       o->stock ? "stock kernel, global settings only: " : "",
	       (unsigned long long)o->keys, mthpctl_format_size(o->value_size, a, sizeof(a)),
	       mthpctl_format_size(o->wl_array_size, b, sizeof(b)),
	       o->wl_pipelines, limit, o->mx_window_ns / 1e9, mx.rounds.started);
}

/* A policy column against each global setting, and the claims they allow. */
static void text_vs_each_global(int col)
{
	const struct mx_cell *c = &mx.cells[col];
	char b[MX_NR + 1][64], t[80];
	int g, k;

	printf("%s against each global setting, per round (each workload's throughput over "
	       "the setting's; their geometric mean):\n", mx.col_names[col]);
	printf("  %-14s %-34s %-34s %-34s %s\n", "against", "service", "batch", "small",
	       "geometric mean");
	for (g = 0; g < mx.ncols; g++) {
		if (!col_static(g) || !mx.cells[g].n)
			continue;
		printf("  %-14s", mx.col_names[g]);
		for (k = 0; k < MX_NR; k++)
			printf(" %-34s", bench_ratio_fmt(&c->vs_static[g][k], "%.3f", b[k],
							 sizeof(b[k])));
		printf(" %s\n", bench_ratio_fmt(&c->vs_global[g], "%.3f", b[MX_NR], sizeof(b[MX_NR])));
	}
	printf("  beats every global setting: %s (geometric mean %s)\n",
	       bench_tally_all_above(&c->global) ? "yes" : "no",
	       bench_tally_fmt(&c->global, t, sizeof(t)));
	for (k = 0; k < MX_NR; k++)
		printf("  %s beats every static setting: %s (%s)\n", mx_names[k],
		       bench_tally_all_above(&c->per_static[k]) ? "yes" : "no",
		       bench_tally_fmt(&c->per_static[k], t, sizeof(t)));
}

static void mx_text_body(void *ctx)
{
	char b[4][64];
	int col, k;

	(void)ctx;
	for (col = 0; col < mx.ncols; col++)
		if (mx.skip[col])
			printf("note: %s rows skipped: %s\n", mx.col_names[col], mx.skip_note[col]);
	printf("throughput over the window:\n%-16s %-26s %-18s %-26s %-22s\n", "mode",
	       "service requests/s", "p99 ms in redis", "batch MiB/s", "small pipelines/s");
	for (col = 0; col < mx.ncols; col++) {
		const struct mx_cell *c = &mx.cells[col];

		if (!c->n)
			continue;
		printf("%-16s %-26s %-18s %-26s %-22s\n", mx.col_names[col],
		       bench_spread_fmt(&c->thr[MX_SERVICE], "%.0f", b[0], sizeof(b[0])),
		       bench_spread_fmt(&c->p99, "%.1f", b[1], sizeof(b[1])),
		       bench_spread_fmt(&c->thr[MX_BATCH], "%.1f", b[2], sizeof(b[2])),
		       bench_spread_fmt(&c->thr[MX_SMALL], "%.2f", b[3], sizeof(b[3])));
	}
	for (col = 0; col < mx.ncols; col++)
		if (!col_static(col) && mx.cells[col].n)
			text_vs_each_global(col);
	printf("counts (median): faults and swap-outs per workload, the batch's cycles, its "
	       "fill's time and faults per cycle and its 2M bytes, the small processes' peak "
	       "against never's, the node's memory.high events, the free 2M blocks each run "
	       "found (left by the run before) and started with (settled), the swap in use it "
	       "found:\n");
	printf("%-16s %-20s %-40s %-26s %-14s %-20s %s\n", "mode", "service flt/swpout",
	       "batch cycles, fill s/flt per cycle, flt, 2M MiB", "small peak MiB, flt",
	       "node high ev", "free 2M found/start", "swap MiB found");
	for (col = 0; col < mx.ncols; col++) {
		const struct mx_cell *c = &mx.cells[col];
		double pn = bench_pct(c->peak[MX_SMALL].median, mx.cells[BENCH_NEVER].peak[MX_SMALL].median);
		char s1[48], s2[96], s3[64], s4[48], pc[16];

		if (!c->n)
			continue;
		snprintf(s1, sizeof(s1), "%.0f/%llu", c->pgfault[MX_SERVICE],
			 (unsigned long long)c->ms[MX_SERVICE].v[BENCH_MS_PSWPOUT]);
		snprintf(s2, sizeof(s2), "%.0f, %.2f/%.0f, %.0f, %.1f", c->ops[MX_BATCH],
			 c->fill_secs.median, c->fill_faults, c->pgfault[MX_BATCH],
			 c->folios[MX_BATCH].bytes[BENCH_NR_ORDERS - 1] / 1048576.0);
		snprintf(pc, sizeof(pc), isnan(pn) ? "-" : "%+.1f%%", pn);
		snprintf(s3, sizeof(s3), "%.1f (%s), %.0f", c->peak[MX_SMALL].median / 1048576,
			 pc, c->pgfault[MX_SMALL]);
		snprintf(s4, sizeof(s4), "%.0f/%.0f", c->found_pmd_blocks, c->free_pmd_blocks);
		printf("%-16s %-20s %-40s %-26s %-14.0f %-20s %.1f\n", mx.col_names[col], s1, s2, s3,
		       c->node_high_events, s4, c->found_swap_used / 1048576);
	}
	for (col = 0; col < mx.ncols; col++)
		if (mx.cells[col].n && mx.cells[col].dec.have) {
			printf("policy decisions per round (median; the policy's own counters, the "
			       "three workloads together):\n");
			break;
		}
	for (col = 0; col < mx.ncols; col++)
		if (mx.cells[col].n)
			bench_print_decisions(mx.col_names[col], &mx.cells[col].dec);
	printf("anon folios of the service and the batch (its last buffer) while they hold their "
	       "memory (MiB by size, median):\n");
	for (col = 0; col < mx.ncols; col++)
		for (k = MX_SERVICE; k <= MX_BATCH && mx.cells[col].n; k++) {
			char label[80];

			snprintf(label, sizeof(label), "%s %s", mx.col_names[col], mx_names[k]);
			bench_print_folios(label, &mx.cells[col].folios[k]);
		}
	if (mx.o->stock)
		printf("(a stock kernel: no policy ran; %s is the per-workload choice such a kernel "
		       "allows, a madvise host where only the batch advises its buffers)\n",
		       mx.col_names[mx.split_col]);
	else
		printf("(under TCG the soft TLB does not reward large folios: the times show "
		       "faults, zeroing and reclaim)\n");
	bench_print_interval_legend();
}

/* --- the benchmark ---------------------------------------------------------- */

/* The columns: the selected modes, then one per size alone; --node-high or
 * its default. 0 or an exit code (printed). */
static int mx_init(struct bench_opts *o)
{
	const __u64 *sizes = o->nr_sizes ? o->sizes : mx_default_sizes;
	int i, n = o->nr_sizes ? o->nr_sizes :
		   (int)(sizeof(mx_default_sizes) / sizeof(mx_default_sizes[0]));
	char path[256], sz[24];

	memset(&mx, 0, sizeof(mx));
	mx.o = o;
	if (!(o->given & BENCH_GIVEN_KEYS))
		o->keys = MX_DEFAULT_KEYS;
	if (!(o->given & BENCH_GIVEN_ARRAY_SIZE))
		o->wl_array_size = MX_DEFAULT_ARRAY_SIZE;
	if (!(o->given & BENCH_GIVEN_PIPELINES))
		o->wl_pipelines = MX_DEFAULT_PIPELINES;
	/* what they need at least: the batch's buffer and the service's
	 * values; the service's own memory per key, the processes' own and
	 * what large folios add are more, so the limit binds */
	mx.node_high = o->mx_node_high ? o->mx_node_high : o->wl_array_size + o->keys * o->value_size;
	mx.ncols = BENCH_NR_MODES + n;
	mx.split_col = -1;
	if (o->stock) {
		mx.split_col = mx.ncols++;
		snprintf(mx.col_names[mx.split_col], sizeof(mx.col_names[0]), "madvise+batch");
	}
	for (i = 0; i < BENCH_NR_MODES; i++)
		snprintf(mx.col_names[i], sizeof(mx.col_names[i]), "%s", bench_mode_name(i, o));
	for (i = 0; i < n; i++) {
		mthpctl_format_size(sizes[i], sz, sizeof(sz));
		snprintf(path, sizeof(path), MTHPCTL_THP_DIR "/hugepages-%llukB/enabled",
			 (unsigned long long)(sizes[i] >> 10));
		if (access(path, F_OK))
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "--sizes %s: this kernel has no %s: give sizes it has "
					     "(ls %s)", sz, path, MTHPCTL_THP_DIR);
		mx.col_size[BENCH_NR_MODES + i] = sizes[i];
		snprintf(mx.col_names[BENCH_NR_MODES + i], sizeof(mx.col_names[0]), "only-%s", sz);
	}
	return bench_redis_preflight(o);
}

int bench_mixed(struct bench_opts *o)
{
	struct bench_report report = {
		.name = "mixed", .title = "mixed", .ctx = &mx,
		.json_config = mx_json_config, .json_body = mx_json_body,
		.text_headline = mx_text_headline, .text_body = mx_text_body,
		.rounds = &mx.rounds, .nr_rounds = 1,
	};
	const char *tmp = getenv("TMPDIR");
	int ret, col, sel[MX_MAX_COLS], nsel = 0;

	ret = mx_init(o);
	if (ret)
		return ret;
	ret = bench_setup(o);
	if (ret)
		return ret;
	if (!bench_cgroups_memory())
		mx.node_high = 0;	/* --stock without it: no node limit */
	/* redis-server's --dir: empty, so it loads no dump.rdb of anyone's */
	snprintf(mx.tmpdir, sizeof(mx.tmpdir), "%s/mthpctl-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(mx.tmpdir)) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a directory in /tmp: %s",
				     strerror(errno));
	}
	for (col = 0; col < mx.ncols; col++)
		if (col >= BENCH_NR_MODES || (o->modes & (1u << col)))
			sel[nsel++] = col;
	bench_rounds_init(&mx.rounds, o, WL_MAX_REPEATS, NULL);
	ret = bench_rounds_run(o, &mx.rounds, sel, nsel, mx_col, mx_ratios, NULL);
	bench_restore();
	bench_rm_tree(mx.tmpdir);
	if (ret > 0)
		return ret;
	mx_compute(mx.rounds.started);
	report.interrupted = ret == -EINTR;
	report.notes[0] = mx.skip[BENCH_POLICY] ? mx.skip_note[BENCH_POLICY] : NULL;
	report.notes[1] = mx.skip[BENCH_SIMPLE] ? mx.skip_note[BENCH_SIMPLE] : NULL;
	report.notes[2] = o->stock ? "a stock kernel: global settings and the madvise split, "
				     "no policy" : NULL;
	return bench_report(o, &report);
}
