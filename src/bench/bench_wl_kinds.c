// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench shell, gups, bloat, memcached and arenas: what each
 * workload does in its child (or, for memcached, as a server loaded from
 * outside), and how it describes itself; compile's are in
 * bench_wl_compile.c. bench_workload.c runs them in every mode and reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
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

#define WL_PAGE		4096ULL

/* --- the workloads (in the child) ------------------------------------- */

unsigned int bench_wl_shells_start(const char *script, const char *arg, unsigned int n,
				   int out_fd, pid_t *pids, int *err)
{
	unsigned int i;

	*err = 0;
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			*err = errno;
			break;
		}
		if (!pids[i]) {
			/* a process group of its own: killed with its pipeline */
			setpgid(0, 0);
			if (out_fd >= 0) {
				dup2(out_fd, STDOUT_FILENO);
				close(out_fd);
			}
			execl("/bin/sh", "sh", "-c", script, arg, (char *)NULL);
			_exit(127);
		}
		setpgid(pids[i], pids[i]);
	}
	return i;
}

/* shell: each pipeline a /bin/sh running the loop; all in parallel */
static int shell_run(const struct bench_opts *o, struct wl_result *res)
{
	char script[512], loops[16];
	pid_t pids[BENCH_WL_MAX_PIPELINES];
	unsigned int i, started;
	int status, err;
	__u64 t0 = bench_now_ns();

	snprintf(script, sizeof(script),
		 "i=0; while [ $i -lt $0 ]; do " BENCH_WL_PIPELINE " || exit 1; i=$((i + 1)); done");
	snprintf(loops, sizeof(loops), "%u", o->wl_loops);
	started = bench_wl_shells_start(script, loops, o->wl_pipelines, -1, pids, &err);
	for (i = 0; i < started; i++)
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			err = err ? err : ECHILD;
	res->secs = (bench_now_ns() - t0) / 1e9;
	res->err = err;
	return err ? -err : 0;
}

__u64 bench_wl_rusage_faults(int who)
{
	struct rusage ru;

	return getrusage(who, &ru) ? 0 : (__u64)ru.ru_minflt + ru.ru_majflt;
}

/* gups: the fill in random order (a Fisher-Yates permutation of the pages),
 * every word of a page written when its turn comes, then random updates */
__u64 *bench_wl_array_fill(__u64 size, int advice, __u64 *seed, struct wl_fill_cost *cost)
{
	__u64 npages = size / WL_PAGE, i, j, w, t0, f0;
	__u64 *table;
	__u32 *order, tmp;

	order = malloc(npages * sizeof(*order));
	if (!order) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < npages; i++)
		order[i] = i;
	for (i = npages - 1; i > 0; i--) {
		j = bench_prng_next(seed) % (i + 1);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	table = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED || (advice && madvise(table, size, advice))) {
		i = errno;
		if (table != MAP_FAILED)
			munmap(table, size);
		free(order);
		errno = i;
		return NULL;
	}
	t0 = bench_now_ns();
	f0 = bench_wl_rusage_faults(RUSAGE_SELF);
	for (i = 0; i < npages; i++) {
		__u64 *page = table + (__u64)order[i] * (WL_PAGE / 8);

		for (w = 0; w < WL_PAGE / 8; w++)
			page[w] = (__u64)order[i] * (WL_PAGE / 8) + w;
	}
	cost->secs = (bench_now_ns() - t0) / 1e9;
	cost->faults = bench_wl_rusage_faults(RUSAGE_SELF) - f0;
	free(order);
	return table;
}

void bench_wl_array_update(__u64 *table, __u64 size, __u64 n, __u64 *seed)
{
	__u64 i, nwords = size / 8;

	for (i = 0; i < n; i++) {
		__u64 r = bench_prng_next(seed);

		table[r % nwords] ^= r;
	}
}

static int gups_run(const struct bench_opts *o, struct wl_result *res)
{
	__u64 seed = BENCH_WL_ARRAY_SEED, t0 = bench_now_ns();
	__u64 *table = bench_wl_array_fill(o->wl_array_size, 0, &seed, &res->fill);

	if (!table) {
		res->err = errno;
		return -res->err;
	}
	bench_wl_array_update(table, o->wl_array_size, o->wl_updates, &seed);
	res->secs = (bench_now_ns() - t0) / 1e9;
	return 0;	/* the table stays mapped: the parent reads its folios */
}

/* bloat and arenas: threads that each allocate and write a little, say
 * they are ready, then hold their memory until the process ends */
struct threads_shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int ready;
	int err;
	const struct bench_opts *o;
};

/* A thread done allocating (err: errno of a failure, 0): counted, then
 * holding. */
static void *thread_hold(struct threads_shared *t, int err)
{
	pthread_mutex_lock(&t->lock);
	t->ready++;
	if (err)
		t->err = err;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	for (;;)
		pause();
	return NULL;
}

/* n threads of fn, started at once; returns when all are ready, with the
 * time that took. */
static int threads_run(const struct bench_opts *o, unsigned int n, void *(*fn)(void *),
		       struct wl_result *res)
{
	static struct threads_shared t = {
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	};
	unsigned int i, started = 0;
	pthread_t id;
	__u64 t0 = bench_now_ns();

	t.o = o;
	for (i = 0; i < n; i++) {
		if (pthread_create(&id, NULL, fn, &t)) {
			res->err = EAGAIN;
			break;
		}
		started++;
	}
	pthread_mutex_lock(&t.lock);
	while (t.ready < started)
		pthread_cond_wait(&t.cond, &t.lock);
	if (t.err)
		res->err = t.err;
	pthread_mutex_unlock(&t.lock);
	res->secs = (bench_now_ns() - t0) / 1e9;
	return res->err ? -res->err : 0;
}

/* bloat: 1 KiB at a time with malloc, as a server's per-connection
 * objects come (glibc gives the threads arenas of their own) */
static void *bloat_thread(void *arg)
{
	struct threads_shared *t = arg;
	__u64 done = 0;
	int err = 0;

	while (done < t->o->wl_per_thread) {
		char *p = malloc(1024);

		if (!p) {
			err = ENOMEM;
			break;
		}
		memset(p, 0x5a, 1024);
		done += 1024;
	}
	return thread_hold(t, err);
}

static int bloat_run(const struct bench_opts *o, struct wl_result *res)
{
	return threads_run(o, o->wl_threads, bloat_thread, res);
}

/* arenas: an arena of its own per thread, mapped whole on a 2M boundary,
 * a few 4K pages of every 2M of it written (a jemalloc-like allocator) */
#define WL_PMD		(2ULL << 20)

static void *arenas_thread(void *arg)
{
	struct threads_shared *t = arg;
	__u64 size = t->o->wl_arena_size, touch = t->o->wl_touch_pages;
	__u64 off, i, step = WL_PMD / touch;
	char *map, *arena;
	int err = 0;

	/* one 2M more, to start the arena on a 2M boundary: a range a PMD
	 * folio can fill */
	map = mmap(NULL, size + WL_PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		err = errno;
	} else {
		arena = (char *)(((uintptr_t)map + WL_PMD - 1) & ~(uintptr_t)(WL_PMD - 1));
		for (off = 0; off < size; off += WL_PMD)
			for (i = 0; i < touch; i++)
				arena[off + i * step] = 0x5a;
	}
	return thread_hold(t, err);
}

static int arenas_run(const struct bench_opts *o, struct wl_result *res)
{
	return threads_run(o, o->wl_arenas, arenas_thread, res);
}

/* --- memcached (in the parent: the server in the cgroup, the load
 * generator outside it, as redis) ------------------------------------- */

#define SERVER_START_TIMEOUT_NS	(30 * NSEC_PER_SEC)
#define SERVER_CONNECT_INTERVAL_US	100000

bool bench_wl_port_listening(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

int bench_wl_server_wait(const char *name, unsigned int port, pid_t *server)
{
	__u64 t0 = bench_now_ns();
	int status;

	if (*server < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot start %s: %s", name,
				     strerror(-*server));
	while (!bench_wl_port_listening(port)) {
		if (bench_stop)
			return -EINTR;
		if (bench_wait(*server, 1, &status) == 0) {
			*server = -1;
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "%s exited at start (port %u busy?)",
					     name, port);
		}
		if (bench_now_ns() - t0 > SERVER_START_TIMEOUT_NS)
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "%s does not listen on port %u",
					     name, port);
		usleep(SERVER_CONNECT_INTERVAL_US);
	}
	return 0;
}

/* memcached in cg (*server: its pid, left running with its data), then
 * memaslap from outside. 0, an exit code (printed) or -EINTR. */
static int memcached_serve(const struct bench_opts *o, const char *cg, struct wl_result *res,
			   pid_t *server)
{
	char port[16], mem[24], ops[24], conc[16], win[24], srv[48];
	char out[8192], cfg[] = "/tmp/mthpctl-bench.XXXXXX";
	int p[2], status, cfg_fd, err;
	pid_t cli;

	snprintf(port, sizeof(port), "%u", o->port);
	snprintf(mem, sizeof(mem), "%llu", (unsigned long long)(o->mc_cache_size >> 20));
	{
		/* no UDP; the cache's own memory is allocated as items come
		 * (no -L: no preallocation) */
		char *argv[] = { (char *)o->memcached, "-u", "nobody", "-l", "127.0.0.1",
				 "-p", port, "-U", "0", "-m", mem, "-t", "2", NULL };

		*server = bench_spawn(cg, argv, -2, -2, NULL, NULL);
	}
	err = bench_wl_server_wait(o->memcached, o->port, server);
	if (err)
		return err;
	snprintf(srv, sizeof(srv), "127.0.0.1:%u", o->port);
	snprintf(ops, sizeof(ops), "%llu", (unsigned long long)o->requests);
	snprintf(conc, sizeof(conc), "%u", o->clients);
	/* memaslap's key space is its window per connection, in thousands */
	snprintf(win, sizeof(win), "%lluk",
		 (unsigned long long)((o->keys + 1000ULL * o->clients - 1) / (1000ULL * o->clients)));
	/* the key and value sizes and the get/set mix, as a file: without one
	 * memaslap writes its defaults to ~/.memslap.cnf and stops where the
	 * home directory is read-only (the VM's) */
	cfg_fd = mkstemp(cfg);
	if (cfg_fd < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a file in /tmp: %s",
				     strerror(errno));
	dprintf(cfg_fd, "key\n64 64 1\nvalue\n%llu %llu 1\ncmd\n0 0.1\n1 0.9\n",
		(unsigned long long)o->value_size, (unsigned long long)o->value_size);
	close(cfg_fd);
	if (pipe2(p, O_CLOEXEC)) {
		unlink(cfg);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
	}
	{
		char *argv[] = { (char *)o->memaslap, "-s", srv, "-x", ops, "-T", "1", "-c", conc,
				 "-w", win, "-F", cfg, NULL };

		cli = bench_spawn(NULL, argv, p[1], -2, NULL, NULL);
	}
	close(p[1]);
	if (cli < 0) {
		close(p[0]);
		unlink(cfg);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot start %s: %s", o->memaslap,
				     strerror(-cli));
	}
	/* memaslap prints its result when it ends: it has the run's --timeout
	 * (BENCH_RUN_TIMEOUT_NS by default) to do so, and exits right after */
	err = bench_read_output(p[0], out, sizeof(out), true, o->timeout_ns);
	close(p[0]);
	if (!err)
		bench_wait(cli, BENCH_CHILD_EXIT_TIMEOUT_NS, &status);
	bench_kill(cli);
	unlink(cfg);
	if (bench_stop || err == -EINTR)
		return -EINTR;
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL,
				     "%s gave no result in the --timeout (%llu s): give a longer "
				     "--timeout or fewer --requests", o->memaslap,
				     (unsigned long long)(o->timeout_ns / NSEC_PER_SEC));
	if (bench_parse_memaslap(out, &res->rate, &res->secs))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "no result from %s (output: \"%.200s\")",
				     o->memaslap, out);
	return 0;
}

/* --- the table -------------------------------------------------------- */

static void shell_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "pipelines", o->wl_pipelines);
	jw_ku64(w, "loops", o->wl_loops);
}

static void shell_headline(const struct bench_opts *o)
{
	printf("%u concurrent pipelines of small programs (seq | sort | od | grep | wc), "
	       "%u times each", o->wl_pipelines, o->wl_loops);
}

static void gups_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "array_size", o->wl_array_size);
	jw_ku64(w, "updates", o->wl_updates);
}

static void gups_headline(const struct bench_opts *o)
{
	char b[32];

	printf("%s written once per 4K page in random order, then %llu random updates",
	       mthpctl_format_size(o->wl_array_size, b, sizeof(b)),
	       (unsigned long long)o->wl_updates);
}

static void bloat_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "threads", o->wl_threads);
	jw_ku64(w, "per_thread", o->wl_per_thread);
}

static void bloat_headline(const struct bench_opts *o)
{
	char b[32];

	printf("%u threads each allocating %s with malloc in 1K pieces", o->wl_threads,
	       mthpctl_format_size(o->wl_per_thread, b, sizeof(b)));
}

static void arenas_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "arenas", o->wl_arenas);
	jw_ku64(w, "arena_size", o->wl_arena_size);
	jw_ku64(w, "touch_pages_per_2m", o->wl_touch_pages);
}

static void arenas_headline(const struct bench_opts *o)
{
	char b[32];

	printf("%u threads each mapping a 2M-aligned arena of %s and touching %u 4K pages "
	       "of every 2M", o->wl_arenas, mthpctl_format_size(o->wl_arena_size, b, sizeof(b)),
	       o->wl_touch_pages);
}

static void memcached_config(struct jw *w, const struct bench_opts *o)
{
	jw_ku64(w, "keys", o->keys);
	jw_ku64(w, "requests", o->requests);
	jw_ku64(w, "value_size", o->value_size);
	jw_ku64(w, "clients", o->clients);
	jw_ku64(w, "cache_size", o->mc_cache_size);
}

static void memcached_headline(const struct bench_opts *o)
{
	char b[32];

	printf("memcached loaded by memaslap: %llu operations (90%% get, 10%% set) of %s "
	       "values over %llu keys (whole thousands per connection), %u connections",
	       (unsigned long long)o->requests,
	       mthpctl_format_size(o->value_size, b, sizeof(b)), (unsigned long long)o->keys,
	       o->clients);
}

const struct wl_kind bench_wl_kinds[BENCH_WL_NR_KINDS] = {
	{ "shell", shell_run, NULL, shell_config, shell_headline },
	{ "gups", gups_run, NULL, gups_config, gups_headline },
	{ "bloat", bloat_run, NULL, bloat_config, bloat_headline },
	{ "memcached", NULL, memcached_serve, memcached_config, memcached_headline },
	{ "arenas", arenas_run, NULL, arenas_config, arenas_headline },
	{ "compile", bench_compile_run, NULL, bench_compile_config, bench_compile_headline,
	  bench_compile_check },
};
