// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench redis: redis-server in a cgroup with memory.high, THP mode
 * set per run, redis-benchmark SETs from outside; the original mthp_ext
 * method at a configurable size. This file runs it; the medians, ratios
 * and the report are in bench_redis_report.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

/* redis-server must answer PING this soon after its start */
#define REDIS_START_TIMEOUT_NS		(60 * NSEC_PER_SEC)
#define REDIS_PING_INTERVAL_US		100000	/* between PINGs at start */
#define REDIS_REPLY_TIMEOUT_S		5	/* one command's answer (INFO from a loaded redis under TCG) */

/* The runner's state: the results it fills for the report, and its own. */
struct redis_ctx {
	struct redis_results r;
	char tmpdir[64];			/* redis-server's --dir */
	char port[16];
	char cap_size[BENCH_MAX_LIST][24];	/* "16K" */
};

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

int bench_redis_preflight(const struct bench_opts *o)
{
	int err;

	err = bench_need_program(o->redis_server,
				 "redis-server (Debian: apt install redis-server)", "--redis-server");
	if (!err)
		err = bench_need_program(o->redis_benchmark, "redis-tools", "--redis-benchmark");
	if (err)
		return err;
	if (port_busy(o->port))
		return mthpctl_error(MTHPCTL_EXIT_STATE,
				     "port %u on 127.0.0.1 is busy: stop what listens there or give --port",
				     o->port);
	return 0;
}

int bench_redis_command(unsigned int port, const char *cmd, char *buf, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { REDIS_REPLY_TIMEOUT_S, 0 };
	size_t got = 0;
	int fd, err = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || dprintf(fd, "%s\r\n", cmd) < 0)
		err = -errno;
	buf[0] = '\0';
	while (!err && got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		const char *eol;

		if (n <= 0) {
			err = !n ? -EIO : errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		got += n;
		buf[got] = '\0';
		eol = strstr(buf, "\r\n");
		/* a status line is whole at its end, a bulk string
		 * ("$LEN\r\n" LEN bytes "\r\n") when its LEN bytes came */
		if (eol && (buf[0] != '$' ||
			    got >= (size_t)(eol - buf) + 4 + strtoull(buf + 1, NULL, 10)))
			break;
	}
	close(fd);
	return err ? err : (int)got;
}

static bool ping(unsigned int port)
{
	char buf[64];

	return bench_redis_command(port, "PING", buf, sizeof(buf)) > 0 &&
	       !strncmp(buf, "+PONG", 5);
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
	return col >= BENCH_NR_MODES || (c->r.o->modes & (1u << col));
}

/* The mode of a column: a cap's (after the modes) is a policy's. */
static enum bench_mode col_mode(int col)
{
	return col < BENCH_NR_MODES ? (enum bench_mode)col : BENCH_POLICY;
}

/* What one run started and opened, released by run_close(). */
struct redis_one {
	char cg[600];			/* CGROUP/redis */
	char logp[128], errp[128];	/* redis-server's log, redis-benchmark's stderr */
	int lfd, efd;
	int out_fd;			/* redis-benchmark's stdout */
	pid_t srv, cli;
};

/* The THP mode, a fresh cgroup with memory.high, the policy or cap. 0, an
 * exit code (printed), or 0 with *skip when the policy was refused (noted
 * in c->r.policy_note: its rows are skipped, the run is no error). */
static int run_setup(struct redis_ctx *c, int col, __u64 high, struct redis_one *x, bool *skip)
{
	enum bench_mode mode = col_mode(col);
	char hbuf[32];
	int err;

	err = bench_mode_set_thp(mode, c->r.o);
	if (err)
		return err;
	bench_settle_memory();
	err = bench_cg_create("redis", x->cg, sizeof(x->cg));
	if (err) {
		x->cg[0] = '\0';	/* not ours to remove */
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create a cgroup in %s: %s",
				     c->r.o->cgroup, strerror(-err));
	}
	if (high == BENCH_HIGH_MAX)
		strcpy(hbuf, "max");
	else
		snprintf(hbuf, sizeof(hbuf), "%llu", (unsigned long long)high);
	err = bench_cg_write(x->cg, "memory.high", hbuf);
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot set %s/memory.high: %s", x->cg,
				     strerror(-err));
	if (mode == BENCH_SIMPLE) {
		if (bench_mode_attach(mode, c->r.o, x->cg, c->r.simple_note, sizeof(c->r.simple_note))) {
			c->r.simple_skip = true;
			*skip = true;
			fprintf(stderr, "mthpctl: note: simple rows skipped: %s\n", c->r.simple_note);
		}
		return 0;
	}
	if (mode != BENCH_POLICY)
		return 0;
	if (col >= BENCH_NR_MODES) {
		const struct mthpctl_policy_spec cap = {
			.policy = "fixed", .max_size = c->cap_size[col - BENCH_NR_MODES],
		};

		err = bench_policy_attach(&cap, 0, x->cg, c->r.policy_note, sizeof(c->r.policy_note));
	} else {
		err = bench_policy_attach_opts(c->r.o, x->cg, c->r.policy_note, sizeof(c->r.policy_note));
	}
	if (err) {
		c->r.policy_skip = true;
		*skip = true;
		fprintf(stderr, "mthpctl: note: policy and cap rows skipped: %s\n", c->r.policy_note);
	}
	return 0;
}

/* redis-server in the run's cgroup, answering PING; shipped: with redis'
 * own default, disable-thp yes (it disables THP for itself with
 * PR_SET_THP_DISABLE). 0, an exit code (printed) or -EINTR. */
static int server_start(struct redis_ctx *c, struct redis_one *x, bool shipped)
{
	const struct bench_opts *o = c->r.o;
	/* "--save" "": no save points, no BGSAVE; --bgsave ends the list
	 * before them, keeping redis' default save points */
	char *argv[] = {
		(char *)o->redis_server, "--port", c->port, "--bind", "127.0.0.1",
		"--disable-thp", shipped ? "yes" : "no", "--daemonize", "no", "--dir", c->tmpdir,
		"--appendonly", "no", "--logfile", "", o->bgsave ? NULL : "--save", "", NULL,
	};
	int status;
	__u64 start;

	snprintf(x->logp, sizeof(x->logp), "%s/redis-server.log", c->tmpdir);
	snprintf(x->errp, sizeof(x->errp), "%s/redis-benchmark.err", c->tmpdir);
	x->lfd = open(x->logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	x->efd = open(x->errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (x->lfd < 0 || x->efd < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot create files in %s: %s",
				     c->tmpdir, strerror(errno));
	x->srv = bench_spawn(x->cg, argv, x->lfd, x->lfd, NULL, NULL);
	if (x->srv < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot start redis-server: %s",
				     strerror(-x->srv));
	start = bench_now_ns();
	while (!ping(o->port)) {
		if (bench_stop)
			return -EINTR;
		if (bench_wait(x->srv, 1, &status) == 0) {
			x->srv = -1;
			tail_file(x->logp);
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "redis-server exited at start (log above)");
		}
		if (bench_now_ns() - start > REDIS_START_TIMEOUT_NS) {
			tail_file(x->logp);
			return mthpctl_error(MTHPCTL_EXIT_FAIL,
					     "redis-server does not answer PING on port %s", c->port);
		}
		usleep(REDIS_PING_INTERVAL_US);
	}
	return 0;
}

/* redis-benchmark from outside the cgroup, its --csv output into out, *secs
 * its wall time. 0, an exit code (printed) or -EINTR. */
static int client_run(struct redis_ctx *c, struct redis_one *x, char *out, size_t len,
		      double *secs)
{
	const struct bench_opts *o = c->r.o;
	char num[5][24];
	int p[2], status, err;
	__u64 t0;

	snprintf(num[0], sizeof(num[0]), "%llu", (unsigned long long)o->keys);
	snprintf(num[1], sizeof(num[1]), "%llu", (unsigned long long)o->requests);
	snprintf(num[2], sizeof(num[2]), "%llu", (unsigned long long)o->value_size);
	snprintf(num[3], sizeof(num[3]), "%u", o->clients);
	snprintf(num[4], sizeof(num[4]), "%u", o->pipeline);
	if (pipe2(p, O_CLOEXEC))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "pipe: %s", strerror(errno));
	x->out_fd = p[0];
	t0 = bench_now_ns();
	{
		char *argv[] = {
			(char *)o->redis_benchmark, "--csv", "-h", "127.0.0.1", "-p", c->port,
			"-r", num[0], "-n", num[1], "-d", num[2], "-c", num[3], "-P", num[4],
			"-t", "set", NULL,
		};
		x->cli = bench_spawn(NULL, argv, p[1], x->efd, NULL, NULL);
	}
	close(p[1]);
	if (x->cli < 0)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot start redis-benchmark: %s",
				     strerror(-x->cli));
	err = bench_read_output(x->out_fd, out, len, false, o->timeout_ns);
	if (err == -EINTR)
		return -EINTR;
	if (err)
		return mthpctl_error(MTHPCTL_EXIT_FAIL,
				     "redis-benchmark did not finish in the --timeout: give a longer "
				     "--timeout or fewer --requests");
	err = bench_wait(x->cli, BENCH_CHILD_EXIT_TIMEOUT_NS, &status);
	if (err == -EINTR)
		return -EINTR;
	if (!err)
		x->cli = -1;
	*secs = (bench_now_ns() - t0) / 1e9;
	return 0;
}

/* --settle: redis idle, holding its data, for o->settle_ns; then its
 * folios again (khugepaged may collapse what was faulted in small folios,
 * auto's start-up memory). */
static void settle(const struct bench_opts *o, struct redis_one *x, struct redis_run *r)
{
	int status, err = bench_wait(x->srv, o->settle_ns, &status);

	if (err == -ETIMEDOUT) {
		r->settled = !bench_cg_folios(x->cg, &r->settled_folios);
	} else if (!err) {
		x->srv = -1;
		fprintf(stderr, "mthpctl: warning: redis-server exited during --settle\n");
	}
}

static void run_close(struct redis_one *x)
{
	if (x->cli > 0)
		bench_kill(x->cli);
	if (x->srv > 0)
		bench_kill(x->srv);
	if (x->out_fd >= 0)
		close(x->out_fd);
	if (x->lfd >= 0)
		close(x->lfd);
	if (x->efd >= 0)
		close(x->efd);
	bench_cg_remove(x->cg);
}

/* One run: set up, start redis-server (shipped: as shipped), run
 * redis-benchmark, measure the cgroup while redis still holds its data,
 * settle. Returns 0, an exit code (printed) or -EINTR. */
static int redis_one(struct redis_ctx *c, int col, __u64 high, bool shipped, struct redis_run *r)
{
	struct redis_one x = { .lfd = -1, .efd = -1, .out_fd = -1, .srv = -1, .cli = -1 };
	struct bench_memstat ms0, ms1, vm0, vm1, vmd;
	struct bench_counters before, after;
	const struct bench_opts *o = c->r.o;
	bool skip = false;
	char out[8192];
	int ret, err;

	ret = run_setup(c, col, high, &x, &skip);
	if (ret || skip)
		goto out;
	bench_counters_read(&before);
	bench_memstat_read(x.cg, &ms0);
	bench_memstat_read(NULL, &vm0);
	ret = server_start(c, &x, shipped);
	if (ret)
		goto out;
	ret = client_run(c, &x, out, sizeof(out), &r->secs);
	if (ret)
		goto out;

	bench_counters_read(&after);
	bench_counters_delta(&before, &after, &r->delta);
	bench_cgstat_read(x.cg, &r->cs);
	bench_memstat_read(x.cg, &ms1);
	bench_memstat_read(NULL, &vm1);
	bench_memstat_delta(&ms0, &ms1, &r->ms);
	bench_memstat_delta(&vm0, &vm1, &vmd);
	r->global_pswpout = vmd.v[BENCH_MS_PSWPOUT];
	if (!bench_mode_static(col_mode(col)))
		bench_policy_decisions(x.cg, &r->dec);
	/* the folios of redis-server while it still holds the data */
	err = bench_cg_folios(x.cg, &r->folios);
	if (err && !o->quiet)
		fprintf(stderr, "mthpctl: warning: no folio sizes: /proc/kpageflags: %s\n",
			strerror(-err));
	if (bench_parse_redis_csv(out, "SET", &r->row)) {
		tail_file(x.errp);
		tail_file(x.logp);
		ret = mthpctl_error(MTHPCTL_EXIT_FAIL,
				    "no SET result from redis-benchmark (output: \"%.200s\")", out);
		goto out;
	}
	r->done = true;
	if (o->settle_ns && !shipped && high == BENCH_HIGH_MAX &&
	    (col == BENCH_ALWAYS || col == BENCH_POLICY))
		settle(o, &x, r);
out:
	run_close(&x);
	return bench_stop ? -EINTR : ret;
}

/* The loop over the rounds of one level. */
struct redis_loop {
	struct redis_ctx *c;
	struct redis_run *runs;
	int l;				/* the level */
	struct redis_cell cells[REDIS_MAX_COLS];	/* after a round */
};

/* One run of column m at level lp->l in round rep. 0, an exit code or
 * -EINTR. */
static int redis_col(void *ctx, int m, int rep, const char *tag)
{
	struct redis_loop *lp = ctx;
	struct redis_ctx *c = lp->c;
	const struct bench_opts *o = c->r.o;
	struct redis_run *r = &REDIS_RUN(lp->runs, lp->l, m, rep);
	int err;

	if (((m == BENCH_POLICY || m >= BENCH_NR_MODES) && c->r.policy_skip) ||
	    (m == BENCH_SIMPLE && c->r.simple_skip))
		return 0;
	bench_progress(o, "%s redis %s memory.high=%s round %d ...", tag, redis_col_name(&c->r, m),
		       c->r.level_names[lp->l], rep + 1);
	err = redis_one(c, m, o->high[lp->l], false, r);
	if (!err && r->done)
		bench_progress(o, "%s   %.0f rps, p99 %.2f ms, %.1f s, PMD %.1f MiB", tag,
			       r->row.rps, r->row.p99, r->secs,
			       r->folios.bytes[BENCH_NR_ORDERS - 1] / 1048576.0);
	if (!err && r->done && o->shipped) {
		/* the same, with redis as shipped: its rps and folios only */
		struct redis_run s = {};

		err = redis_one(c, m, o->high[lp->l], true, &s);
		r->shipped_done = !err && s.done;
		r->shipped_rps = s.row.rps;
		r->shipped_folios = s.folios;
		if (r->shipped_done)
			bench_progress(o, "%s   as shipped (disable-thp yes): %.0f rps, PMD %.1f MiB",
				       tag, s.row.rps, s.folios.bytes[BENCH_NR_ORDERS - 1] / 1048576.0);
	}
	return err;
}

/* after a round: every column's rps against always, each policy's against
 * each static column */
static void redis_ratios(void *ctx, int rounds, struct bench_rounds_widest *w)
{
	struct redis_loop *lp = ctx;
	char name[96];
	int m, s;

	redis_level_cells(&lp->c->r, lp->runs, lp->l, rounds, lp->cells);
	for (m = 0; m < lp->c->r.ncols; m++) {
		if (m != BENCH_ALWAYS) {
			snprintf(name, sizeof(name), "%s vs always", redis_col_name(&lp->c->r, m));
			bench_rounds_widest_note(w, name, &lp->cells[m].r_always);
		}
		for (s = 0; s < lp->c->r.ncols; s++) {
			if (!lp->cells[m].r_static[s].n)
				continue;
			snprintf(name, sizeof(name), "%s vs %s", redis_col_name(&lp->c->r, m),
				 redis_col_name(&lp->c->r, s));
			bench_rounds_widest_note(w, name, &lp->cells[m].r_static[s]);
		}
	}
}

int bench_redis(struct bench_opts *o)
{
	static struct redis_loop lp;
	struct redis_ctx c = { .r.o = o };
	struct redis_run *runs;
	struct redis_cell *cells;
	int l, m, ret = 0, i, sel[REDIS_MAX_COLS], nsel = 0;
	const char *tmp = getenv("TMPDIR");

	ret = bench_redis_preflight(o);
	if (ret)
		return ret;
	snprintf(c.port, sizeof(c.port), "%u", o->port);
	c.r.ncols = BENCH_NR_MODES + o->nr_sizes;
	for (i = 0; i < o->nr_sizes; i++) {
		mthpctl_format_size(o->sizes[i], c.cap_size[i], sizeof(c.cap_size[i]));
		snprintf(c.r.cap_names[i], sizeof(c.r.cap_names[i]), "cap-%s", c.cap_size[i]);
	}
	runs = calloc((size_t)o->nr_high * REDIS_MAX_COLS * REDIS_MAX_REPEATS, sizeof(*runs));
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
	lp = (struct redis_loop){ .c = &c, .runs = runs };
	for (m = 0; m < c.r.ncols; m++)
		if (col_selected(&c, m))
			sel[nsel++] = m;
	/* --max-time is the whole benchmark's: each level gets its share */
	for (l = 0; l < o->nr_high; l++) {
		redis_high_str(o->high[l], c.r.level_names[l], sizeof(c.r.level_names[l]));
		bench_rounds_init(&c.r.rounds[l], o, REDIS_MAX_REPEATS, c.r.level_names[l]);
		c.r.rounds[l].rule.max_ns /= o->nr_high;
	}
	for (l = 0; l < o->nr_high && !ret; l++) {
		lp.l = l;
		ret = bench_rounds_run(o, &c.r.rounds[l], sel, nsel, redis_col, redis_ratios, &lp);
	}

	bench_restore();
	bench_rm_tree(c.tmpdir);	/* logs, dump.rdb, temp-*.rdb */
	if (ret > 0) {
		free(runs);
		free(cells);
		return ret;
	}
	ret = redis_report(&c.r, runs, cells, ret == -EINTR);
	free(runs);
	free(cells);
	return ret;
}
