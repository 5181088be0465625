// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: child processes. Every child is started in its own process
 * group and tracked until it is reaped, so that bench_restore() can kill
 * what a run left behind (bench_kill_all()); waits and reads give up when a
 * stop signal arrives (bench_stop) so that the run can unwind.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bench_common.h"

#define MAX_PIDS	256

static pid_t pids[MAX_PIDS];
static int nr_pids;

static void track(pid_t pid)
{
	if (nr_pids < MAX_PIDS)
		pids[nr_pids++] = pid;
}

static void untrack(pid_t pid)
{
	int i;

	for (i = 0; i < nr_pids; i++)
		if (pids[i] == pid) {
			pids[i] = pids[--nr_pids];
			return;
		}
}

void bench_self_thp_off(void)
{
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);	/* none on a kernel without THP */
}

__u64 bench_self_anon_bytes(void)
{
	char status[4096];
	const char *kb = NULL;

	if (mthpctl_read_file("/proc/self/status", status, sizeof(status)) > 0)
		kb = mthpctl_status_field(status, "RssAnon");
	return kb ? (__u64)strtoull(kb, NULL, 10) << 10 : 0;
}

__u64 bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
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
	/* A child run as a function starts with our resident memory as its own
	 * (the pages fork shares count in its RSS). Loading a policy leaves
	 * ~0.5 MiB freed but resident in malloc's heap, so a workload forked in
	 * a policy mode started at 0.8 MiB against 0.2 in never's, and auto's
	 * small-process rule (2 MiB) saw bench arenas cross it at random.
	 * Give that memory back first: every mode's child starts alike (see
	 * also bench_self_thp_off()). */
	malloc_trim(0);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		setpgid(pid, pid);
		track(pid);
		return pid;
	}
	/* the workload's memory follows the settings under test, not ours */
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGHUP, &dfl, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	setpgid(0, 0);
	if (cg) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if (bench_write_file(path, "0")) {
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
	struct timespec tick = { 0, BENCH_WAIT_TICK_NS };
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

void bench_kill_all(void)
{
	while (nr_pids)
		bench_kill(pids[nr_pids - 1]);
}

/* One read from fd, waiting for data until timeout_ns after t0: the
 * bytes read (0 at end of file), -EINTR on a stop signal, -ETIMEDOUT, or
 * -EIO on a read error. */
static ssize_t read_by(int fd, void *buf, size_t len, __u64 t0, __u64 timeout_ns)
{
	ssize_t n;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (bench_stop)
			return -EINTR;
		if (bench_now_ns() - t0 > timeout_ns)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, BENCH_POLL_MS) <= 0)
			continue;
		n = read(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -EIO : n;
	}
}

int bench_read_full(int fd, void *buf, size_t len, __u64 timeout_ns)
{
	__u64 t0 = bench_now_ns();
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		n = read_by(fd, (char *)buf + off, len - off, t0, timeout_ns);
		if (n <= 0)
			return n ? n : -EIO;
		off += n;
	}
	return 0;
}

int bench_read_output(int fd, char *buf, size_t len, bool keep_tail, __u64 timeout_ns)
{
	__u64 t0 = bench_now_ns();
	size_t off = 0;
	ssize_t n;

	for (;;) {
		n = read_by(fd, buf + off, len - 1 - off, t0, timeout_ns);
		if (n == -EINTR || n == -ETIMEDOUT) {
			buf[off] = '\0';
			return n;
		}
		if (n <= 0)
			break;
		off += n;
		if (off == len - 1) {
			if (!keep_tail)
				break;
			/* keep the second half: the end is what matters */
			memmove(buf, buf + off / 2, off - off / 2);
			off -= off / 2;
		}
	}
	buf[off] = '\0';
	return 0;
}

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void bench_rm_tree(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

bool bench_in_path(const char *name)
{
	char *path, *dir, *save = NULL, buf[4096];
	bool ok = false;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	if (!path)
		return false;
	for (dir = strtok_r(path, ":", &save); dir && !ok; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", dir, name);
		ok = access(buf, X_OK) == 0;
	}
	free(path);
	return ok;
}

int bench_need_program(const char *name, const char *install, const char *option)
{
	if (bench_in_path(name))
		return 0;
	return mthpctl_error(MTHPCTL_EXIT_USAGE, "%s not found: install %s or give %s PATH",
			     name, install, option);
}
