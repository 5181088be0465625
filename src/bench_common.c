// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: what every benchmark shares. Everything that changes the
 * system is recorded here (settings with their old values, cgroups created,
 * policies attached, children started, bpffs mounted) so that
 * bench_restore() can undo it at the end, on error and after SIGINT/SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "bench_common.h"
#include "cgroup.h"
#include "mthpctl.h"
#include "mthp_stats.h"
#include "pin.h"

volatile sig_atomic_t bench_stop;

const char *const bench_cnt_names[BENCH_NR_CNT] = {
	"anon_fault_alloc", "anon_fault_fallback", "swpout",
};

#define MAX_KNOBS	40
#define MAX_CGROUPS	16
#define MAX_PIDS	256

static struct {
	bool active;
	char root[512];			/* the bench cgroup */
	bool root_created;
	struct { char path[512]; char value[32]; } knobs[MAX_KNOBS];
	int nr_knobs;
	char cgroups[MAX_CGROUPS][512];	/* created below root, in order */
	bool attached[MAX_CGROUPS];
	int nr_cgroups;
	pid_t pids[MAX_PIDS];
	int nr_pids;
	bool mounted_bpffs;
	struct sigaction old_int, old_term, old_hup, old_pipe;
} st;

static void on_signal(int sig)
{
	bench_stop = sig;
}

int bench_interrupted(void)
{
	return 128 + (bench_stop ? bench_stop : SIGINT);
}

__u64 bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void bench_progress(const struct bench_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->quiet)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static FILE *json_file;

struct jw *bench_json_begin(const struct bench_opts *o)
{
	if (g.json) {
		mthpctl_json_begin();
		return &g.jw;
	}
	if (!o->json_out)
		return NULL;
	json_file = fopen(o->json_out, "w");
	if (!json_file) {
		fprintf(stderr, "mthpctl: warning: cannot write %s: %s\n", o->json_out, strerror(errno));
		return NULL;
	}
	jw_init(&g.jw, json_file, true);
	return &g.jw;
}

void bench_json_end(const struct bench_opts *o, struct jw *w)
{
	if (!w)
		return;
	fflush(w->f);
	if (json_file) {
		fclose(json_file);
		json_file = NULL;
	}
}

const char *bench_mode_name(enum bench_mode m, const struct bench_opts *o)
{
	static char buf[64];

	switch (m) {
	case BENCH_ALWAYS: return "always";
	case BENCH_NEVER: return "never";
	default:
		snprintf(buf, sizeof(buf), "always+%s",
			 o->nr_policy_words ? o->policy_words[0] : "auto");
		return buf;
	}
}

static int write_file(const char *path, const char *value)
{
	size_t len = strlen(value);
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
	return ret;
}

int bench_cg_write(const char *cg, const char *file, const char *value)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_file(path, value);
}

/* --- settings ------------------------------------------------------- */

static int save_knob(const char *path, bool bracketed)
{
	char buf[256];
	int i = st.nr_knobs;

	if (i == MAX_KNOBS)
		return -E2BIG;
	if (mthpctl_read_file(path, buf, sizeof(buf)) <= 0)
		return -errno ? -errno : -EIO;
	if (bracketed) {
		if (mthpctl_parse_bracketed(buf, st.knobs[i].value, sizeof(st.knobs[i].value)))
			return -EINVAL;
	} else {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(st.knobs[i].value, sizeof(st.knobs[i].value), "%s", buf);
	}
	snprintf(st.knobs[i].path, sizeof(st.knobs[i].path), "%s", path);
	st.nr_knobs++;
	return 0;
}

static int save_settings(void)
{
	struct mthpctl_hp_size *hp;
	char path[512];
	int n, i, err;

	err = save_knob(MTHPCTL_THP_DIR "/enabled", true);
	if (err)
		return err;
	n = mthpctl_scan_hugepages(MTHPCTL_THP_DIR, &hp);
	if (n < 0)
		return n;
	for (i = 0; i < n && !err; i++) {
		if (!hp[i].has_enabled)
			continue;	/* e.g. hugepages-8kB on some configs */
		snprintf(path, sizeof(path), MTHPCTL_THP_DIR "/hugepages-%llukB/enabled",
			 (unsigned long long)hp[i].size_kb);
		err = save_knob(path, true);
	}
	free(hp);
	if (!err)
		err = save_knob("/proc/sys/vm/overcommit_memory", false);
	return err;
}

int bench_set_knob(const char *path, const char *value)
{
	int err = save_knob(path, false);

	return err ? err : write_file(path, value);
}

static void restore_settings(void)
{
	int i, err;

	for (i = st.nr_knobs - 1; i >= 0; i--) {
		err = write_file(st.knobs[i].path, st.knobs[i].value);
		if (err)
			fprintf(stderr, "mthpctl: warning: could not restore %s to %s: %s\n",
				st.knobs[i].path, st.knobs[i].value, strerror(-err));
	}
	st.nr_knobs = 0;
}

int bench_set_thp(const char *value)
{
	int i, err;

	for (i = 0; i < st.nr_knobs; i++) {
		if (strncmp(st.knobs[i].path, MTHPCTL_THP_DIR "/", sizeof(MTHPCTL_THP_DIR)))
			continue;
		err = write_file(st.knobs[i].path, value);
		if (err)
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot write %s to %s: %s",
					     value, st.knobs[i].path, strerror(-err));
	}
	return 0;
}

void bench_drop_caches(void)
{
	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
}

/* --- counters and cgroup figures ------------------------------------ */

void bench_counters_read(struct bench_counters *c)
{
	struct mthpctl_hp_size *hp;
	size_t j;
	int n, i, k;

	memset(c, 0, sizeof(*c));
	n = mthpctl_scan_hugepages(MTHPCTL_THP_DIR, &hp);
	for (i = 0; i < n && c->nr < BENCH_MAX_SIZES; i++) {
		c->size_kb[c->nr] = hp[i].size_kb;
		for (k = 0; k < BENCH_NR_CNT; k++)
			for (j = 0; j < hp[i].nr_stats; j++)
				if (!strcmp(hp[i].stats[j].name, bench_cnt_names[k]))
					c->v[c->nr][k] = hp[i].stats[j].value;
		c->nr++;
	}
	if (n > 0)
		free(hp);
}

void bench_counters_delta(const struct bench_counters *a, const struct bench_counters *b,
			  struct bench_counters *d)
{
	int i, j, k;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < b->nr; i++) {
		d->size_kb[i] = b->size_kb[i];
		for (j = 0; j < a->nr; j++)
			if (a->size_kb[j] == b->size_kb[i])
				break;
		for (k = 0; k < BENCH_NR_CNT; k++)
			d->v[i][k] = b->v[i][k] - (j < a->nr ? a->v[j][k] : 0);
	}
	d->nr = b->nr;
}

static __u64 read_u64_file(const char *cg, const char *file)
{
	char path[600], buf[64];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (mthpctl_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

void bench_cgstat_read(const char *cg, struct bench_cgstat *s)
{
	char path[600], buf[1024];
	struct mthpctl_psi psi;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/memory.events", cg);
	if (mthpctl_read_file(path, buf, sizeof(buf)) > 0) {
		mthpctl_stat_get(buf, "high", &s->high_events);
		mthpctl_stat_get(buf, "max", &s->max_events);
		mthpctl_stat_get(buf, "oom", &s->oom_events);
	}
	snprintf(path, sizeof(path), "%s/memory.pressure", cg);
	if (mthpctl_read_file(path, buf, sizeof(buf)) > 0 && !mthpctl_parse_psi(buf, &psi)) {
		s->psi_some_us = psi.some.total_us;
		s->psi_full_us = psi.full.total_us;
	}
	s->peak = read_u64_file(cg, "memory.peak");
	s->current = read_u64_file(cg, "memory.current");
}

void bench_memstat_read(const char *cg, struct bench_memstat *m)
{
	char path[600], *buf;

	buf = malloc(65536);
	if (!buf) {
		bench_memstat_parse(NULL, m);
		return;
	}
	if (cg)
		snprintf(path, sizeof(path), "%s/memory.stat", cg);
	else
		snprintf(path, sizeof(path), "/proc/vmstat");
	bench_memstat_parse(mthpctl_read_file(path, buf, 65536) > 0 ? buf : NULL, m);
	free(buf);
}

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define PM_CHUNK	512

struct kpf_cache {
	int fd;
	__u64 base;		/* first pfn in v, or ~0 */
	int nr;
	__u64 v[PM_CHUNK];
};

/*
 * The flags of pfn. kpageflags costs per entry read, so a miss reads one
 * entry, and after a compound head the rest up to the next 2M-aligned PFN
 * (a naturally aligned folio of up to order 9 ends there): its tails then
 * come from the cache.
 */
static __u64 kpf_get(struct kpf_cache *c, __u64 pfn)
{
	__u64 v = 0;
	ssize_t r;
	int n;

	if (c->base != ~0ULL && pfn >= c->base && pfn < c->base + c->nr)
		return c->v[pfn - c->base];
	c->base = ~0ULL;
	if (pread(c->fd, &v, 8, pfn * 8) != 8)
		return 0;
	if (!(v & (1ULL << BENCH_KPF_COMPOUND_HEAD)))
		return v;
	n = PM_CHUNK - (pfn & (PM_CHUNK - 1));
	r = pread(c->fd, c->v, n * 8, pfn * 8);
	if (r >= 8) {
		c->base = pfn;
		c->nr = r / 8;
	}
	return v;
}

/* One process: every mapping of /proc/PID/maps through its pagemap. */
static void pid_folios(int pid, struct kpf_cache *kc, struct bench_folios *f)
{
	char path[64], line[512];
	__u64 ent[PM_CHUNK];
	FILE *maps;
	int pm;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	if (!maps || pm < 0)
		goto out;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, va;

		if (sscanf(line, "%llx-%llx", &start, &end) != 2 || strstr(line, "[vsyscall]"))
			continue;
		for (va = start; va < end;) {
			size_t want = (end - va) / 4096, i;
			ssize_t r;

			if (want > PM_CHUNK)
				want = PM_CHUNK;
			r = pread(pm, ent, want * 8, va / 4096 * 8);
			if (r <= 0)
				break;
			for (i = 0; i < (size_t)r / 8; i++) {
				bool present = ent[i] & PM_PRESENT;
				__u64 pfn = ent[i] & PM_PFN_MASK;

				bench_folios_feed(f, present, pfn, present ? kpf_get(kc, pfn) : 0);
			}
			va += (r / 8) * 4096;
		}
		bench_folios_flush(f);
	}
out:
	if (maps)
		fclose(maps);
	if (pm >= 0)
		close(pm);
}

int bench_cg_folios(const char *cg, struct bench_folios *f)
{
	static struct kpf_cache kc;
	char path[600], buf[8192], *p, *save = NULL;

	bench_folios_init(f);
	kc.fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (kc.fd < 0)
		return -errno;
	kc.base = ~0ULL;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (mthpctl_read_file(path, buf, sizeof(buf)) > 0)
		for (p = strtok_r(buf, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
			pid_folios(atoi(p), &kc, f);
	close(kc.fd);
	return 0;
}

/* --- children ------------------------------------------------------- */

static void track(pid_t pid)
{
	if (st.nr_pids < MAX_PIDS)
		st.pids[st.nr_pids++] = pid;
}

static void untrack(pid_t pid)
{
	int i;

	for (i = 0; i < st.nr_pids; i++)
		if (st.pids[i] == pid) {
			st.pids[i] = st.pids[--st.nr_pids];
			return;
		}
}

pid_t bench_spawn(const char *cg, char *const argv[], int out_fd, int err_fd,
		  int (*fn)(void *arg), void *arg)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char path[600];
	pid_t pid;
	int fd;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		setpgid(pid, pid);
		track(pid);
		return pid;
	}
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGHUP, &dfl, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	setpgid(0, 0);
	if (cg) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if (write_file(path, "0")) {
			fprintf(stderr, "mthpctl: cannot move the child into %s: %s\n",
				cg, strerror(errno));
			_exit(126);
		}
	}
	if (out_fd == -2 || err_fd == -2)
		fd = open("/dev/null", O_WRONLY);
	if (out_fd != -1)
		dup2(out_fd == -2 ? fd : out_fd, 1);
	if (err_fd != -1)
		dup2(err_fd == -2 ? fd : err_fd, 2);
	if (!argv)
		_exit(fn(arg));
	execvp(argv[0], argv);
	fprintf(stderr, "mthpctl: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int bench_wait(pid_t pid, __u64 timeout_ns, int *status)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	__u64 start = bench_now_ns();
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid) {
			untrack(pid);
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			untrack(pid);
			return -errno;
		}
		if (bench_stop)
			return -EINTR;
		if (timeout_ns && bench_now_ns() - start > timeout_ns)
			return -ETIMEDOUT;
		nanosleep(&tick, NULL);
	}
}

void bench_kill(pid_t pid)
{
	int status;

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	untrack(pid);
}

/* Run this mthpctl with args; output (stdout+stderr) into out. Exit status
 * or -errno. */
static int run_self(char *const args[], char *out, size_t len)
{
	char *argv[32];
	int p[2], status, i, n = 0;
	size_t off = 0;
	ssize_t r;
	pid_t pid;

	argv[n++] = "mthpctl";
	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!pid) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		signal(SIGINT, SIG_IGN);	/* finish attach/detach; we clean up */
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(p[1]);
	while (off + 1 < len && (r = read(p[0], out + off, len - off - 1)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += r;
	}
	out[off] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* --- policies ------------------------------------------------------- */

static int cg_index(const char *cg)
{
	int i;

	for (i = 0; i < st.nr_cgroups; i++)
		if (!strcmp(st.cgroups[i], cg))
			return i;
	return -1;
}

static int ensure_bpffs(void)
{
	struct statfs sfs;

	if (!statfs(MTHPCTL_BPFFS, &sfs) && sfs.f_type == MTHPCTL_BPFFS_MAGIC)
		return 0;
	if (mount("bpf", MTHPCTL_BPFFS, "bpf", 0, "mode=0700"))
		return -errno;
	st.mounted_bpffs = true;
	return 0;
}

int bench_policy_attach(const struct bench_opts *o, const char *cg, char *note, size_t len)
{
	static char *dflt[] = { "auto" };

	if (!o->nr_policy_words)
		return bench_policy_attach_words(dflt, 1, cg, note, len);
	return bench_policy_attach_words(o->policy_words, o->nr_policy_words, cg, note, len);
}

int bench_policy_attach_words(char *const words[], int nw, const char *cg, char *note, size_t len)
{
	char *args[8 + BENCH_MAX_POLICY_WORDS], out[2048];
	int n = 0, i, ret, idx = cg_index(cg);

	if (ensure_bpffs()) {
		snprintf(note, len, "cannot mount bpffs at %s: %s", MTHPCTL_BPFFS, strerror(errno));
		return MTHPCTL_EXIT_BPFFS;
	}
	args[n++] = "attach";
	args[n++] = "--cgroup";
	args[n++] = (char *)cg;
	args[n++] = "--policy";
	for (i = 0; i < nw && i < BENCH_MAX_POLICY_WORDS; i++)
		args[n++] = words[i];
	args[n] = NULL;
	ret = run_self(args, out, sizeof(out));
	if (ret == 0) {
		if (idx >= 0)
			st.attached[idx] = true;
		return 0;
	}
	out[strcspn(out, "\n")] = '\0';
	snprintf(note, len, "%s", strncmp(out, "mthpctl: error: ", 16) ? out : out + 16);
	return ret < 0 ? MTHPCTL_EXIT_FAIL : ret;
}

void bench_policy_detach(const char *cg)
{
	char *args[] = { "detach", "--cgroup", (char *)cg, NULL };
	char out[1024];
	int idx = cg_index(cg);

	if (idx < 0 || !st.attached[idx])
		return;
	run_self(args, out, sizeof(out));
	st.attached[idx] = false;
}

int bench_policy_counters(const char *cg, struct mthpctl_counters *c)
{
	char dir[4096], path[4200];
	struct mthpctl_totals t;
	struct stat st;
	__u32 map_id;
	int fd, err = 0;

	if (stat(cg, &st))
		return -errno;
	/* the pin directory is named by the cgroup id, the directory's inode */
	mthpctl_pin_dir(MTHPCTL_PIN_ROOT, st.st_ino, NULL, dir, sizeof(dir));
	mthpctl_pin_path(dir, "totals", path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (mthpctl_read_totals(fd, &t, &map_id))
		*c = t.cnt;
	else
		err = -EIO;
	close(fd);
	return err;
}

/* --- cgroups -------------------------------------------------------- */

static void enable_memory(const char *parent)
{
	bench_cg_write(parent, "cgroup.subtree_control", "+memory");
}

int bench_cg_create(const char *name, char *path, size_t len)
{
	char parent[600];
	int i;

	snprintf(path, len, "%s/%s", st.root, name);
	snprintf(parent, sizeof(parent), "%s", path);
	enable_memory(dirname(parent));
	if (st.nr_cgroups == MAX_CGROUPS)
		return -E2BIG;
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	i = st.nr_cgroups++;
	snprintf(st.cgroups[i], sizeof(st.cgroups[i]), "%s", path);
	st.attached[i] = false;
	return 0;
}

/* Empty the cgroup (cgroup.kill, or SIGKILL to its cgroup.procs) and
 * rmdir it, retrying while the kernel finishes tearing tasks down. */
static int cg_kill_rmdir(const char *cg)
{
	struct timespec tick = { 0, 50 * 1000 * 1000 };
	char path[600], buf[4096], *p;
	int i;

	for (i = 0; i < 200; i++) {	/* 10 s */
		if (!rmdir(cg) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		if (bench_cg_write(cg, "cgroup.kill", "1")) {
			snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
			if (mthpctl_read_file(path, buf, sizeof(buf)) > 0)
				for (p = strtok(buf, "\n"); p; p = strtok(NULL, "\n"))
					kill(atoi(p), SIGKILL);
		}
		/* reap our own children that died there */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		nanosleep(&tick, NULL);
	}
	return -EBUSY;
}

int bench_cg_remove(const char *path)
{
	int idx, err;

	if (!path[0])
		return 0;
	idx = cg_index(path);
	if (idx >= 0 && st.attached[idx])
		bench_policy_detach(path);
	err = cg_kill_rmdir(path);
	if (err)
		fprintf(stderr, "mthpctl: warning: cannot remove %s: %s\n", path, strerror(-err));
	if (idx >= 0 && !err) {
		memmove(&st.cgroups[idx], &st.cgroups[idx + 1],
			(st.nr_cgroups - idx - 1) * sizeof(st.cgroups[0]));
		memmove(&st.attached[idx], &st.attached[idx + 1],
			(st.nr_cgroups - idx - 1) * sizeof(st.attached[0]));
		st.nr_cgroups--;
	}
	return err;
}

/* --- setup / restore ------------------------------------------------ */

static int check_cgroup_parent(const char *cg)
{
	char parent[600], path[700], buf[512], msg[800];
	enum mthpctl_cg_result r;
	__u64 id;
	int e;

	snprintf(parent, sizeof(parent), "%s", cg);
	dirname(parent);
	r = mthpctl_cgroup_check(parent, &mthpctl_real_fsops, &id, &e);
	if (r != MTHPCTL_CG_OK)
		return mthpctl_error(MTHPCTL_EXIT_CGROUP,
				     "%s (bench needs a cgroup2 hierarchy with the memory controller)",
				     mthpctl_cgroup_describe(parent, r, e, msg, sizeof(msg)));
	snprintf(path, sizeof(path), "%s/cgroup.controllers", parent);
	if (mthpctl_read_file(path, buf, sizeof(buf)) < 0 || !mthpctl_has_word(buf, "memory"))
		return mthpctl_error(MTHPCTL_EXIT_CGROUP,
				     "no cgroup2 memory controller in %s (is memory on a cgroup v1 "
				     "hierarchy? boot with cgroup_no_v1=memory, or run `make bench` in the VM)",
				     parent);
	return 0;
}

int bench_setup(const struct bench_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	int ret, err;

	if (geteuid() != 0)
		return mthpctl_error(MTHPCTL_EXIT_PERM,
				     "bench changes THP settings and creates cgroups: run it as root");
	if (access(MTHPCTL_THP_DIR "/enabled", W_OK))
		return mthpctl_error(MTHPCTL_EXIT_UNSUPPORTED,
				     "%s/enabled: %s (kernel without transparent huge pages?)",
				     MTHPCTL_THP_DIR, strerror(errno));
	ret = check_cgroup_parent(o->cgroup);
	if (ret)
		return ret;

	memset(&st, 0, sizeof(st));
	snprintf(st.root, sizeof(st.root), "%s", o->cgroup);
	if (!access(st.root, F_OK) && rmdir(st.root))
		return mthpctl_error(MTHPCTL_EXIT_STATE,
				     "%s exists and is in use (%s): another bench running? "
				     "remove it or pick another --cgroup",
				     st.root, strerror(errno));

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: blocking calls return EINTR */
	bench_stop = 0;
	sigaction(SIGINT, &sa, &st.old_int);
	sigaction(SIGTERM, &sa, &st.old_term);
	sigaction(SIGHUP, &sa, &st.old_hup);
	sigaction(SIGPIPE, &ign, &st.old_pipe);
	st.active = true;

	err = save_settings();
	if (err) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot read the THP settings in %s: %s",
				     MTHPCTL_THP_DIR, strerror(-err));
	}
	err = write_file("/proc/sys/vm/overcommit_memory", "1");
	if (!err) {
		enable_memory(dirname(strcpy((char[600]){0}, st.root)));
		if (mkdir(st.root, 0755))
			err = -errno;
		else
			st.root_created = true;
	}
	if (err) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot set up %s: %s", st.root, strerror(-err));
	}
	return 0;
}

void bench_restore(void)
{
	int i;

	if (!st.active)
		return;
	while (st.nr_pids)
		bench_kill(st.pids[st.nr_pids - 1]);
	for (i = st.nr_cgroups - 1; i >= 0; i--)
		bench_cg_remove(st.cgroups[i]);
	if (st.root_created) {
		i = cg_kill_rmdir(st.root);
		if (i)
			fprintf(stderr, "mthpctl: warning: cannot remove %s: %s\n",
				st.root, strerror(-i));
		st.root_created = false;
	}
	restore_settings();
	if (st.mounted_bpffs) {
		umount(MTHPCTL_BPFFS);
		st.mounted_bpffs = false;
	}
	sigaction(SIGINT, &st.old_int, NULL);
	sigaction(SIGTERM, &st.old_term, NULL);
	sigaction(SIGHUP, &st.old_hup, NULL);
	sigaction(SIGPIPE, &st.old_pipe, NULL);
	st.active = false;
}

int bench_read_full(int fd, void *buf, size_t len, __u64 timeout_ns)
{
	__u64 t0 = bench_now_ns();
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (bench_stop)
			return -EINTR;
		if (bench_now_ns() - t0 > timeout_ns)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		n = read(fd, (char *)buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		off += n;
	}
	return 0;
}

/* --- report helpers --------------------------------------------------- */

static void jdouble(struct jw *w, const char *k, double v)
{
	jw_key(w, k);
	jw_double(w, v);
}

static void json_spread_fields(struct jw *w, const struct bench_spread *s)
{
	jdouble(w, "median", s->median);
	jdouble(w, "min", s->min);
	jdouble(w, "max", s->max);
	jdouble(w, "ci95_lo", s->lo);
	jdouble(w, "ci95_hi", s->hi);
	jw_ku64(w, "n", s->n);
}

void bench_json_spread(struct jw *w, const char *key, const struct bench_spread *s)
{
	jw_key(w, key);
	jw_obj_open(w);
	json_spread_fields(w, s);
	jw_obj_close(w);
}

void bench_json_ratio(struct jw *w, const char *key, const struct bench_spread *s)
{
	jw_key(w, key);
	jw_obj_open(w);
	json_spread_fields(w, s);
	jw_kbool(w, "distinguishable", !bench_spread_contains(s, 1.0));
	jw_obj_close(w);
}

const char *bench_verdict(const struct bench_spread *r)
{
	if (!r->n)
		return "-";
	return bench_spread_contains(r, 1.0) ? "not distinguishable" : "distinguishable";
}

void bench_json_folios(struct jw *w, const struct bench_folios *f)
{
	int o;

	jw_key(w, "folio_bytes");
	jw_arr_open(w);
	for (o = 0; o < BENCH_NR_ORDERS; o++) {
		jw_obj_open(w);
		jw_ku64(w, "size_kb", 4ULL << o);
		jw_ku64(w, "bytes", f->bytes[o]);
		jw_obj_close(w);
	}
	jw_arr_close(w);
	jw_ku64(w, "pmd_bytes", f->bytes[BENCH_NR_ORDERS - 1]);
}

void bench_json_memstat(struct jw *w, const struct bench_memstat *m)
{
	int i;

	jw_key(w, "memory_stat_delta");
	jw_obj_open(w);
	for (i = 0; i < BENCH_NR_MS; i++) {
		jw_key(w, bench_ms_names[i]);
		if (m->have[i])
			jw_u64(w, m->v[i]);
		else
			jw_null(w);
	}
	jw_obj_close(w);
}

void bench_folios_median(const struct bench_folios *runs, int n, struct bench_folios *out)
{
	__u64 v[64];
	int o, i;

	bench_folios_init(out);
	for (o = 0; o < BENCH_NR_ORDERS; o++) {
		for (i = 0; i < n && i < 64; i++)
			v[i] = runs[i].bytes[o];
		out->bytes[o] = bench_median_u64(v, i);
	}
}

void bench_memstat_median(const struct bench_memstat *runs, int n, struct bench_memstat *out)
{
	__u64 v[64];
	int k, i;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < BENCH_NR_MS; k++) {
		out->have[k] = n > 0;
		for (i = 0; i < n && i < 64; i++) {
			out->have[k] &= runs[i].have[k];
			v[i] = runs[i].v[k];
		}
		if (out->have[k])
			out->v[k] = bench_median_u64(v, i);
	}
}

static const char *order_name(int o, char *buf, size_t len)
{
	__u64 kb = 4ULL << o;

	if (kb >= 1024)
		snprintf(buf, len, "%lluM", (unsigned long long)kb >> 10);
	else
		snprintf(buf, len, "%lluK", (unsigned long long)kb);
	return buf;
}

void bench_print_folios(const char *mode, const struct bench_folios *f)
{
	char b[16];
	int o, any = 0;

	printf("  %-14s", mode);
	for (o = 0; o < BENCH_NR_ORDERS; o++)
		if (f->bytes[o])
			printf("%s%s %.1f", any++ ? ", " : " ", order_name(o, b, sizeof(b)),
			       f->bytes[o] / 1048576.0);
	printf("%s; PMD %.1f MiB\n", any ? " MiB" : " (no anonymous memory seen)",
	       f->bytes[BENCH_NR_ORDERS - 1] / 1048576.0);
}

static const char *const ms_short[BENCH_NR_MS] = {
	"pswpout", "pswpin", "thp_swpout", "thp_swpout_fb", "refault_anon", "pgmajfault",
};

void bench_print_memstat_header(void)
{
	int i;

	printf("  %-14s", "mode");
	for (i = 0; i < BENCH_NR_MS; i++)
		printf(" %13s", ms_short[i]);
	printf("\n");
}

void bench_print_memstat(const char *mode, const struct bench_memstat *m)
{
	char b[24];
	int i;

	printf("  %-14s", mode);
	for (i = 0; i < BENCH_NR_MS; i++) {
		if (m->have[i])
			snprintf(b, sizeof(b), "%llu", (unsigned long long)m->v[i]);
		else
			snprintf(b, sizeof(b), "absent");
		printf(" %13s", b);
	}
	printf("\n");
}
