// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench redis: redis-server in a cgroup with memory.high, THP mode
 * set per run, redis-benchmark SETs from outside; the original mthp_ext
 * method at a configurable size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "bench_common.h"
#include "mthpctl.h"
#include "parse.h"

struct redis_run {
	bool done;
	struct bench_redis_row row;
	struct bench_counters delta;
	struct bench_cgstat cs;
	double secs;
};

struct redis_cell {		/* one mode at one level: medians */
	int n;
	double rps, avg, p50, p95, p99;
	double rps_runs[64];
	__u64 high_events, psi_some_us, psi_full_us, peak;
	struct bench_counters delta;
};

static bool in_path(const char *name)
{
	char *path, *dir, *save = NULL, buf[4096];
	bool ok = false;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	for (dir = strtok_r(path, ":", &save); dir && !ok; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", dir, name);
		ok = access(buf, X_OK) == 0;
	}
	free(path);
	return ok;
}

static int port_busy(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1, busy;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	busy = bind(fd, (struct sockaddr *)&a, sizeof(a)) && errno == EADDRINUSE;
	close(fd);
	return busy;
}

static bool ping(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { 1, 0 };
	char buf[64] = "";
	int fd;
	bool ok = false;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    write(fd, "PING\r\n", 6) == 6 && read(fd, buf, sizeof(buf) - 1) > 0)
		ok = !strncmp(buf, "+PONG", 5);
	close(fd);
	return ok;
}

static void tail_file(const char *path)
{
	char buf[4096], *p;
	long n = mthpctl_read_file(path, buf, sizeof(buf));

	if (n <= 0)
		return;
	p = buf + (n > 1500 ? n - 1500 : 0);
	fprintf(stderr, "--- %s (end) ---\n%s%s", path, p, buf[n - 1] == '\n' ? "" : "\n");
}

struct redis_ctx {
	struct bench_opts *o;
	char tmpdir[64];
	char port[16];
	int ret;		/* first fatal exit code */
	bool policy_skip;
	char policy_note[512];
};

/* One run; returns 0, an exit code (printed) or -EINTR. */
static int redis_one(struct redis_ctx *c, enum bench_mode mode, __u64 high, struct redis_run *r)
{
	struct bench_opts *o = c->o;
	char cg[600], logp[128], errp[128], hbuf[32], num[5][24];
	char out[8192];
	struct bench_counters before, after;
	int lfd = -1, efd = -1, p[2] = { -1, -1 }, status, ret = 0, err;
	pid_t srv = -1, cli = -1;
	size_t off = 0;
	__u64 t0, start;

	err = bench_set_thp(mode == BENCH_NEVER ? "never" : "always");
	if (err)
		return err;
	bench_drop_caches();
	err = bench_cg_create("redis", cg, sizeof(cg));
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a cgroup in %s: %s",
				     o->cgroup, strerror(-err));
	if (high == BENCH_HIGH_MAX)
		strcpy(hbuf, "max");
	else
		snprintf(hbuf, sizeof(hbuf), "%llu", (unsigned long long)high);
	err = bench_cg_write(cg, "memory.high", hbuf);
	if (err) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot set %s/memory.high: %s", cg, strerror(-err));
		goto out;
	}
	if (mode == BENCH_POLICY) {
		err = bench_policy_attach(o, cg, c->policy_note, sizeof(c->policy_note));
		if (err) {
			c->policy_skip = true;
			fprintf(stderr, "mthpctl: note: policy rows skipped: %s\n", c->policy_note);
			ret = 0;
			goto out;
		}
	}

	snprintf(logp, sizeof(logp), "%s/redis-server.log", c->tmpdir);
	snprintf(errp, sizeof(errp), "%s/redis-benchmark.err", c->tmpdir);
	lfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (lfd < 0 || efd < 0) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create files in %s: %s",
				    c->tmpdir, strerror(errno));
		goto out;
	}
	bench_counters_read(&before);
	{
		char *argv[] = {
			(char *)o->redis_server, "--port", c->port, "--bind", "127.0.0.1",
			"--disable-thp", "no", "--daemonize", "no", "--dir", c->tmpdir,
			"--appendonly", "no", "--logfile", "", "--save", "", NULL,
		};
		if (o->bgsave)
			argv[15] = NULL;	/* the default save points: BGSAVE */
		srv = bench_spawn(cg, argv, lfd, lfd, NULL, NULL);
	}
	if (srv < 0) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot start redis-server: %s", strerror(-srv));
		goto out;
	}
	start = bench_now_ns();
	while (!ping(o->port)) {
		if (bench_wait(srv, 1, &status) == 0 || bench_stop) {
			if (bench_stop) {
				ret = -EINTR;
				goto out;
			}
			srv = -1;
			tail_file(logp);
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "redis-server exited at start (log above)");
			goto out;
		}
		if (bench_now_ns() - start > 60000000000ULL) {
			tail_file(logp);
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "redis-server does not answer PING on port %s",
					    c->port);
			goto out;
		}
		usleep(100000);
	}

	snprintf(num[0], sizeof(num[0]), "%llu", (unsigned long long)o->keys);
	snprintf(num[1], sizeof(num[1]), "%llu", (unsigned long long)o->requests);
	snprintf(num[2], sizeof(num[2]), "%llu", (unsigned long long)o->value_size);
	snprintf(num[3], sizeof(num[3]), "%u", o->clients);
	snprintf(num[4], sizeof(num[4]), "%u", o->pipeline);
	if (pipe2(p, O_CLOEXEC)) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
		goto out;
	}
	t0 = bench_now_ns();
	{
		char *argv[] = {
			(char *)o->redis_benchmark, "--csv", "-h", "127.0.0.1", "-p", c->port,
			"-r", num[0], "-n", num[1], "-d", num[2], "-c", num[3], "-P", num[4],
			"-t", "set", NULL,
		};
		cli = bench_spawn(NULL, argv, p[1], efd, NULL, NULL);
	}
	close(p[1]);
	p[1] = -1;
	if (cli < 0) {
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot start redis-benchmark: %s", strerror(-cli));
		goto out;
	}
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		ssize_t n;

		if (bench_stop) {
			ret = -EINTR;
			goto out;
		}
		if (bench_now_ns() - t0 > o->timeout_ns) {
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL,
					    "redis-benchmark did not finish in the --timeout");
			goto out;
		}
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		n = read(p[0], out + off, sizeof(out) - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || off + n >= sizeof(out) - 1) {
			off += n > 0 ? n : 0;
			break;
		}
		off += n;
	}
	out[off] = '\0';
	err = bench_wait(cli, 10000000000ULL, &status);
	if (err == -EINTR) {
		ret = -EINTR;
		goto out;
	}
	if (!err)
		cli = -1;
	r->secs = (bench_now_ns() - t0) / 1e9;
	bench_counters_read(&after);
	bench_counters_delta(&before, &after, &r->delta);
	bench_cgstat_read(cg, &r->cs);
	err = bench_parse_redis_csv(out, "SET", &r->row);
	if (err) {
		tail_file(errp);
		tail_file(logp);
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL,
				    "no SET result from redis-benchmark (output: \"%.200s\")", out);
		goto out;
	}
	r->done = true;
out:
	if (cli > 0)
		bench_kill(cli);
	if (srv > 0)
		bench_kill(srv);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (lfd >= 0)
		close(lfd);
	if (efd >= 0)
		close(efd);
	bench_cg_remove(cg);
	return bench_stop ? -EINTR : ret;
}

static void make_cell(struct redis_run *runs, int n, struct redis_cell *c)
{
	double v[5][64];
	__u64 u[4][64], cnt[64];
	int i, j, s, k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		struct redis_run *r = &runs[i];

		if (!r->done)
			continue;
		v[0][c->n] = r->row.rps;
		v[1][c->n] = r->row.avg;
		v[2][c->n] = r->row.p50;
		v[3][c->n] = r->row.p95;
		v[4][c->n] = r->row.p99;
		u[0][c->n] = r->cs.high_events;
		u[1][c->n] = r->cs.psi_some_us;
		u[2][c->n] = r->cs.psi_full_us;
		u[3][c->n] = r->cs.peak;
		c->rps_runs[c->n] = r->row.rps;
		c->n++;
	}
	c->rps = bench_median(v[0], c->n);
	c->avg = bench_median(v[1], c->n);
	c->p50 = bench_median(v[2], c->n);
	c->p95 = bench_median(v[3], c->n);
	c->p99 = bench_median(v[4], c->n);
	c->high_events = bench_median_u64(u[0], c->n);
	c->psi_some_us = bench_median_u64(u[1], c->n);
	c->psi_full_us = bench_median_u64(u[2], c->n);
	c->peak = bench_median_u64(u[3], c->n);
	/* counters: per size, the median of the per-run deltas */
	for (i = 0; i < n && !runs[i].done; i++)
		;
	if (i == n)
		return;
	c->delta = runs[i].delta;
	for (s = 0; s < c->delta.nr; s++)
		for (k = 0; k < BENCH_NR_CNT; k++) {
			int m = 0;

			for (j = 0; j < n; j++)
				if (runs[j].done)
					cnt[m++] = runs[j].delta.v[s][k];
			c->delta.v[s][k] = bench_median_u64(cnt, m);
		}
}

static const char *high_str(__u64 high, char *buf, size_t len)
{
	if (high == BENCH_HIGH_MAX)
		return "max";
	return mthpctl_format_size(high, buf, len);
}

static void print_counters_text(const char *mode, const struct bench_counters *d)
{
	int s, any = 0;

	printf("  %-14s", mode);
	for (s = 0; s < d->nr; s++) {
		if (!d->v[s][0] && !d->v[s][1] && !d->v[s][2])
			continue;
		printf("%s%llukB %llu/%llu/%llu", any++ ? ", " : " ",
		       (unsigned long long)d->size_kb[s], (unsigned long long)d->v[s][0],
		       (unsigned long long)d->v[s][1], (unsigned long long)d->v[s][2]);
	}
	printf("%s\n", any ? "" : " (no mTHP activity)");
}

static void counters_json(struct jw *w, const struct bench_counters *d)
{
	int s, k;

	jw_key(w, "mthp");
	jw_arr_open(w);
	for (s = 0; s < d->nr; s++) {
		jw_obj_open(w);
		jw_ku64(w, "size_kb", d->size_kb[s]);
		for (k = 0; k < BENCH_NR_CNT; k++)
			jw_ku64(w, bench_cnt_names[k], d->v[s][k]);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void jdbl(struct jw *w, const char *k, double v)
{
	jw_key(w, k);
	jw_double(w, v);
}

static void fmt_ms(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, v < 100 ? "%.2f" : "%.0f", v);
}

static void report(struct redis_ctx *c, struct redis_cell cells[][BENCH_NR_MODES], bool partial)
{
	struct bench_opts *o = c->o;
	struct jw *w;
	struct utsname u;
	char b1[32], spec[256] = "";
	int l, m, i;

	uname(&u);
	for (i = 0; i < o->nr_policy_words; i++)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%s%s",
			 i ? " " : "", o->policy_words[i]);

	w = bench_json_begin(o);
	if (w) {
		jw_obj_open(w);
		jw_kstr(w, "benchmark", "redis");
		jw_kstr(w, "kernel", u.release);
		jw_kbool(w, "interrupted", partial);
		jw_key(w, "config");
		jw_obj_open(w);
		jw_ku64(w, "keys", o->keys);
		jw_ku64(w, "requests", o->requests);
		jw_ku64(w, "value_size", o->value_size);
		jw_ku64(w, "clients", o->clients);
		jw_ku64(w, "pipeline", o->pipeline);
		jw_kbool(w, "bgsave", o->bgsave);
		jw_ku64(w, "repeats", o->repeats);
		jw_kstr(w, "policy", spec);
		jw_obj_close(w);
		jw_key(w, "notes");
		jw_arr_open(w);
		if (c->policy_skip) {
			char note[600];

			snprintf(note, sizeof(note), "policy rows skipped: %s", c->policy_note);
			jw_str(w, note);
		}
		jw_arr_close(w);
		jw_key(w, "levels");
		jw_arr_open(w);
		for (l = 0; l < o->nr_high; l++) {
			double ra = cells[l][BENCH_ALWAYS].rps, rn = cells[l][BENCH_NEVER].rps;

			jw_obj_open(w);
			if (o->high[l] == BENCH_HIGH_MAX)
				jw_kstr(w, "memory_high", "max");
			else
				jw_ku64(w, "memory_high", o->high[l]);
			jw_key(w, "modes");
			jw_arr_open(w);
			for (m = 0; m < BENCH_NR_MODES; m++) {
				struct redis_cell *x = &cells[l][m];

				if (!x->n)
					continue;
				jw_obj_open(w);
				jw_kstr(w, "mode", bench_mode_name(m, o));
				jw_ku64(w, "runs", x->n);
				jdbl(w, "rps", x->rps);
				jdbl(w, "avg_ms", x->avg);
				jdbl(w, "p50_ms", x->p50);
				jdbl(w, "p95_ms", x->p95);
				jdbl(w, "p99_ms", x->p99);
				jdbl(w, "rps_vs_always_pct", bench_pct(x->rps, ra));
				jdbl(w, "p99_vs_always_pct", bench_pct(x->p99, cells[l][BENCH_ALWAYS].p99));
				jdbl(w, "oracle", bench_oracle(x->rps, ra, rn));
				jw_key(w, "rps_runs");
				jw_arr_open(w);
				for (i = 0; i < x->n; i++)
					jw_double(w, x->rps_runs[i]);
				jw_arr_close(w);
				jw_ku64(w, "memory_events_high", x->high_events);
				jw_ku64(w, "psi_some_us", x->psi_some_us);
				jw_ku64(w, "psi_full_us", x->psi_full_us);
				jw_ku64(w, "memory_peak", x->peak);
				counters_json(w, &x->delta);
				jw_obj_close(w);
			}
			jw_arr_close(w);
			jw_obj_close(w);
		}
		jw_arr_close(w);
		jw_obj_close(w);
		bench_json_end(o, w);
	}
	if (g.json)
		return;

	printf("redis SET on %s: %llu keys, %llu requests, %s values, %u clients, pipeline %u, %s, "
	       "median of %u%s\n",
	       u.release, (unsigned long long)o->keys, (unsigned long long)o->requests,
	       mthpctl_format_size(o->value_size, b1, sizeof(b1)), o->clients, o->pipeline,
	       o->bgsave ? "BGSAVE" : "noBGSAVE", o->repeats, partial ? " (INTERRUPTED: partial)" : "");
	if (c->policy_skip)
		printf("note: policy rows skipped: %s\n", c->policy_note);
	for (l = 0; l < o->nr_high; l++) {
		double ra = cells[l][BENCH_ALWAYS].rps, rn = cells[l][BENCH_NEVER].rps;

		printf("\nmemory.high=%s\n", high_str(o->high[l], b1, sizeof(b1)));
		printf("%-14s %10s %9s %8s %8s %8s %8s %7s %8s %10s %9s\n", "mode", "rps", "vs always",
		       "avg ms", "p50 ms", "p95 ms", "p99 ms", "oracle", "high ev", "stall ms",
		       "peak");
		for (m = 0; m < BENCH_NR_MODES; m++) {
			struct redis_cell *x = &cells[l][m];
			char pct[16], a[16], p50[16], p95[16], p99[16], orc[16], pk[32];
			double d = bench_pct(x->rps, ra), q = bench_oracle(x->rps, ra, rn);

			if (!x->n)
				continue;
			snprintf(pct, sizeof(pct), isnan(d) ? "-" : "%+.1f%%", d);
			snprintf(orc, sizeof(orc), isnan(q) ? "-" : "%.3f", q);
			fmt_ms(a, sizeof(a), x->avg);
			fmt_ms(p50, sizeof(p50), x->p50);
			fmt_ms(p95, sizeof(p95), x->p95);
			fmt_ms(p99, sizeof(p99), x->p99);
			printf("%-14s %10.0f %9s %8s %8s %8s %8s %7s %8llu %10.1f %9s\n",
			       bench_mode_name(m, o), x->rps, pct, a, p50, p95, p99, orc,
			       (unsigned long long)x->high_events, x->psi_full_us / 1000.0,
			       mthpctl_format_size(x->peak & ~0xfffffULL, pk, sizeof(pk)));
		}
		printf("mTHP per run (size alloc/fallback/swpout):\n");
		for (m = 0; m < BENCH_NR_MODES; m++)
			if (cells[l][m].n)
				print_counters_text(bench_mode_name(m, o), &cells[l][m].delta);
	}
	printf("\n(stall ms: the cgroup's memory.pressure full total; high ev: memory.events high; "
	       "oracle: rps / best of always and never)\n");
	fflush(stdout);
}

/* Our private temporary directory: logs, dump.rdb, temp-*.rdb. */
static void rm_tmpdir(const char *dir)
{
	char path[400];
	struct dirent *de;
	DIR *d;

	if (!dir[0])
		return;
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' || (de->d_name[1] && strcmp(de->d_name, ".."))) {
				snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(dir);
}

int bench_redis(struct bench_opts *o)
{
	struct redis_ctx c = { .o = o };
	struct redis_run (*runs)[BENCH_NR_MODES][64];
	struct redis_cell cells[BENCH_MAX_LIST][BENCH_NR_MODES];
	int l, m, rep, total = 0, k = 0, ret = 0, err;
	char hb[32];
	const char *tmp = getenv("TMPDIR");

	if (o->repeats > 64)
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "redis: --repeats is at most 64");
	if (!in_path(o->redis_server))
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "%s not found: install redis-server (Debian: apt install redis-server) "
				     "or give --redis-server PATH", o->redis_server);
	if (!in_path(o->redis_benchmark))
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "%s not found: install redis-tools or give --redis-benchmark PATH",
				     o->redis_benchmark);
	if (port_busy(o->port))
		return mthpctl_error(MTHPCTL_EXIT_STATE,
				     "port %u on 127.0.0.1 is busy: stop what listens there or give --port",
				     o->port);
	snprintf(c.port, sizeof(c.port), "%u", o->port);
	ret = bench_setup(o);
	if (ret)
		return ret;
	snprintf(c.tmpdir, sizeof(c.tmpdir), "%s/mthpctl-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(c.tmpdir)) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a directory in /tmp: %s",
				     strerror(errno));
	}
	runs = calloc(BENCH_MAX_LIST, sizeof(*runs));
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (o->modes & (1u << m))
			total += o->nr_high * o->repeats;

	/* interleave modes within a repeat: drift hits every mode alike */
	for (l = 0; l < o->nr_high && !ret; l++)
		for (rep = 0; rep < (int)o->repeats && !ret; rep++)
			for (m = 0; m < BENCH_NR_MODES && !ret; m++) {
				struct redis_run *r = &runs[l][m][rep];

				if (!(o->modes & (1u << m)))
					continue;
				k++;
				if (m == BENCH_POLICY && c.policy_skip)
					continue;
				bench_progress(o, "[%d/%d] redis %s memory.high=%s run %d/%u ...", k,
					       total, bench_mode_name(m, o),
					       high_str(o->high[l], hb, sizeof(hb)), rep + 1, o->repeats);
				err = redis_one(&c, m, o->high[l], r);
				if (err) {
					ret = err;
					break;
				}
				if (r->done)
					bench_progress(o, "[%d/%d]   %.0f rps, p99 %.2f ms, %.1f s", k, total,
						       r->row.rps, r->row.p99, r->secs);
			}

	bench_restore();
	rm_tmpdir(c.tmpdir);
	if (ret > 0) {
		free(runs);
		return ret;
	}
	for (l = 0; l < o->nr_high; l++)
		for (m = 0; m < BENCH_NR_MODES; m++)
			make_cell(runs[l][m], o->repeats, &cells[l][m]);
	report(&c, cells, ret == -EINTR);
	free(runs);
	if (ret == -EINTR) {
		fprintf(stderr, "mthpctl: interrupted by signal %d; settings restored\n", bench_stop);
		return bench_interrupted();
	}
	return 0;
}
