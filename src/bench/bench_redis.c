// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench redis: redis-server in a cgroup with memory.high, THP mode
 * set per run, redis-benchmark SETs from outside; the original mthp_ext
 * method at a configurable size. This file runs it; the medians, ratios
 * and the report are in bench_redis_report.c.
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
#include <sys/wait.h>

#include "bench_redis.h"
#include "mthpctl.h"
#include "parse.h"

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

static bool col_selected(const struct redis_ctx *c, int col)
{
	return col >= BENCH_NR_MODES || (c->o->modes & (1u << col));
}

/* One run; returns 0, an exit code (printed) or -EINTR. */
static int redis_one(struct redis_ctx *c, int col, __u64 high, struct redis_run *r)
{
	enum bench_mode mode = col < BENCH_NR_MODES ? (enum bench_mode)col : BENCH_POLICY;
	struct bench_memstat ms0, ms1, vm0, vm1, vmd;
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
		if (col >= BENCH_NR_MODES) {
			const struct mthpctl_policy_spec cap = {
				.policy = "fixed", .max_size = c->cap_size[col - BENCH_NR_MODES],
			};

			err = bench_policy_attach(&cap, 0, cg, c->policy_note, sizeof(c->policy_note));
		} else {
			err = bench_policy_attach_opts(o, cg, c->policy_note, sizeof(c->policy_note));
		}
		if (err) {
			c->policy_skip = true;
			fprintf(stderr, "mthpctl: note: policy and cap rows skipped: %s\n",
				c->policy_note);
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
	bench_memstat_read(cg, &ms0);
	bench_memstat_read(NULL, &vm0);
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
	bench_memstat_read(cg, &ms1);
	bench_memstat_read(NULL, &vm1);
	bench_memstat_delta(&ms0, &ms1, &r->ms);
	bench_memstat_delta(&vm0, &vm1, &vmd);
	r->global_pswpout = vmd.v[BENCH_MS_PSWPOUT];
	if (mode == BENCH_POLICY) {
		struct mthpctl_counters pc;
		int t, why;

		/* a fresh policy per run: its counters are this run's */
		if (!bench_policy_counters(cg, &pc)) {
			r->have_dec = true;
			for (t = 0; t < MTHPCTL_NR_TVA; t++) {
				r->calls += pc.calls[t];
				for (why = 0; why < MTHPCTL_NR_REASON; why++)
					r->fallbacks[why] += pc.fallbacks[why][t];
			}
		}
	}
	/* the folios of redis-server while it still holds the data */
	err = bench_cg_folios(cg, &r->folios);
	if (err && !o->quiet)
		fprintf(stderr, "mthpctl: warning: no folio sizes: /proc/kpageflags: %s\n",
			strerror(-err));
	err = bench_parse_redis_csv(out, "SET", &r->row);
	if (err) {
		tail_file(errp);
		tail_file(logp);
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL,
				    "no SET result from redis-benchmark (output: \"%.200s\")", out);
		goto out;
	}
	r->done = true;
	if (o->settle_ns && high == BENCH_HIGH_MAX &&
	    (col == BENCH_ALWAYS || col == BENCH_POLICY)) {
		/* redis idle, holding its data: khugepaged may collapse what
		 * was faulted in small folios (auto: the start-up memory) */
		err = bench_wait(srv, o->settle_ns, &status);
		if (err == -ETIMEDOUT) {
			r->settled = !bench_cg_folios(cg, &r->settled_folios);
		} else if (!err) {
			srv = -1;
			fprintf(stderr, "mthpctl: warning: redis-server exited during --settle\n");
		}
	}
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
	struct redis_run *runs;
	struct redis_cell *cells;
	int l, m, rep, total = 0, k = 0, ret = 0, err, i;
	int sel[REDIS_MAX_COLS], nsel = 0;	/* the columns to run */
	char hb[32];
	const char *tmp = getenv("TMPDIR");

	if (o->repeats > REDIS_MAX_REPEATS)
		return mthpctl_error(MTHPCTL_EXIT_USAGE, "redis: --repeats is at most %d",
				     REDIS_MAX_REPEATS);
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
	c.ncols = BENCH_NR_MODES + o->nr_sizes;
	for (i = 0; i < o->nr_sizes; i++) {
		mthpctl_format_size(o->sizes[i], c.cap_size[i], sizeof(c.cap_size[i]));
		snprintf(c.cap_names[i], sizeof(c.cap_names[i]), "cap-%s", c.cap_size[i]);
	}
	runs = calloc((size_t)o->nr_high * REDIS_MAX_COLS * o->repeats, sizeof(*runs));
	cells = calloc((size_t)o->nr_high * REDIS_MAX_COLS, sizeof(*cells));
	if (!runs || !cells) {
		free(runs);
		free(cells);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	}
	ret = bench_setup(o);
	if (ret) {
		free(runs);
		free(cells);
		return ret;
	}
	snprintf(c.tmpdir, sizeof(c.tmpdir), "%s/mthpctl-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(c.tmpdir)) {
		bench_restore();
		free(runs);
		free(cells);
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a directory in /tmp: %s",
				     strerror(errno));
	}
	for (m = 0; m < c.ncols; m++)
		if (col_selected(&c, m)) {
			total += o->nr_high * o->repeats;
			sel[nsel++] = m;
		}

#define RUN(l, col, rep)	REDIS_RUN(runs, o->repeats, l, col, rep)
	for (l = 0; l < o->nr_high && !ret; l++)
		for (rep = 0; rep < (int)o->repeats && !ret; rep++)
			for (i = 0; i < nsel && !ret; i++) {
				struct redis_run *r;

				m = bench_round_col(sel, nsel, rep, i);
				r = &RUN(l, m, rep);
				k++;
				if ((m == BENCH_POLICY || m >= BENCH_NR_MODES) && c.policy_skip)
					continue;
				bench_progress(o, "[%d/%d] redis %s memory.high=%s run %d/%u ...", k,
					       total, redis_col_name(&c, m),
					       redis_high_str(o->high[l], hb, sizeof(hb)), rep + 1, o->repeats);
				err = redis_one(&c, m, o->high[l], r);
				if (err) {
					ret = err;
					break;
				}
				if (r->done)
					bench_progress(o, "[%d/%d]   %.0f rps, p99 %.2f ms, %.1f s, "
						       "PMD %.1f MiB", k, total, r->row.rps, r->row.p99,
						       r->secs,
						       r->folios.bytes[BENCH_NR_ORDERS - 1] / 1048576.0);
			}

	bench_restore();
	rm_tmpdir(c.tmpdir);
	if (ret > 0) {
		free(runs);
		free(cells);
		return ret;
	}
	ret = redis_report(&c, runs, cells, ret == -EINTR);
	free(runs);
	free(cells);
	return ret;
}
