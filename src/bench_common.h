/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* mthpctl bench: shared options, cgroups, THP settings save/restore,
 * policy attachment, child processes and signal handling. */
#ifndef MTHPCTL_BENCH_COMMON_H
#define MTHPCTL_BENCH_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "bench_calc.h"
#include "sysfs.h"

#define BENCH_DEFAULT_CGROUP	"/sys/fs/cgroup/mthpctl-bench"
#define BENCH_MAX_POLICY_WORDS	16

struct bench_opts {
	const char *which;		/* redis, pagefault, sparse */
	unsigned int modes;		/* 1 << enum bench_mode */
	char *policy_spec;		/* "auto --threshold 50ms" */
	char *policy_words[BENCH_MAX_POLICY_WORDS];
	int nr_policy_words;
	unsigned int repeats;
	const char *cgroup;
	bool quiet;
	const char *json_out;		/* also write the JSON here */
	__u64 timeout_ns;		/* per run */
	/* redis */
	__u64 keys, requests, value_size;
	unsigned int clients, pipeline, port;
	__u64 high[BENCH_MAX_LIST];
	int nr_high;
	bool bgsave;
	const char *redis_server, *redis_benchmark;
	__u64 sizes[BENCH_MAX_LIST];	/* --sizes: per-size caps */
	int nr_sizes;
	/* pagefault */
	__u64 pf_size;
	bool pf_hook_cost;
	unsigned int pf_iterations;
	/* sparse */
	unsigned int sp_procs, sp_dense_passes;
	__u64 sp_map_size, sp_stride, sp_dense_size;
};

/* Set by SIGINT/SIGTERM/SIGHUP: the signal number. Blocking waits return
 * -EINTR once it is set; the benchmark then unwinds and restores. */
extern volatile sig_atomic_t bench_stop;

const char *bench_mode_name(enum bench_mode m, const struct bench_opts *o);

/* Per-size mTHP counters we report. */
enum { BENCH_CNT_ALLOC, BENCH_CNT_FALLBACK, BENCH_CNT_SWPOUT, BENCH_NR_CNT };
extern const char *const bench_cnt_names[BENCH_NR_CNT];
#define BENCH_MAX_SIZES 16
struct bench_counters {
	int nr;
	__u64 size_kb[BENCH_MAX_SIZES];
	__u64 v[BENCH_MAX_SIZES][BENCH_NR_CNT];
};
void bench_counters_read(struct bench_counters *c);
/* d = b - a (sizes matched by size_kb) */
void bench_counters_delta(const struct bench_counters *a, const struct bench_counters *b,
			  struct bench_counters *d);

/* Per-cgroup figures read at the end of a run. */
struct bench_cgstat {
	__u64 high_events, max_events, oom_events;
	__u64 psi_some_us, psi_full_us;
	__u64 peak, current;
};
void bench_cgstat_read(const char *cg, struct bench_cgstat *s);

/* Anonymous memory of every process in cg (cgroup.procs) by folio order,
 * from /proc/PID/pagemap and /proc/kpageflags (pages shared after fork count
 * once per process). Returns 0 or -errno (no kpageflags: not root). */
int bench_cg_folios(const char *cg, struct bench_folios *f);
/* cg's memory.stat keys (NULL: /proc/vmstat). */
void bench_memstat_read(const char *cg, struct bench_memstat *m);

/* Save path's value for bench_restore() and write value (a sysctl such as
 * /proc/sys/kernel/bpf_stats_enabled). Returns 0 or -errno. */
int bench_set_knob(const char *path, const char *value);

/* Set up: checks (root, cgroup2 memory controller, tools), signal
 * handlers, THP and sysctl settings saved, the bench cgroup created.
 * Returns 0 or an exit code (printed). */
int bench_setup(const struct bench_opts *o);
/* Undo everything bench_setup and later calls changed; idempotent. */
void bench_restore(void);

/* Every hugepages-* and the global enabled set to "always" or "never". */
int bench_set_thp(const char *value);
void bench_drop_caches(void);

/* mkdir <bench cgroup>/<name> (with parents' +memory); path out. */
int bench_cg_create(const char *name, char *path, size_t len);
/* Kill what is left in it, detach its policy, rmdir. */
int bench_cg_remove(const char *path);
int bench_cg_write(const char *cg, const char *file, const char *value);

/* Attach the configured policy to cg by running mthpctl attach. Returns 0,
 * MTHPCTL_EXIT_UNSUPPORTED (kernel lacks it: the note is filled) or another
 * exit code (printed). */
int bench_policy_attach(const struct bench_opts *o, const char *cg, char *note, size_t len);
/* The same with explicit words: {"fixed", "--max-size", "16K"}. */
int bench_policy_attach_words(char *const words[], int n, const char *cg, char *note, size_t len);
void bench_policy_detach(const char *cg);
/* The counters of the policy attached to cg (its pinned totals, summed over
 * CPUs): what it decided during a run. 0 or -errno. */
struct mthpctl_counters;
int bench_policy_counters(const char *cg, struct mthpctl_counters *c);

/* Start a child in its own process group, in cgroup cg (NULL: ours).
 * argv != NULL: exec it with stdout -> out_fd and stderr -> err_fd (-1: keep,
 * -2: /dev/null). argv == NULL: run fn(arg) and exit with its result.
 * The child is tracked and killed by bench_restore. Returns pid or -errno. */
pid_t bench_spawn(const char *cg, char *const argv[], int out_fd, int err_fd,
		  int (*fn)(void *arg), void *arg);
/* Wait for pid up to timeout_ns (0: forever). 0 and *status, -ETIMEDOUT or
 * -EINTR (stopped by a signal). */
int bench_wait(pid_t pid, __u64 timeout_ns, int *status);
/* SIGKILL the process group and reap it. */
void bench_kill(pid_t pid);

__u64 bench_now_ns(void);

/* Read exactly len bytes from fd (a child's pipe), giving up with -EINTR on a
 * stop signal, -ETIMEDOUT after timeout_ns, -EIO at end of file. */
int bench_read_full(int fd, void *buf, size_t len, __u64 timeout_ns);
/* Progress line on stderr unless --quiet. */
void bench_progress(const struct bench_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Start the JSON report: on stdout with -j, else in --json-out FILE (pretty);
 * NULL when neither. Finish with bench_json_end(). */
struct jw *bench_json_begin(const struct bench_opts *o);
void bench_json_end(const struct bench_opts *o, struct jw *w);

/* JSON helpers: "key": {"median", "min", "max", "ci95_lo", "ci95_hi", "n"};
 * a ratio adds "distinguishable" (its interval excludes 1.0). */
struct jw;
void bench_json_spread(struct jw *w, const char *key, const struct bench_spread *s);
void bench_json_ratio(struct jw *w, const char *key, const struct bench_spread *s);
/* "folio_bytes": [{"size_kb", "bytes"}...], "pmd_bytes" (medians of runs). */
void bench_json_folios(struct jw *w, const struct bench_folios *f);
/* "memory_stat_delta": {"pswpout": N or null, ...} */
void bench_json_memstat(struct jw *w, const struct bench_memstat *m);
/* Medians over n runs (absent keys: absent if absent in any run). */
void bench_folios_median(const struct bench_folios *runs, int n, struct bench_folios *out);
void bench_memstat_median(const struct bench_memstat *runs, int n, struct bench_memstat *out);
/* Text: "  MODE  4K 12.0  16K 3.5 ... 2M 40.0 MiB" (sizes with bytes). */
void bench_print_folios(const char *mode, const struct bench_folios *f);
/* Text: the memory.stat header and one row per mode. */
void bench_print_memstat_header(void);
void bench_print_memstat(const char *mode, const struct bench_memstat *m);
/* "not distinguishable" or "distinguishable" for a ratio. */
const char *bench_verdict(const struct bench_spread *ratio);

/* --hook-cost (src/bench_hook.c): the highest BPF program id now; the newest
 * STRUCT_OPS program named choose_orders above after_id (an fd, or -ENOENT);
 * a program's run_cnt and run_time_ns; the empty floor program attached to
 * cg (fds of the program and of its link: close the link to detach). */
__u32 bench_hook_last_prog_id(void);
int bench_hook_find_policy_prog(__u32 after_id);
int bench_hook_stats(int prog_fd, __u64 *cnt, __u64 *ns);
int bench_hook_floor_attach(const char *cg, int *prog_fd, int *link_fd, char *note, size_t len);

/* The exit code for an interrupted run: 128 + signal. */
int bench_interrupted(void);

int bench_redis(struct bench_opts *o);
int bench_pagefault(struct bench_opts *o);
int bench_sparse(struct bench_opts *o);

#endif
