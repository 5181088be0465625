/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl bench: what the benchmarks (bench_redis.c, bench_pagefault.c,
 * bench_sparse.c, bench_mixed.c, and shell, gups, bloat, memcached, arenas
 * and compile in bench_workload.c) share, one section per file that implements it: the
 * start and end of a run (bench_setup.c), the settings it changes and
 * restores (bench_env.c), child processes (bench_proc.c), cgroups and
 * their policies (bench_cgroup.c), measurements (bench_measure.c),
 * the state a benchmark starts from (bench_start.c), reporting
 * (bench_report.c), the rounds and when they stop
 * (bench_rounds.c), progress lines (bench_progress.c) and --hook-cost
 * (bench_hook.c). The pure helpers are in bench_calc.h and
 * bench_interval.h. No file calls back into one that calls it: the report
 * reads the rounds and the start state, which print their progress through
 * bench_progress.c, not the report; a benchmark's runner fills its results
 * (bench_redis.h, bench_pagefault.h) and calls its report, which reads them
 * and calls nothing of the runner's.
 */
#ifndef MTHPCTL_BENCH_COMMON_H
#define MTHPCTL_BENCH_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "bench_calc.h"
#include "mthp_stats.h"
#include "mthpctl.h"
#include "sysfs.h"

#define BENCH_DEFAULT_CGROUP	"/sys/fs/cgroup/mthpctl-bench"

/* Timeouts and ticks of the waits */
#define NSEC_PER_SEC		1000000000ULL
#define NSEC_PER_MSEC		1000000ULL
#define BENCH_RUN_TIMEOUT_NS	(15 * 60 * NSEC_PER_SEC)	/* --timeout's default */
/* a child that finished its work (closed its output, was released) exits
 * this soon */
#define BENCH_CHILD_EXIT_TIMEOUT_NS	(10 * NSEC_PER_SEC)
#define BENCH_POLL_MS		200	/* a wake-up to check timeouts and signals */
#define BENCH_WAIT_TICK_NS	(20 * NSEC_PER_MSEC)	/* bench_wait()'s polling */
/* a cgroup's tasks are torn down in this time (rmdir retried each tick) */
#define BENCH_RMDIR_TIMEOUT_NS	(10 * NSEC_PER_SEC)
#define BENCH_RMDIR_TICK_NS	(50 * NSEC_PER_MSEC)
#define BENCH_MAX_POLICY_WORDS	16
/* rounds a benchmark has room for: --repeats' maximum, --until-width's cap */
#define BENCH_ROUNDS_MAX	64
#define BENCH_ROUNDS_MAX_STR	"64"

struct bench_opts {
	/* redis, pagefault, sparse, shell, gups, bloat, memcached, arenas,
	 * compile, mixed */
	const char *which;
	unsigned int modes;		/* 1 << enum bench_mode */
	const char *policy_text;	/* --policy as given: "auto --threshold 50ms" */
	/* --policy "--object FILE [--ops NAME]": a policy of the user's own
	 * (then policy and policy_flags are unused) */
	const char *policy_object, *policy_ops;
	/* --host: every size's enabled during the modes that keep the host's
	 * setting (host, policy, simple, caps): "always" or "madvise" */
	const char *host;
	char *policy_words[BENCH_MAX_POLICY_WORDS];	/* split, in a copy */
	int nr_policy_words;
	/* the words read (mthpctl_policy_spec_words()), or why they are none:
	 * then the policy rows are skipped with that note, as for a value
	 * attach refuses */
	struct mthpctl_policy_spec policy;
	unsigned int policy_flags;	/* MTHPCTL_ATTACH_* */
	char policy_refused[256];
	unsigned int repeats;		/* rounds at least */
	double until_width_pct;		/* --until-width: 0 = none */
	__u64 max_time_ns;		/* --max-time: 0 = none */
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
	bool shipped;			/* --shipped: also redis as shipped */
	__u64 settle_ns;		/* --settle: 0 = off */
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
	/* shell, gups, bloat, memcached, arenas, compile (bench_workload.c; memcached also
	 * takes redis' keys, requests, value_size, clients and port) */
	unsigned int wl_pipelines, wl_loops, wl_threads;
	__u64 wl_array_size, wl_updates, wl_per_thread;
	__u64 mc_cache_size;
	const char *memcached, *memaslap;
	/* arenas */
	unsigned int wl_arenas, wl_touch_pages;
	__u64 wl_arena_size;
	/* compile: the source tree, make's -j, the first N files (0: all) */
	const char *cc_source;
	unsigned int cc_jobs, cc_files;
	/* mixed: the window every workload is measured over; the parent
	 * cgroup's memory.high (0: its default, see bench_mixed.c) */
	__u64 mx_window_ns, mx_node_high;
	/* mixed --stock: a kernel without the series; the global settings
	 * and the split a stock kernel allows (a madvise host where only the
	 * batch advises), no policy; a cgroup2 hierarchy without the memory
	 * controller will do (then no node limit) */
	bool stock;
	/* the options given (BENCH_GIVEN_*): mixed has defaults of its own
	 * for those not given */
	unsigned int given;
};
enum {
	BENCH_GIVEN_KEYS = 1 << 0,
	BENCH_GIVEN_ARRAY_SIZE = 1 << 1,
	BENCH_GIVEN_PIPELINES = 1 << 2,
	BENCH_GIVEN_HOST = 1 << 3,
};
#define BENCH_WL_MAX_PIPELINES	64

/* --- bench_progress.c: progress lines ----------------------------------- */

/* Progress line on stderr unless --quiet. */
void bench_progress(const struct bench_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- bench_setup.c: a run's start and end ---------------------------- */

/* Set up: checks (root, cgroup2 memory controller, tools), signal
 * handlers, THP and sysctl settings saved, the bench cgroup created, the
 * start state settled (bench_start_settle()). Returns 0 or an exit code
 * (printed). */
int bench_setup(const struct bench_opts *o);
/* Undo everything bench_setup and later calls changed; idempotent. */
void bench_restore(void);

/* --- bench_env.c: the settings a run changes and restores ------------- */

/* Set by SIGINT/SIGTERM/SIGHUP: the signal number. Blocking waits return
 * -EINTR once it is set; the benchmark then unwinds and restores. */
extern volatile sig_atomic_t bench_stop;
/* The exit code for an interrupted run: 128 + signal. */
int bench_interrupted(void);
/* Save the THP enabled values and vm.overcommit_memory (0 or -errno);
 * put back every value saved since, and unmount a bpffs we mounted. */
int bench_env_save(void);
void bench_env_restore(void);

/* Save path's value for bench_restore() and write value (a sysctl such as
 * /proc/sys/kernel/bpf_stats_enabled). Returns 0 or -errno. */
int bench_set_knob(const char *path, const char *value);
/* Every hugepages-* and the global enabled set to value ("always",
 * "madvise", "never"); bench_restore() puts the saved values back. */
int bench_set_thp(const char *value);
/* One size alone: hugepages-SIZEkB/enabled always, every other size and
 * the global enabled never (a global setting of one size). 0 or an exit
 * code (printed). */
int bench_set_thp_only(__u64 size_kb);
/* Write value to path (no saving). 0 or -errno. */
int bench_write_file(const char *path, const char *value);
/* Mount bpffs if it is not (unmounted by bench_restore). 0 or -errno. */
int bench_mount_bpffs(void);

/* --- bench_start.c: the state a benchmark and its runs start from ----- */

/* What earlier work leaves behind: free memory in PMD-sized blocks, swap
 * in use, the page cache; khugepaged's counters. */
struct bench_start_state {
	__u64 free_pmd_blocks;		/* /proc/buddyinfo, in PMD-sized blocks */
	__u64 mem_free, swap_used, page_cache;	/* bytes, /proc/meminfo */
	__u64 khugepaged_full_scans, khugepaged_pages_collapsed;
};
/* How khugepaged's work was settled: its pass ran to the end, or it had
 * nothing to do, or it was still scanning when the wait ended. */
enum bench_khugepaged { BENCH_KHUGEPAGED_NONE, BENCH_KHUGEPAGED_PASS, BENCH_KHUGEPAGED_IDLE,
			BENCH_KHUGEPAGED_BUSY };
struct bench_start {
	bool valid;
	struct bench_start_state found, settled;	/* before and after settling */
	enum bench_khugepaged khugepaged;
	__u64 settle_ns;
};
void bench_start_state_read(struct bench_start_state *s);
/* At a benchmark's start (bench_setup()): the state found, khugepaged's
 * pass run at full speed to its end (its knobs restored), then
 * bench_settle_memory(), and the state settled; bench_start_get() gives
 * both to the report (NULL before). */
void bench_start_settle(const struct bench_opts *o);
const struct bench_start *bench_start_get(void);
const char *bench_khugepaged_name(enum bench_khugepaged k);
/* Before every run: dirty pages written, caches dropped, memory compacted
 * (every run finds the free memory in the same blocks whatever ran before). */
void bench_settle_memory(void);

/* --- bench_proc.c: child processes ------------------------------------ */

/* Keep this process's own memory in 4 KiB pages (PR_SET_THP_DISABLE).
 * Under the settings bench tests its .bss got a 2 MiB folio now and then,
 * which every workload forked after shares and counts as its own (2.2 MiB
 * resident at the fork): auto's small-process rule then took bench
 * sparse's small processes for large ones from their first fault. The
 * children of bench_spawn() clear it for themselves. */
void bench_self_thp_off(void);
/* This process's resident anonymous bytes (RssAnon; 0 if unknown). */
__u64 bench_self_anon_bytes(void);
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
/* bench_kill every child still tracked (bench_restore). */
void bench_kill_all(void);
/* Read exactly len bytes from fd (a child's pipe), giving up with -EINTR on a
 * stop signal, -ETIMEDOUT after timeout_ns, -EIO at end of file. */
int bench_read_full(int fd, void *buf, size_t len, __u64 timeout_ns);
/* A child's output from fd into buf (len: its room, NUL included) until
 * end of file, or until buf is full (keep_tail: then its first half is
 * dropped and reading goes on: the end is kept). 0, -ETIMEDOUT after
 * timeout_ns, or -EINTR on a stop signal; buf holds what came. */
int bench_read_output(int fd, char *buf, size_t len, bool keep_tail, __u64 timeout_ns);
__u64 bench_now_ns(void);
/* Remove dir and everything under it (a temporary directory of ours). */
void bench_rm_tree(const char *dir);
/* Is name (a path, or a command found in $PATH) executable? */
bool bench_in_path(const char *name);
/* 0 if name is executable, else a usage error naming what to install
 * (install) and the option that gives another path (option). */
int bench_need_program(const char *name, const char *install, const char *option);

/* --- bench_cgroup.c: cgroups and their policies ----------------------- */

/* Check root's parent (cgroup2 with the memory controller, or without it
 * when memory_optional) and that root is not in use; remember it. 0 or an
 * exit code (printed). */
int bench_cgroups_prepare(const char *root, bool memory_optional);
/* Has the bench cgroup's hierarchy the memory controller (memory.high,
 * memory.stat, memory.peak)? Known after bench_cgroups_prepare(). */
bool bench_cgroups_memory(void);
/* mkdir the bench cgroup (with its parent's +memory). 0 or -errno. */
int bench_cgroups_create_root(void);
/* Detach, empty and remove every cgroup created, then the bench cgroup. */
void bench_cgroups_remove_all(void);
/* mkdir <bench cgroup>/<name> (with parents' +memory); path out. */
int bench_cg_create(const char *name, char *path, size_t len);
/* Kill what is left in it, detach its policy, rmdir. */
int bench_cg_remove(const char *path);
int bench_cg_write(const char *cg, const char *file, const char *value);

/* Attach the policy of spec (flags: MTHPCTL_ATTACH_*) to cg with attach's
 * own code, in this process. Returns 0 or attach's exit code, why in note
 * (nothing printed: the report carries it). */
int bench_policy_attach(const struct mthpctl_policy_spec *spec, unsigned int flags, const char *cg,
			char *note, size_t len);
/* The same for --policy (o->policy, or o->policy_object). */
int bench_policy_attach_opts(const struct bench_opts *o, const char *cg, char *note, size_t len);

/* A mode's host setting: "never" (never), "always" (always), --host's
 * value (host, policy, simple: a policy takes from or grants to it). */
const char *bench_mode_thp(enum bench_mode m, const struct bench_opts *o);
/* Every size set to bench_mode_thp(). 0 or an exit code (printed). */
int bench_mode_set_thp(enum bench_mode m, const struct bench_opts *o);
/* The mode's policy attached to cg: --policy for policy, the simple
 * baseline (its defaults) for simple, none for the static modes. 0, or an
 * exit code with why in note: the caller skips the mode's rows. */
int bench_mode_attach(enum bench_mode m, const struct bench_opts *o, const char *cg,
		      char *note, size_t len);
/* bench_mode_attach(); when it fails, the mode's rows are skipped: *skip
 * set and "NAME rows skipped: NOTE" printed. True if skipped. */
bool bench_mode_attach_or_skip(enum bench_mode m, const struct bench_opts *o, const char *cg,
			       bool *skip, char *note, size_t len);
/* A benchmark's cgroups made under parent (err: the first failure making
 * them): the mode's policy attached to parent, or its rows skipped (*skip,
 * as bench_mode_attach_or_skip()). 0, or an exit code (printed) when a
 * cgroup could not be made. */
int bench_cgroups_attach(int err, enum bench_mode m, const struct bench_opts *o,
			 const char *parent, bool *skip, char *note, size_t len);
/* The modes of o->modes, in order, into sel; returns how many. */
int bench_selected_modes(const struct bench_opts *o, int sel[BENCH_NR_MODES]);
void bench_policy_detach(const char *cg);
/* The counters of the policy attached to cg (its pinned totals, summed over
 * CPUs): what it decided during a run. 0 or -errno. */
int bench_policy_counters(const char *cg, struct mthpctl_counters *c);
/* What a policy decided over a run, from its own counters summed over the
 * tva types: its calls, and its fallbacks to 4 KiB by reason (a fresh
 * policy per run: its counters are the run's). */
struct bench_decisions {
	bool have;			/* read (a policy was attached) */
	__u64 calls, fallbacks[MTHPCTL_NR_REASON];
};
/* The decisions of the policy attached to cg so far (d->have false when
 * there is none). 0 or -errno. */
int bench_policy_decisions(const char *cg, struct bench_decisions *d);
/* The medians over the n runs that have them (out->have: any had). */
void bench_decisions_median(const struct bench_decisions *runs, int n,
			    struct bench_decisions *out);

/* --- bench_measure.c: counters, cgroup figures, folios ---------------- */

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
/* The anonymous folios by size of [addr, addr + len) of this process (its
 * own pagemap and kpageflags: memory another process faulted, such as what
 * fork shares, is not in a range the caller mapped after it). */
int bench_self_folios(const void *addr, size_t len, struct bench_folios *f);
/* cg's memory.stat keys (NULL: /proc/vmstat). */
void bench_memstat_read(const char *cg, struct bench_memstat *m);

/* --- bench_report.c: the report ---------------------------------------- */

/* "always", "never", "madvise" (host on a madvise host), "HOST+POLICY"
 * (the policy's first word, or its object's file name) or "HOST+simple". */
const char *bench_mode_name(enum bench_mode m, const struct bench_opts *o);

struct jw;
#define BENCH_MAX_NOTES	4

/* One benchmark's result as bench_report() writes it. */
struct bench_report {
	const char *name;		/* "benchmark" in the JSON: "pagefault" */
	const char *title;		/* the text headline's start: "redis SET" */
	bool interrupted;		/* stopped by a signal: partial figures */
	const char *notes[BENCH_MAX_NOTES];	/* JSON "notes" (NULL: none) */
	/* how many rounds ran and why they stopped: JSON "rounds" and a text
	 * line each (redis: one per memory.high level) */
	const struct bench_rounds *rounds;
	int nr_rounds;
	void *ctx;			/* the benchmark's figures, for the callbacks */
	/* the members of "config" (from the options), then those after "notes" */
	void (*json_config)(struct jw *w, const struct bench_opts *o);
	void (*json_body)(struct jw *w, void *ctx);
	/* the text headline after "TITLE on KERNEL: ", then the tables */
	void (*text_headline)(void *ctx);
	void (*text_body)(void *ctx);
};
/* The report: the JSON object {"benchmark", "kernel", "interrupted",
 * "config": {...}, "notes": [...], "start_state": {...}, "rounds": [...], ...} on stdout with -j or (pretty) in
 * --json-out FILE; without -j, the text on stdout. Returns the exit code:
 * 0, or bench_interrupted() (with a line on stderr) if interrupted. */
int bench_report(const struct bench_opts *o, const struct bench_report *r);

/* JSON helpers: "key": {"median", "min", "max", "lo", "hi", "coverage",
 * "n"} (bench_spread()); a ratio adds "distinguishable" (an interval of
 * BENCH_COVERAGE_WANTED or more that excludes 1.0). */
void bench_json_spread(struct jw *w, const char *key, const struct bench_spread *s);
/* A mode's object in a report's "modes" array, opened with its name; a
 * mode without runs has none (false, nothing written). */
bool bench_json_mode_open(struct jw *w, const struct bench_opts *o, int m, unsigned int runs);
void bench_json_ratio(struct jw *w, const char *key, const struct bench_spread *s);
/*
 * A policy row against each static setting (bench_vs_each()): ratio[j] of
 * the setting named names[j], left out without a value. JSON:
 * "vs_each_static": [{"mode": NAME, RATIO_KEY: ratio}...] and
 * "beats_every_static"; text: the title line, a line per setting and the
 * claim they allow.
 */
void bench_json_vs_each_static(struct jw *w, const char *ratio_key, const char *const names[],
			       const struct bench_spread *ratio, int nr, const struct bench_tally *t);
void bench_print_vs_each_static(const char *title, const char *const names[],
				const struct bench_spread *ratio, int nr, const struct bench_tally *t);
/* "KEY": {"calls", "fallbacks": {REASON: n...}}, or null without them. */
void bench_json_decisions(struct jw *w, const char *key, const struct bench_decisions *d);
/* Text: "  LABEL  N calls, fell back: REASON n ..." (nothing without them). */
void bench_print_decisions(const char *label, const struct bench_decisions *d);
/* "folio_bytes": [{"size_kb", "bytes"}...], "pmd_bytes" (medians of runs). */
void bench_json_folios(struct jw *w, const struct bench_folios *f);
/* "mthp": [{"size_kb", "anon_fault_alloc", ...}...] (per-size counters). */
void bench_json_counters(struct jw *w, const struct bench_counters *d);
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
/* What a ratio's interval allows against 1.0: bench_verdict_name(). */
const char *bench_verdict(const struct bench_spread *ratio);
/* Text: the closing line that says what an interval, its coverage, n.d.
 * and unranked mean. */
void bench_print_interval_legend(void);

/* --- bench_rounds.c: rounds until the rule says stop ------------------ */

/* A benchmark's rounds (redis: those of one memory.high level, label). */
struct bench_rounds {
	struct bench_rounds_rule rule;
	const char *label;		/* NULL, or the level: "max", "128M" */
	unsigned int done;		/* rounds run to their end */
	unsigned int started;		/* and the one cut short, if any */
	int k;				/* runs begun: the progress count */
	__u64 elapsed_ns;
	struct bench_rounds_widest widest;	/* after the last round */
	enum bench_rounds_why why;	/* why they stopped */
};
/* The rule of o (--repeats, --until-width, --max-time) for a benchmark
 * with room for max rounds. */
void bench_rounds_init(struct bench_rounds *r, const struct bench_opts *o, unsigned int max,
		       const char *label);
/* The rounds to expect for the progress lines: min when fixed, else max. */
unsigned int bench_rounds_planned(const struct bench_rounds *r);
/* Rounds until the rule says stop: round rep runs run(ctx, col, rep, tag)
 * for every column of sel (modes, or a benchmark's own columns), in the
 * rotated order of bench_round_col(); tag is the progress prefix
 * "[LABEL k/total]". A column that is skipped returns 0 at once. After
 * each round, ratios(ctx, rounds, w) notes the spread of every ratio the
 * benchmark reports (bench_rounds_widest_note()) over the rounds so far.
 * Returns run()'s first error (an exit code, or -EINTR): r->why is then
 * BENCH_ROUNDS_INTERRUPTED and r->done the rounds run to their end. */
int bench_rounds_run(const struct bench_opts *o, struct bench_rounds *r, const int *sel, int nsel,
		     int (*run)(void *ctx, int col, int rep, const char *tag),
		     void (*ratios)(void *ctx, int rounds, struct bench_rounds_widest *w), void *ctx);
/* "4.2%", "below 95% coverage" (a ratio without an interval of the wanted
 * coverage: one round, or fewer than 6), "-" (none noted) */
const char *bench_rounds_width_str(const struct bench_rounds_widest *w, char *buf, size_t len);

/* --- bench_hook.c: pagefault --hook-cost ------------------------------- */

/* The highest BPF program id now; the newest STRUCT_OPS program named
 * choose_orders above after_id (an fd, or -ENOENT); a program's run_cnt and
 * run_time_ns; the empty floor program attached to cg (fds of the program
 * and of its link: close the link to detach). */
__u32 bench_hook_last_prog_id(void);
int bench_hook_find_policy_prog(__u32 after_id);
int bench_hook_stats(int prog_fd, __u64 *cnt, __u64 *ns);
int bench_hook_floor_attach(const char *cg, int *prog_fd, int *link_fd, char *note, size_t len);

/* --- the benchmarks ---------------------------------------------------- */

int bench_redis(struct bench_opts *o);
/* redis-server and redis-benchmark found and o->port free: checked by
 * every benchmark that runs redis before it changes anything */
int bench_redis_preflight(const struct bench_opts *o);
/* Send redis at 127.0.0.1:PORT one inline command (CMD without its line
 * end) and read its reply into buf (NUL-terminated): a status line, or a
 * bulk string whole (its "$LEN" line first). The bytes read, or -errno
 * (-ETIMEDOUT: redis did not answer within 5 s). */
int bench_redis_command(unsigned int port, const char *cmd, char *buf, size_t len);
int bench_pagefault(struct bench_opts *o);
int bench_sparse(struct bench_opts *o);
/* shell, gups, bloat, memcached, arenas and compile (o->which):
 * bench_workload.c */
int bench_workload(struct bench_opts *o);
/* a service, a batch job and small processes at once under one node
 * limit, each over the same window (bench_mixed.c) */
int bench_mixed(struct bench_opts *o);

#endif
