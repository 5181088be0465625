// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl bench: options and dispatch of the benchmarks (benchmarks[]). */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "mthpctl.h"
#include "parse.h"

enum {
	OPT_MODES = 0x200, OPT_POLICY, OPT_HOST, OPT_REPEATS, OPT_UNTIL_WIDTH, OPT_MAX_TIME, OPT_CGROUP, OPT_TIMEOUT, OPT_QUIET, OPT_JSON_OUT,
	OPT_KEYS, OPT_REQUESTS, OPT_VALUE_SIZE, OPT_CLIENTS, OPT_PIPELINE, OPT_HIGH,
	OPT_BGSAVE, OPT_SHIPPED, OPT_PORT, OPT_REDIS_SERVER, OPT_REDIS_BENCHMARK, OPT_SIZES,
	OPT_SIZE, OPT_ITERATIONS, OPT_HOOK_COST, OPT_SETTLE,
	OPT_PROCS, OPT_MAP_SIZE, OPT_STRIDE, OPT_DENSE_SIZE, OPT_DENSE_PASSES,
	OPT_PIPELINES, OPT_LOOPS, OPT_ARRAY_SIZE, OPT_UPDATES, OPT_THREADS, OPT_PER_THREAD,
	OPT_CACHE_SIZE, OPT_MEMCACHED, OPT_MEMASLAP,
	OPT_ARENAS, OPT_ARENA_SIZE, OPT_TOUCH_PAGES, OPT_SOURCE, OPT_JOBS, OPT_FILES,
	OPT_WINDOW, OPT_NODE_HIGH, OPT_STOCK,
};

/* The benchmarks, as BENCHMARK words (the usage line and the errors). */
static const struct {
	const char *name;
	int (*run)(struct bench_opts *o);
} benchmarks[] = {
	{ "redis", bench_redis }, { "pagefault", bench_pagefault }, { "sparse", bench_sparse },
	{ "shell", bench_workload }, { "gups", bench_workload }, { "bloat", bench_workload },
	{ "memcached", bench_workload }, { "arenas", bench_workload },
	{ "compile", bench_workload }, { "mixed", bench_mixed },
};
#define BENCH_NAMES	"redis, pagefault, sparse, shell, gups, bloat, memcached, arenas, compile " \
			"or mixed"
#define NR_BENCHMARKS	(int)(sizeof(benchmarks) / sizeof(benchmarks[0]))

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Common options:", 1 },
	{ "modes", OPT_MODES, "LIST", 0,
	  "modes to run: always, never, policy, simple, host (default all but host; "
	  "with --host madvise all)", 1 },
	{ "policy", OPT_POLICY, "SPEC", 0,
	  "policy of the policy mode with its attach options, e.g. \"auto --threshold 50ms\" "
	  "(default auto), or a policy of your own: \"--object FILE [--ops NAME]\"", 1 },
	{ "host", OPT_HOST, "SETTING", 0,
	  "every size's enabled for the host, policy and simple modes and the caps: "
	  "always (default) or madvise; restored at the end", 1 },
	{ "repeats", OPT_REPEATS, "N", 0,
	  "rounds (one run of every mode each) per level, at least; medians are shown "
	  "(default 3)", 1 },
	{ "until-width", OPT_UNTIL_WIDTH, "PCT", 0,
	  "after --repeats, more rounds until every ratio has an interval of "
	  BENCH_COVERAGE_WANTED_STR " coverage "
	  "(6 rounds at least) at most PCT percent of its median wide (converged), or "
	  "--max-time or " BENCH_ROUNDS_MAX_STR
	  " rounds is reached; the report says which", 1 },
	{ "max-time", OPT_MAX_TIME, "DURATION", 0,
	  "no round that would end after DURATION from the first (redis: per level, "
	  "DURATION shared); alone, rounds until then (default none)", 1 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "the benchmark's cgroup, created and removed (default " BENCH_DEFAULT_CGROUP ")", 1 },
	{ "timeout", OPT_TIMEOUT, "DURATION", 0, "limit of one run (default 15min)", 1 },
	{ "quiet", OPT_QUIET, NULL, 0, "no progress lines on stderr", 1 },
	{ "json-out", OPT_JSON_OUT, "FILE", 0,
	  "also write the results as JSON to FILE (the tables still go to stdout)", 1 },
	{ NULL, 0, NULL, 0, "redis options:", 2 },
	{ "keys", OPT_KEYS, "N", 0, "redis-benchmark -r: key space (default 200000)", 2 },
	{ "requests", OPT_REQUESTS, "N", 0, "redis-benchmark -n: SET requests (default 200000)", 2 },
	{ "value-size", OPT_VALUE_SIZE, "SIZE", 0, "redis-benchmark -d: value size (default 1K)", 2 },
	{ "clients", OPT_CLIENTS, "N", 0, "redis-benchmark -c (default 16)", 2 },
	{ "pipeline", OPT_PIPELINE, "N", 0, "redis-benchmark -P (default 32)", 2 },
	{ "high", OPT_HIGH, "LIST", 0,
	  "memory.high levels, e.g. max,128M (default max,128M)", 2 },
	{ "sizes", OPT_SIZES, "LIST", 0,
	  "also run static per-size caps, e.g. 16K,64K,2M: every size always plus "
	  "\"fixed --max-size SIZE\" (modes cap-SIZE, static settings a policy is compared with)", 2 },
	{ "bgsave", OPT_BGSAVE, NULL, 0,
	  "keep redis' default save points (BGSAVE); default is --save \"\" (noBGSAVE)", 2 },
	{ "shipped", OPT_SHIPPED, NULL, 0,
	  "after each run, run redis as shipped too (disable-thp yes: THP disabled by prctl, "
	  "as redis' default configuration does) in the same mode, and report its rps and "
	  "folios beside the tuned run's (disable-thp no)", 2 },
	{ "settle", OPT_SETTLE, "DURATION", 0,
	  "at memory.high=max, keep redis-server DURATION after the always and policy "
	  "runs and count its folios again: what khugepaged has collapsed by then "
	  "(default 0, off)", 2 },
	{ "port", OPT_PORT, "PORT", 0,
	  "the server's port on 127.0.0.1, redis-server's or memcached's (default 16379)", 2 },
	{ "redis-server", OPT_REDIS_SERVER, "PATH", 0, "redis-server binary (default from PATH)", 2 },
	{ "redis-benchmark", OPT_REDIS_BENCHMARK, "PATH", 0,
	  "redis-benchmark binary (default from PATH)", 2 },
	{ NULL, 0, NULL, 0, "pagefault options:", 3 },
	{ "size", OPT_SIZE, "SIZE", 0, "mapping touched per iteration (default 64M)", 3 },
	{ "iterations", OPT_ITERATIONS, "N", 0, "map/touch/unmap cycles per run (default 16)", 3 },
	{ "hook-cost", OPT_HOOK_COST, NULL, 0,
	  "with kernel.bpf_stats_enabled=1: ns per call of the policy's choose_orders "
	  "next to an empty one attached the same way (the floor)", 3 },
	{ NULL, 0, NULL, 0, "sparse options:", 4 },
	{ "procs", OPT_PROCS, "N", 0, "small processes (default 8)", 4 },
	{ "map-size", OPT_MAP_SIZE, "SIZE", 0, "mapping of each small process (default 32M)", 4 },
	{ "stride", OPT_STRIDE, "SIZE", 0, "one 4K page touched per STRIDE (default 128K)", 4 },
	{ "dense-size", OPT_DENSE_SIZE, "SIZE", 0, "the large process' mapping (default 256M)", 4 },
	{ "dense-passes", OPT_DENSE_PASSES, "N", 0,
	  "map/touch/unmap cycles of the large process (default 4)", 4 },
	{ NULL, 0, NULL, 0, "shell options:", 5 },
	{ "pipelines", OPT_PIPELINES, "N", 0, "concurrent pipelines (default 8)", 5 },
	{ "loops", OPT_LOOPS, "N", 0, "runs of the pipeline in each (default 20)", 5 },
	{ NULL, 0, NULL, 0, "gups options:", 6 },
	{ "array-size", OPT_ARRAY_SIZE, "SIZE", 0, "the array (default 256M)", 6 },
	{ "updates", OPT_UPDATES, "N", 0, "random updates after the fill (default 4000000)", 6 },
	{ NULL, 0, NULL, 0, "bloat options:", 7 },
	{ "threads", OPT_THREADS, "N", 0, "threads (default 64)", 7 },
	{ "per-thread", OPT_PER_THREAD, "SIZE", 0,
	  "what each thread allocates, in 1K pieces (default 256K)", 7 },
	{ NULL, 0, NULL, 0, "memcached options (and redis' --keys, --requests, --value-size, "
	  "--clients, --port):", 8 },
	{ "cache-size", OPT_CACHE_SIZE, "SIZE", 0, "memcached -m (default 1G)", 8 },
	{ "memcached", OPT_MEMCACHED, "PATH", 0, "memcached binary (default from PATH)", 8 },
	{ "memaslap", OPT_MEMASLAP, "PATH", 0,
	  "the load generator, memaslap (default memcaslap, Debian's name, from PATH)", 8 },
	{ NULL, 0, NULL, 0, "arenas options:", 9 },
	{ "arenas", OPT_ARENAS, "N", 0, "threads, each with an arena of its own (default 16)", 9 },
	{ "arena-size", OPT_ARENA_SIZE, "SIZE", 0,
	  "each arena, 2M-aligned, whole 2M (default 8M)", 9 },
	{ "touch-pages", OPT_TOUCH_PAGES, "N", 0,
	  "4K pages touched in every 2M of an arena, 1 to 512 (default 4)", 9 },
	{ NULL, 0, NULL, 0, "compile options:", 10 },
	{ "source", OPT_SOURCE, "DIR", 0,
	  "the mthpctl source tree to compile (default the one mthpctl was built from)", 10 },
	{ "jobs", OPT_JOBS, "N", 0, "make -j (default the online CPUs)", 10 },
	{ "files", OPT_FILES, "N", 0, "compile the first N files only (default all)", 10 },
	{ NULL, 0, NULL, 0, "mixed options (and redis' --keys (default 30000 here), --value-size, "
	  "--clients, --pipeline, --port, --sizes; gups' --array-size, the size of each buffer the "
	  "batch maps, fills, processes and unmaps (default 64M here); shell's --pipelines "
	  "(default 4 here)):", 11 },
	{ "window", OPT_WINDOW, "DURATION", 0,
	  "the window every workload's throughput is measured over (default 20s)", 11 },
	{ "node-high", OPT_NODE_HIGH, "SIZE", 0,
	  "memory.high of the workloads' parent cgroup (default --array-size plus "
	  "--keys x --value-size, less than they use)", 11 },
	{ "stock", OPT_STOCK, NULL, 0,
	  "a kernel without the series: the global settings (modes always, never, host at "
	  "madvise, the sizes alone) and madvise+batch, a madvise host where only the batch "
	  "advises its buffers, compared with each; no policy; without a memory controller, "
	  "no node limit", 11 },
	{ 0 }
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct bench_opts *o = state->input;
	char err[256];
	__u64 v;
	int n;

#define COUNT(field, min, max, what) do {					\
		if (bench_parse_count(arg, min, max, &v))				\
			argp_error(state, "bad %s '%s' (a number from %llu to %llu)", \
				   what, arg, (unsigned long long)(min),	\
				   (unsigned long long)(max));			\
		o->field = v;							\
	} while (0)
#define SIZE(field, min, what) do {						\
		if (mthpctl_parse_size(arg, &v) || v < (min))			\
			argp_error(state, "bad %s '%s' (a size of at least %llu bytes, e.g. 64M)", \
				   what, arg, (unsigned long long)(min));	\
		o->field = v;							\
	} while (0)

	switch (key) {
	case OPT_MODES:
		if (bench_parse_modes(arg, &o->modes) || !o->modes)
			argp_error(state, "bad --modes '%s' (a list of always, never, policy)", arg);
		break;
	case OPT_POLICY:
		o->policy_text = arg;
		n = bench_split_words(strdup(arg), o->policy_words, BENCH_MAX_POLICY_WORDS);
		if (n <= 0)
			argp_error(state, "bad --policy '%s' (NAME [attach options], e.g. \"auto\", "
				   "or \"--object FILE\")", arg);
		o->nr_policy_words = n;
		if (o->policy_words[0][0] != '-')
			break;
		if (bench_parse_object_words(o->policy_words, n, &o->policy_object,
					     &o->policy_ops, err, sizeof(err)))
			argp_error(state, "bad --policy '%s': %s", arg, err);
		if (access(o->policy_object, R_OK))
			argp_error(state, "bad --policy '%s': cannot read %s: %s", arg,
				   o->policy_object, strerror(errno));
		break;
	case OPT_HOST:
		if (strcmp(arg, "always") && strcmp(arg, "madvise"))
			argp_error(state, "bad --host '%s' (always or madvise)", arg);
		o->host = arg;
		o->given |= BENCH_GIVEN_HOST;
		break;
	case OPT_REPEATS: COUNT(repeats, 1, BENCH_ROUNDS_MAX, "--repeats"); break;
	case OPT_UNTIL_WIDTH:
		if (bench_parse_pct(arg, &o->until_width_pct))
			argp_error(state, "bad --until-width '%s' (a percentage above 0 up to 100, "
				   "e.g. 5 or 2.5)", arg);
		break;
	case OPT_MAX_TIME:
		if (mthpctl_parse_duration(arg, &v) || v < NSEC_PER_SEC)
			argp_error(state, "bad --max-time '%s' (a duration of at least 1s, e.g. 2h)",
				   arg);
		o->max_time_ns = v;
		break;
	case OPT_CGROUP:
		if (arg[0] != '/' || strlen(arg) > 400)
			argp_error(state, "--cgroup needs an absolute path");
		o->cgroup = arg;
		break;
	case OPT_TIMEOUT:
		if (mthpctl_parse_duration(arg, &v) || v < NSEC_PER_SEC)
			argp_error(state, "bad --timeout '%s' (a duration of at least 1s, e.g. 10min)", arg);
		o->timeout_ns = v;
		break;
	case OPT_QUIET: o->quiet = true; break;
	case OPT_JSON_OUT: o->json_out = arg; break;
	case OPT_KEYS:
		COUNT(keys, 1, 1000000000, "--keys");
		o->given |= BENCH_GIVEN_KEYS;
		break;
	case OPT_REQUESTS: COUNT(requests, 1, 1000000000, "--requests"); break;
	case OPT_VALUE_SIZE: SIZE(value_size, 1, "--value-size"); break;
	case OPT_CLIENTS: COUNT(clients, 1, 10000, "--clients"); break;
	case OPT_PIPELINE: COUNT(pipeline, 1, 10000, "--pipeline"); break;
	case OPT_HIGH:
		n = bench_parse_high_list(arg, o->high, BENCH_MAX_LIST);
		if (n <= 0)
			argp_error(state, "bad --high '%s' (a list of max and sizes, e.g. max,128M)", arg);
		o->nr_high = n;
		break;
	case OPT_SIZES:
		n = bench_parse_size_list(arg, o->sizes, BENCH_MAX_LIST);
		if (n <= 0)
			argp_error(state, "bad --sizes '%s' (a list of folio sizes from 8K to 1G, "
				   "e.g. 16K,64K,2M)", arg);
		o->nr_sizes = n;
		break;
	case OPT_BGSAVE: o->bgsave = true; break;
	case OPT_SHIPPED: o->shipped = true; break;
	case OPT_SETTLE:
		if (mthpctl_parse_duration(arg, &v) || v > 3600 * NSEC_PER_SEC)
			argp_error(state, "bad --settle '%s' (a duration up to 1h, e.g. 30s; 0 = off)",
				   arg);
		o->settle_ns = v;
		break;
	case OPT_PORT: COUNT(port, 1, 65535, "--port"); break;
	case OPT_REDIS_SERVER: o->redis_server = arg; break;
	case OPT_REDIS_BENCHMARK: o->redis_benchmark = arg; break;
	case OPT_SIZE: SIZE(pf_size, 4096, "--size"); break;
	case OPT_ITERATIONS: COUNT(pf_iterations, 1, 1000000, "--iterations"); break;
	case OPT_HOOK_COST: o->pf_hook_cost = true; break;
	case OPT_PROCS: COUNT(sp_procs, 1, 200, "--procs"); break;
	case OPT_MAP_SIZE: SIZE(sp_map_size, 4096, "--map-size"); break;
	case OPT_STRIDE: SIZE(sp_stride, 4096, "--stride"); break;
	case OPT_DENSE_SIZE: SIZE(sp_dense_size, 4096, "--dense-size"); break;
	case OPT_DENSE_PASSES: COUNT(sp_dense_passes, 1, 100000, "--dense-passes"); break;
	case OPT_PIPELINES:
		COUNT(wl_pipelines, 1, BENCH_WL_MAX_PIPELINES, "--pipelines");
		o->given |= BENCH_GIVEN_PIPELINES;
		break;
	case OPT_LOOPS: COUNT(wl_loops, 1, 1000000, "--loops"); break;
	case OPT_ARRAY_SIZE:
		SIZE(wl_array_size, 1ULL << 20, "--array-size");
		/* the fill order is a permutation of 32-bit page numbers */
		if (o->wl_array_size % 4096 || o->wl_array_size > (1ULL << 44))
			argp_error(state, "bad --array-size '%s' (whole 4K pages, at most 16T)", arg);
		o->given |= BENCH_GIVEN_ARRAY_SIZE;
		break;
	case OPT_UPDATES: COUNT(wl_updates, 0, 1ULL << 40, "--updates"); break;
	case OPT_THREADS: COUNT(wl_threads, 1, 4096, "--threads"); break;
	case OPT_PER_THREAD: SIZE(wl_per_thread, 1024, "--per-thread"); break;
	case OPT_CACHE_SIZE: SIZE(mc_cache_size, 1ULL << 20, "--cache-size"); break;
	case OPT_MEMCACHED: o->memcached = arg; break;
	case OPT_MEMASLAP: o->memaslap = arg; break;
	case OPT_ARENAS: COUNT(wl_arenas, 1, 4096, "--arenas"); break;
	case OPT_ARENA_SIZE:
		SIZE(wl_arena_size, 2ULL << 20, "--arena-size");
		if (o->wl_arena_size % (2ULL << 20))
			argp_error(state, "bad --arena-size '%s' (whole 2M, e.g. 8M)", arg);
		break;
	case OPT_TOUCH_PAGES: COUNT(wl_touch_pages, 1, 512, "--touch-pages"); break;
	case OPT_SOURCE: o->cc_source = arg; break;
	case OPT_JOBS: COUNT(cc_jobs, 1, 1024, "--jobs"); break;
	case OPT_FILES: COUNT(cc_files, 1, 100000, "--files"); break;
	case OPT_WINDOW:
		if (mthpctl_parse_duration(arg, &v) || v < NSEC_PER_SEC || v > 3600 * NSEC_PER_SEC)
			argp_error(state, "bad --window '%s' (a duration from 1s to 1h, e.g. 20s)", arg);
		o->mx_window_ns = v;
		break;
	case OPT_NODE_HIGH: SIZE(mx_node_high, 1ULL << 20, "--node-high"); break;
	case OPT_STOCK: o->stock = true; break;
	case ARGP_KEY_ARG:
		if (o->which)
			argp_error(state, "unexpected argument '%s'", arg);
		for (n = 0; n < NR_BENCHMARKS; n++)
			if (!strcmp(arg, benchmarks[n].name))
				o->which = arg;
		if (!o->which)
			argp_error(state, "unknown benchmark '%s' (" BENCH_NAMES ")", arg);
		break;
	case ARGP_KEY_END:
		if (!o->which)
			argp_error(state, "missing BENCHMARK (" BENCH_NAMES ")");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
#undef COUNT
#undef SIZE
}

static const char doc[] =
	"Measure THP modes and a policy: redis SET throughput under memory.high "
	"pressure, page-fault cost, memory of sparse small processes; the field's "
	"workloads: short pipelines of small programs (shell), random access over a "
	"large array (gups), many threads allocating a little (bloat), many arenas "
	"each touched a little per 2M (arenas), memcached, a compile with make -jN "
	"(compile); "
	"a service, a batch job and small processes at once under one node limit, "
	"each measured over the same window (mixed). Needs root "
	"and a cgroup2 memory controller (mixed --stock: a cgroup2 hierarchy); every setting changed is restored at the "
	"end, on error and on SIGINT/SIGTERM."
	"\v"
	"Modes: always and never set every hugepages-*/enabled (and the global "
	"enabled); policy is the --host setting plus the --policy attached to the run's "
	"cgroup, simple the same with the simple baseline policy (skipped with a note "
	"when the kernel lacks bpf_mthp_ops); host is the --host setting alone.\n"
	"\n"
	"Examples:\n"
	"  mthpctl bench redis\n"
	"  mthpctl bench redis --high max,2G --keys 3000000 --requests 3000000\n"
	"  mthpctl bench redis --bgsave --policy \"auto --threshold 50ms\" -j\n"
	"  mthpctl bench redis --high 128M --sizes 16K,64K,2M\n"
	"  mthpctl bench pagefault --size 256M\n"
	"  mthpctl bench pagefault --modes always,policy --hook-cost\n"
	"  mthpctl bench sparse --modes never,policy\n"
	"  mthpctl bench gups --array-size 512M --repeats 5\n"
	"  mthpctl bench shell --until-width 5 --max-time 30min\n"
	"  mthpctl bench mixed --repeats 5 --until-width 5 --max-time 1h\n"
	"  mthpctl bench mixed --stock --repeats 6 --array-size 1G\n"
	"  mthpctl bench arenas --arenas 32 --touch-pages 8\n"
	"  mthpctl bench compile --jobs 2\n"
	"  mthpctl bench redis --host madvise --sizes 64K\n"
	"  mthpctl bench pagefault --policy \"--object my.bpf.o\"\n"
	"\n"
	"Exit status: as mthpctl(8); 128+N when stopped by signal N.";

static const struct argp argp = {
	options, parse_opt, "redis|pagefault|sparse|shell|gups|bloat|memcached|arenas|compile|mixed", doc, mthpctl_subcommand_children, NULL, NULL
};

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o = {
		.host = "always",
		.repeats = 3,
		.cgroup = BENCH_DEFAULT_CGROUP,
		.timeout_ns = BENCH_RUN_TIMEOUT_NS,
		.keys = 200000, .requests = 200000, .value_size = 1024,
		.clients = 16, .pipeline = 32, .port = 16379,
		.nr_high = 2, .high = { BENCH_HIGH_MAX, 128ULL << 20 },
		.redis_server = "redis-server", .redis_benchmark = "redis-benchmark",
		.pf_size = 64ULL << 20, .pf_iterations = 16,
		.sp_procs = 8, .sp_map_size = 32ULL << 20, .sp_stride = 128ULL << 10,
		.sp_dense_size = 256ULL << 20, .sp_dense_passes = 4,
		.wl_pipelines = 8, .wl_loops = 20, .wl_array_size = 256ULL << 20,
		.wl_updates = 4000000, .wl_threads = 64, .wl_per_thread = 256ULL << 10,
		.mc_cache_size = 1ULL << 30, .memcached = "memcached", .memaslap = "memcaslap",
		.wl_arenas = 16, .wl_arena_size = 8ULL << 20, .wl_touch_pages = 4,
		.cc_source = MTHPCTL_SRC_DIR,
		.mx_window_ns = 20 * NSEC_PER_SEC,
	};
	static char auto_spec[] = "auto";
	int n;

	n = sysconf(_SC_NPROCESSORS_ONLN);
	o.cc_jobs = n > 0 ? n : 1;
	argp_parse(&argp, argc, argv, 0, NULL, &o);
	if (o.stock) {
		if (strcmp(o.which, "mixed"))
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "--stock is for bench mixed: drop it, or run mixed");
		if (o.modes & (1u << BENCH_POLICY | 1u << BENCH_SIMPLE) || o.nr_policy_words ||
		    o.policy_object)
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "--stock runs no policy: drop --policy and the modes "
					     "policy and simple");
		if ((o.given & BENCH_GIVEN_HOST) && strcmp(o.host, "madvise"))
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "--stock's host mode is madvise (its split needs it): "
					     "drop --host");
		o.host = "madvise";
		if (!o.modes)
			o.modes = 1u << BENCH_ALWAYS | 1u << BENCH_NEVER | 1u << BENCH_HOST;
	}
	/* the host's setting alone is a mode of its own only where it is not
	 * always */
	if (!o.modes)
		o.modes = ((1u << BENCH_NR_MODES) - 1) &
			  ~(strcmp(o.host, "always") ? 0 : 1u << BENCH_HOST);
	if (!o.nr_policy_words) {
		o.policy_text = auto_spec;
		o.policy_words[0] = auto_spec;
		o.nr_policy_words = 1;
	}
	/* a refusal skips the policy rows with a note (bench_policy_attach_opts) */
	if (!o.policy_object)
		mthpctl_policy_spec_words(o.policy_words, o.nr_policy_words, &o.policy,
					  &o.policy_flags, o.policy_refused,
					  sizeof(o.policy_refused));
	for (n = 0; n < NR_BENCHMARKS; n++)
		if (!strcmp(o.which, benchmarks[n].name))
			break;
	return benchmarks[n].run(&o);
}
