/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl bench: the workloads of bench_workload.c (shell, gups, bloat,
 * memcached, arenas, compile), started and measured one at a time there;
 * bench mixed (bench_mixed.c) starts and measures its own with the same
 * calls, and shares the pipeline and the array.
 */
#ifndef MTHPCTL_BENCH_WORKLOAD_H
#define MTHPCTL_BENCH_WORKLOAD_H

#include "bench_common.h"

#define WL_MAX_REPEATS	BENCH_ROUNDS_MAX

/* What one fill of the array cost: its writes' time and page faults. */
struct wl_fill_cost {
	double secs, faults;
};

/* What the child sends when it holds its memory. */
struct wl_result {
	/* the workload's time (gups: fill + updates; mixed's batch: the
	 * cycles it finished) */
	double secs;
	/* gups: the fill; mixed's batch: one fill, the mean over the buffers
	 * it filled */
	struct wl_fill_cost fill;
	/* memcached: operations per second (memaslap's TPS); mixed: each
	 * workload's throughput over the window (requests per second, MiB of
	 * buffers processed per second, pipelines per second) */
	double rate;
	/* mixed: the requests, buffers processed (the batch's cycles) or
	 * pipelines done */
	__u64 ops;
	double p99_ms;		/* mixed's service: the median of its batches' p99 */
	int err;		/* errno of a failure, 0 */
	__u64 start_anon;	/* the child's anonymous bytes when it began */
	/* page faults of the child and the descendants it waited for
	 * (getrusage): the workload's faults where no memory.stat counts
	 * them (bench mixed --stock without the memory controller) */
	__u64 faults;
};

/* A workload: its name (the BENCHMARK word), how it runs, its options in
 * the JSON config and the text headline. */
struct wl_kind {
	const char *name;
	/* in a child in the cgroup, which then holds its memory; or in the
	 * parent, leaving *server in the cgroup holding it */
	int (*run)(const struct bench_opts *o, struct wl_result *res);
	int (*serve)(const struct bench_opts *o, const char *cg, struct wl_result *res,
		     pid_t *server);
	void (*json_config)(struct jw *w, const struct bench_opts *o);
	void (*headline)(const struct bench_opts *o);
	/* before the setup (NULL: nothing to check): 0 or an exit code,
	 * printed with the fix */
	int (*check)(const struct bench_opts *o);
};

/* shell, gups, bloat, memcached, arenas and compile */
#define BENCH_WL_NR_KINDS	6
extern const struct wl_kind bench_wl_kinds[BENCH_WL_NR_KINDS];	/* bench_wl_kinds.c */
/* compile (bench_wl_compile.c): the kind's functions */
int bench_compile_run(const struct bench_opts *o, struct wl_result *res);
void bench_compile_config(struct jw *w, const struct bench_opts *o);
void bench_compile_headline(const struct bench_opts *o);
int bench_compile_check(const struct bench_opts *o);
/* Does something accept TCP connections on 127.0.0.1:PORT (a server up,
 * or the port taken)? */
bool bench_wl_port_listening(unsigned int port);
/* A server just spawned (*server: its pid, or -errno from bench_spawn())
 * until it listens on 127.0.0.1:PORT. 0, an exit code (printed; *server
 * -1 when it exited) or -EINTR. */
int bench_wl_server_wait(const char *name, unsigned int port, pid_t *server);
/* n /bin/sh -c script (arg its $0), each in a process group of its own,
 * stdout to out_fd (-1: kept); their pids into pids. Returns how many
 * started; *err the errno of a fork that failed, or 0. */
unsigned int bench_wl_shells_start(const char *script, const char *arg, unsigned int n,
				   int out_fd, pid_t *pids, int *err);
/* The small programs of one pipeline, each a fork and exec (shell; bench
 * mixed's small processes) */
#define BENCH_WL_PIPELINE	"seq 1 2000 | sort -nr | od -An -tx4 | grep -c 7 | wc -c >/dev/null"
/* the seed of the array's fill order and updates: every run and mode
 * touches the same pages in the same order */
#define BENCH_WL_ARRAY_SEED	0x67757073ULL	/* "gups" */
/* gups' array (each buffer of bench mixed's batch job): size bytes mapped
 * (madvise()d with advice unless 0: MADV_HUGEPAGE for mixed --stock's
 * split) and written once per 4K page, every word, in a random order from
 * *seed; the time and page faults of the writes in *cost. The array, or
 * NULL with errno. */
__u64 *bench_wl_array_fill(__u64 size, int advice, __u64 *seed, struct wl_fill_cost *cost);
/* n random read-modify-write updates of the array's 8-byte words */
void bench_wl_array_update(__u64 *table, __u64 size, __u64 n, __u64 *seed);
/* The page faults (minor and major) of who (RUSAGE_SELF, RUSAGE_CHILDREN)
 * so far, 0 if getrusage() fails */
__u64 bench_wl_rusage_faults(int who);

/* What one run of a workload measured. */
struct wl_run {
	double secs, rate, p99_ms;
	struct wl_fill_cost fill;
	__u64 ops, peak, current, pgfault, start_anon;
	struct bench_folios folios;	/* the cgroup's processes, while they hold */
	struct bench_memstat ms;	/* the cgroup's memory.stat delta */
	__u64 mthp_allocs;		/* global: mTHP fault allocations above 4K */
};

/* What a workload's child is given (its pipes: the result, the release). */
struct wl_child_arg {
	const struct bench_opts *o;
	const struct wl_kind *k;
	int res_fd, hold_fd, hold_wr;
};

/* A workload started in its cgroup (bench_wl_start()), not yet measured. */
struct wl_live {
	const struct wl_kind *k;
	char cg[600];
	struct wl_child_arg a;
	int res_fd, hold_wr;		/* its result; closing hold_wr releases it */
	pid_t pid;			/* the child, or the server */
	struct wl_result res;		/* a server's, from bench_wl_start() */
	struct bench_counters before;
	struct bench_memstat ms0;
	__u64 pf0;
};

/* Start workload k in cg (created, its policy attached). 0, an exit code
 * (printed) or -EINTR; on failure bench_wl_end() still cleans up. A server
 * kind has served its load when this returns. */
int bench_wl_start(const struct bench_opts *o, const struct wl_kind *k, const char *cg,
		   struct wl_live *l);
/* Wait for a started workload's result, measure it while it holds its
 * memory, release it, measure the rest. 0, an exit code (printed) or
 * -EINTR. */
int bench_wl_finish(const struct bench_opts *o, struct wl_live *l, struct wl_run *r);
/* Kill what is left of a workload, close its pipes. */
void bench_wl_end(struct wl_live *l);

#endif
