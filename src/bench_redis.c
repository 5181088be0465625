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
#include "mthp_stats.h"
#include "mthpctl.h"
#include "parse.h"

#define REDIS_MAX_REPEATS	64
/* Columns: the three modes, then one static cap per --sizes entry. */
#define REDIS_MAX_COLS		(BENCH_NR_MODES + BENCH_MAX_LIST)

struct redis_run {
	bool done;
	struct bench_redis_row row;
	struct bench_counters delta;
	struct bench_cgstat cs;
	struct bench_folios folios;	/* the cgroup's, at the end of the run */
	struct bench_memstat ms;	/* the cgroup's memory.stat delta */
	__u64 global_pswpout;		/* /proc/vmstat pswpout delta */
	double secs;
	/* the policy's own counters over the run (policy and cap modes) */
	bool have_dec;
	__u64 calls, fallbacks[MTHPCTL_NR_REASON];	/* summed over tva types */
};

struct redis_cell {		/* one mode at one level: medians */
	int n;
	double rps, avg, p50, p95, p99;
	double rps_runs[REDIS_MAX_REPEATS];
	__u64 high_events, psi_some_us, psi_full_us, peak;
	struct bench_counters delta;
	/* spreads over the repeats */
	struct bench_spread s_rps, s_avg, s_p50, s_p99;
	/* per-round ratios: against always, against the level's oracle */
	struct bench_spread r_always, r_oracle;
	struct bench_folios folios;
	struct bench_memstat ms;
	__u64 large_swp_pages, global_pswpout;
	bool swp_agree;
	int n_dec;				/* runs with the policy's counters */
	__u64 calls, fallbacks[MTHPCTL_NR_REASON];	/* medians */
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
	int ncols;
	char cap_names[BENCH_MAX_LIST][24];	/* "cap-16K" */
	char cap_size[BENCH_MAX_LIST][24];	/* "16K" */
};

static bool is_static(int col)
{
	return col != BENCH_POLICY;
}

static const char *col_name(const struct redis_ctx *c, int col)
{
	if (col < BENCH_NR_MODES)
		return bench_mode_name(col, c->o);
	return c->cap_names[col - BENCH_NR_MODES];
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
			char *w[] = { "fixed", "--max-size", c->cap_size[col - BENCH_NR_MODES] };

			err = bench_policy_attach_words(w, 3, cg, c->policy_note,
							sizeof(c->policy_note));
		} else {
			err = bench_policy_attach(o, cg, c->policy_note, sizeof(c->policy_note));
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
	double v[5][REDIS_MAX_REPEATS];
	__u64 u[6][REDIS_MAX_REPEATS], cnt[REDIS_MAX_REPEATS];
	struct bench_folios fol[REDIS_MAX_REPEATS];
	struct bench_memstat ms[REDIS_MAX_REPEATS];
	int i, j, s, k;

	memset(c, 0, sizeof(*c));
	c->swp_agree = true;
	for (i = 0; i < n; i++) {
		struct redis_run *r = &runs[i];
		__u64 large = 0;

		if (!r->done)
			continue;
		for (s = 0; s < r->delta.nr; s++)
			if (r->delta.size_kb[s] > 4)
				large += r->delta.v[s][BENCH_CNT_SWPOUT] * (r->delta.size_kb[s] / 4);
		v[0][c->n] = r->row.rps;
		v[1][c->n] = r->row.avg;
		v[2][c->n] = r->row.p50;
		v[3][c->n] = r->row.p95;
		v[4][c->n] = r->row.p99;
		u[0][c->n] = r->cs.high_events;
		u[1][c->n] = r->cs.psi_some_us;
		u[2][c->n] = r->cs.psi_full_us;
		u[3][c->n] = r->cs.peak;
		u[4][c->n] = large;
		u[5][c->n] = r->global_pswpout;
		fol[c->n] = r->folios;
		ms[c->n] = r->ms;
		c->swp_agree &= r->ms.have[BENCH_MS_PSWPOUT] &&
				bench_swap_attributed(large, r->global_pswpout,
						      r->ms.v[BENCH_MS_PSWPOUT]);
		c->rps_runs[c->n] = r->row.rps;
		c->n++;
	}
	c->rps = bench_median(v[0], c->n);
	c->avg = bench_median(v[1], c->n);
	c->p50 = bench_median(v[2], c->n);
	c->p95 = bench_median(v[3], c->n);
	c->p99 = bench_median(v[4], c->n);
	bench_spread(v[0], c->n, &c->s_rps);
	bench_spread(v[1], c->n, &c->s_avg);
	bench_spread(v[2], c->n, &c->s_p50);
	bench_spread(v[4], c->n, &c->s_p99);
	c->high_events = bench_median_u64(u[0], c->n);
	c->psi_some_us = bench_median_u64(u[1], c->n);
	c->psi_full_us = bench_median_u64(u[2], c->n);
	c->peak = bench_median_u64(u[3], c->n);
	c->large_swp_pages = bench_median_u64(u[4], c->n);
	c->global_pswpout = bench_median_u64(u[5], c->n);
	bench_folios_median(fol, c->n, &c->folios);
	bench_memstat_median(ms, c->n, &c->ms);
	for (k = -1; k < MTHPCTL_NR_REASON; k++) {
		int m = 0;

		for (j = 0; j < n; j++)
			if (runs[j].done && runs[j].have_dec)
				cnt[m++] = k < 0 ? runs[j].calls : runs[j].fallbacks[k];
		if (k < 0)
			c->calls = bench_median_u64(cnt, m);
		else
			c->fallbacks[k] = bench_median_u64(cnt, m);
		c->n_dec = m;
	}
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

/* Per-round ratios of every column at one level against always and against
 * the oracle (the static column with the best median rps). Returns the
 * oracle column or -1. */
static int level_ratios(struct redis_ctx *c, struct redis_run *runs, int repeats,
			struct redis_cell *cells)
{
	double med[REDIS_MAX_COLS], num[REDIS_MAX_REPEATS], a[REDIS_MAX_REPEATS],
	       b[REDIS_MAX_REPEATS];
	int col, rep, best;

	for (col = 0; col < c->ncols; col++)
		med[col] = is_static(col) && cells[col].n ? cells[col].rps : NAN;
	best = bench_argmax(med, c->ncols);
	for (col = 0; col < c->ncols; col++) {
		for (rep = 0; rep < repeats; rep++) {
			struct redis_run *x = &runs[col * repeats + rep];
			struct redis_run *al = &runs[BENCH_ALWAYS * repeats + rep];
			struct redis_run *orc = best >= 0 ? &runs[best * repeats + rep] : NULL;

			num[rep] = x->done ? x->row.rps : NAN;
			a[rep] = al->done ? al->row.rps : NAN;
			b[rep] = orc && orc->done ? orc->row.rps : NAN;
		}
		bench_ratio_spread(num, a, repeats, &cells[col].r_always);
		bench_ratio_spread(num, b, repeats, &cells[col].r_oracle);
	}
	return best;
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

/* latency with its interval: 2 decimals below 100 ms */
static char *fmt_ms(const struct bench_spread *s, char *buf, size_t len)
{
	return bench_spread_fmt(s, s->n && s->max < 100 ? "%.2f" : "%.0f", buf, len);
}

#define CELL(l, col)	(cells[(l) * REDIS_MAX_COLS + (col)])

static void report(struct redis_ctx *c, struct redis_cell *cells, const int *oracle, bool partial)
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
		jw_key(w, "sizes");
		jw_arr_open(w);
		for (i = 0; i < o->nr_sizes; i++)
			jw_u64(w, o->sizes[i]);
		jw_arr_close(w);
		jw_ku64(w, "bootstrap_resamples", BENCH_BOOT_RESAMPLES);
		jw_ku64(w, "bootstrap_seed", BENCH_BOOT_SEED);
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
			double ra = CELL(l, BENCH_ALWAYS).rps;
			double ro = oracle[l] >= 0 ? CELL(l, oracle[l]).rps : NAN;

			jw_obj_open(w);
			if (o->high[l] == BENCH_HIGH_MAX)
				jw_kstr(w, "memory_high", "max");
			else
				jw_ku64(w, "memory_high", o->high[l]);
			jw_kstr(w, "oracle_mode", oracle[l] >= 0 ? col_name(c, oracle[l]) : NULL);
			jw_key(w, "modes");
			jw_arr_open(w);
			for (m = 0; m < c->ncols; m++) {
				struct redis_cell *x = &CELL(l, m);

				if (!x->n)
					continue;
				jw_obj_open(w);
				jw_kstr(w, "mode", col_name(c, m));
				jw_kbool(w, "static", is_static(m));
				if (m >= BENCH_NR_MODES)
					jw_ku64(w, "cap_size", o->sizes[m - BENCH_NR_MODES]);
				jw_ku64(w, "runs", x->n);
				jdbl(w, "rps", x->rps);
				jdbl(w, "avg_ms", x->avg);
				jdbl(w, "p50_ms", x->p50);
				jdbl(w, "p95_ms", x->p95);
				jdbl(w, "p99_ms", x->p99);
				jdbl(w, "rps_vs_always_pct", bench_pct(x->rps, ra));
				jdbl(w, "p99_vs_always_pct", bench_pct(x->p99, CELL(l, BENCH_ALWAYS).p99));
				jdbl(w, "oracle", isnan(ro) || ro <= 0 ? NAN : x->rps / ro);
				jw_key(w, "rps_runs");
				jw_arr_open(w);
				for (i = 0; i < x->n; i++)
					jw_double(w, x->rps_runs[i]);
				jw_arr_close(w);
				jw_key(w, "spread");
				jw_obj_open(w);
				bench_json_spread(w, "rps", &x->s_rps);
				bench_json_spread(w, "avg_ms", &x->s_avg);
				bench_json_spread(w, "p50_ms", &x->s_p50);
				bench_json_spread(w, "p99_ms", &x->s_p99);
				jw_obj_close(w);
				bench_json_ratio(w, "rps_ratio_vs_always", &x->r_always);
				bench_json_ratio(w, "rps_ratio_vs_oracle", &x->r_oracle);
				jw_ku64(w, "memory_events_high", x->high_events);
				jw_ku64(w, "psi_some_us", x->psi_some_us);
				jw_ku64(w, "psi_full_us", x->psi_full_us);
				jw_ku64(w, "memory_peak", x->peak);
				counters_json(w, &x->delta);
				bench_json_folios(w, &x->folios);
				bench_json_memstat(w, &x->ms);
				jw_key(w, "swap_attribution");
				jw_obj_open(w);
				jw_ku64(w, "large_folio_pages", x->large_swp_pages);
				jw_ku64(w, "global_pswpout", x->global_pswpout);
				jw_key(w, "cgroup_pswpout");
				if (x->ms.have[BENCH_MS_PSWPOUT])
					jw_u64(w, x->ms.v[BENCH_MS_PSWPOUT]);
				else
					jw_null(w);
				jw_kbool(w, "agree", x->swp_agree);
				jw_obj_close(w);
				jw_key(w, "policy_decisions");
				if (x->n_dec) {
					int why;

					jw_obj_open(w);
					jw_ku64(w, "calls", x->calls);
					jw_key(w, "fallbacks");
					jw_obj_open(w);
					for (why = 1; why < MTHPCTL_NR_REASON; why++)
						jw_ku64(w, mthpctl_reason_name(why), x->fallbacks[why]);
					jw_obj_close(w);
					jw_obj_close(w);
				} else {
					jw_null(w);
				}
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
	       "%u repeats, median [bootstrap 95%% interval]%s\n",
	       u.release, (unsigned long long)o->keys, (unsigned long long)o->requests,
	       mthpctl_format_size(o->value_size, b1, sizeof(b1)), o->clients, o->pipeline,
	       o->bgsave ? "BGSAVE" : "noBGSAVE", o->repeats, partial ? " (INTERRUPTED: partial)" : "");
	if (c->policy_skip)
		printf("note: policy and cap rows skipped: %s\n", c->policy_note);
	for (l = 0; l < o->nr_high; l++) {
		const char *oname = oracle[l] >= 0 ? col_name(c, oracle[l]) : "-";

		printf("\nmemory.high=%s (oracle: %s)\n", high_str(o->high[l], b1, sizeof(b1)), oname);
		printf("%-14s %-24s %-20s %-20s %-20s\n", "mode", "rps", "avg ms", "p50 ms", "p99 ms");
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);
			char r[48], a[48], p50[48], p99[48];

			if (!x->n)
				continue;
			printf("%-14s %-24s %-20s %-20s %-20s\n", col_name(c, m),
			       bench_spread_fmt(&x->s_rps, "%.0f", r, sizeof(r)),
			       fmt_ms(&x->s_avg, a, sizeof(a)), fmt_ms(&x->s_p50, p50, sizeof(p50)),
			       fmt_ms(&x->s_p99, p99, sizeof(p99)));
		}
		printf("%-14s %-42s %-42s\n", "rps ratio", "vs always (per round)",
		       "vs oracle (per round)");
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);
			char ra[48], ro[48], t1[80], t2[80];

			if (!x->n || (m == BENCH_ALWAYS && (int)m == oracle[l]))
				continue;
			snprintf(t1, sizeof(t1), "%s %s",
				 bench_spread_fmt(&x->r_always, "%.3f", ra, sizeof(ra)),
				 bench_verdict(&x->r_always));
			snprintf(t2, sizeof(t2), "%s %s",
				 bench_spread_fmt(&x->r_oracle, "%.3f", ro, sizeof(ro)),
				 bench_verdict(&x->r_oracle));
			printf("%-14s %-42s %-42s\n", col_name(c, m), m == BENCH_ALWAYS ? "-" : t1,
			       m == oracle[l] ? "-" : t2);
		}
		printf("%-14s %8s %10s %9s %9s  %s\n", "mode", "high ev", "stall ms", "peak",
		       "PMD MiB", "swap-outs: large-folio pages + 4K = vmstat pswpout vs cgroup pswpout");
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);
			char pk[32], cgp[24];

			if (!x->n)
				continue;
			if (x->ms.have[BENCH_MS_PSWPOUT])
				snprintf(cgp, sizeof(cgp), "%llu", (unsigned long long)x->ms.v[BENCH_MS_PSWPOUT]);
			else
				snprintf(cgp, sizeof(cgp), "absent");
			printf("%-14s %8llu %10.1f %9s %9.1f  %llu + %llu = %llu vs %s: %s\n",
			       col_name(c, m), (unsigned long long)x->high_events,
			       x->psi_full_us / 1000.0,
			       mthpctl_format_size(x->peak & ~0xfffffULL, pk, sizeof(pk)),
			       x->folios.bytes[BENCH_NR_ORDERS - 1] / 1048576.0,
			       (unsigned long long)x->large_swp_pages,
			       (unsigned long long)(x->global_pswpout > x->large_swp_pages ?
						    x->global_pswpout - x->large_swp_pages : 0),
			       (unsigned long long)x->global_pswpout, cgp,
			       x->swp_agree ? "agree" : "DIFFER");
		}
		printf("anon folios of redis-server at the end of a run (MiB by size, median):\n");
		for (m = 0; m < c->ncols; m++)
			if (CELL(l, m).n)
				bench_print_folios(col_name(c, m), &CELL(l, m).folios);
		printf("memory.stat deltas of the cgroup (median):\n");
		bench_print_memstat_header();
		for (m = 0; m < c->ncols; m++)
			if (CELL(l, m).n)
				bench_print_memstat(col_name(c, m), &CELL(l, m).ms);
		printf("policy decisions per run (median; the policy's own counters):\n");
		for (m = 0; m < c->ncols; m++) {
			struct redis_cell *x = &CELL(l, m);
			int why;

			if (!x->n_dec)
				continue;
			printf("  %-14s %llu calls, fell back:", col_name(c, m),
			       (unsigned long long)x->calls);
			for (why = 1; why < MTHPCTL_NR_REASON; why++)
				if (x->fallbacks[why])
					printf(" %s %llu", mthpctl_reason_name(why),
					       (unsigned long long)x->fallbacks[why]);
			printf("\n");
		}
		printf("mTHP per run, global counters (size alloc/fallback/swpout):\n");
		for (m = 0; m < c->ncols; m++)
			if (CELL(l, m).n)
				print_counters_text(col_name(c, m), &CELL(l, m).delta);
	}
	printf("\n(intervals: bootstrap 95%% of the median, %d resamples, fixed seed; ratios per "
	       "interleaved round; \"not distinguishable\": the ratio's interval holds 1.0;\n"
	       " oracle: the static setting (always, never, caps) with the best median rps; "
	       "stall ms: memory.pressure full total; high ev: memory.events high)\n",
	       BENCH_BOOT_RESAMPLES);
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
	struct redis_run *runs;
	struct redis_cell *cells;
	int oracle[BENCH_MAX_LIST];
	int l, m, rep, total = 0, k = 0, ret = 0, err, i;
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
		if (col_selected(&c, m))
			total += o->nr_high * o->repeats;

#define RUN(l, col, rep)	(runs[((l) * REDIS_MAX_COLS + (col)) * o->repeats + (rep)])
	/* interleave modes and caps within a repeat: drift hits every mode alike */
	for (l = 0; l < o->nr_high && !ret; l++)
		for (rep = 0; rep < (int)o->repeats && !ret; rep++)
			for (m = 0; m < c.ncols && !ret; m++) {
				struct redis_run *r = &RUN(l, m, rep);

				if (!col_selected(&c, m))
					continue;
				k++;
				if ((m == BENCH_POLICY || m >= BENCH_NR_MODES) && c.policy_skip)
					continue;
				bench_progress(o, "[%d/%d] redis %s memory.high=%s run %d/%u ...", k,
					       total, col_name(&c, m),
					       high_str(o->high[l], hb, sizeof(hb)), rep + 1, o->repeats);
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
	for (l = 0; l < o->nr_high; l++) {
		for (m = 0; m < c.ncols; m++)
			make_cell(&RUN(l, m, 0), o->repeats, &CELL(l, m));
		oracle[l] = level_ratios(&c, &RUN(l, 0, 0), o->repeats, &CELL(l, 0));
	}
#undef RUN
	report(&c, cells, oracle, ret == -EINTR);
	free(runs);
	free(cells);
	if (ret == -EINTR) {
		fprintf(stderr, "mthpctl: interrupted by signal %d; settings restored\n", bench_stop);
		return bench_interrupted();
	}
	return 0;
}
