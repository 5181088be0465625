// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the environment a run changes and puts back. The THP
 * enabled values and sysctls are saved before they are first written, the
 * signal handlers are ours while the run lasts, bpffs is mounted if it was
 * not; bench_setup() makes these changes (and the bench cgroup through
 * bench_cgroup.c), bench_restore() undoes them and everything the other
 * bench files recorded (children, cgroups, policies), at the end, on error
 * and after SIGINT/SIGTERM/SIGHUP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include "bench_common.h"
#include "cgroup.h"
#include "mthpctl.h"
#include "pin.h"

volatile sig_atomic_t bench_stop;

/* THP enabled files, overcommit and --hook-cost's bpf_stats_enabled */
#define MAX_KNOBS	40

static struct {
	bool active;			/* between bench_setup and bench_restore */
	struct { char path[512]; char value[32]; } knobs[MAX_KNOBS];
	int nr_knobs;
	bool mounted_bpffs;
	struct sigaction old_int, old_term, old_hup, old_pipe;
} env;

static void on_signal(int sig)
{
	bench_stop = sig;
}

int bench_interrupted(void)
{
	return 128 + (bench_stop ? bench_stop : SIGINT);
}

int bench_write_file(const char *path, const char *value)
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

/* --- settings ------------------------------------------------------- */

static int save_knob(const char *path, bool bracketed)
{
	char buf[256];
	int i = env.nr_knobs;

	if (i == MAX_KNOBS)
		return -E2BIG;
	if (mthpctl_read_file(path, buf, sizeof(buf)) <= 0)
		return -errno ? -errno : -EIO;
	if (bracketed) {
		if (mthpctl_parse_bracketed(buf, env.knobs[i].value, sizeof(env.knobs[i].value)))
			return -EINVAL;
	} else {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(env.knobs[i].value, sizeof(env.knobs[i].value), "%s", buf);
	}
	snprintf(env.knobs[i].path, sizeof(env.knobs[i].path), "%s", path);
	env.nr_knobs++;
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

	return err ? err : bench_write_file(path, value);
}

static void restore_settings(void)
{
	int i, err;

	for (i = env.nr_knobs - 1; i >= 0; i--) {
		err = bench_write_file(env.knobs[i].path, env.knobs[i].value);
		if (err)
			fprintf(stderr, "mthpctl: warning: could not restore %s to %s: %s\n",
				env.knobs[i].path, env.knobs[i].value, strerror(-err));
	}
	env.nr_knobs = 0;
}

int bench_set_thp(const char *value)
{
	int i, err;

	for (i = 0; i < env.nr_knobs; i++) {
		if (strncmp(env.knobs[i].path, MTHPCTL_THP_DIR "/", sizeof(MTHPCTL_THP_DIR)))
			continue;
		err = bench_write_file(env.knobs[i].path, value);
		if (err)
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot write %s to %s: %s",
					     value, env.knobs[i].path, strerror(-err));
	}
	return 0;
}

void bench_drop_caches(void)
{
	sync();
	bench_write_file("/proc/sys/vm/drop_caches", "3");
}

int bench_mount_bpffs(void)
{
	struct statfs sfs;

	if (!statfs(MTHPCTL_BPFFS, &sfs) && sfs.f_type == MTHPCTL_BPFFS_MAGIC)
		return 0;
	if (mount("bpf", MTHPCTL_BPFFS, "bpf", 0, "mode=0700"))
		return -errno;
	env.mounted_bpffs = true;
	return 0;
}

/* --- setup / restore ------------------------------------------------ */

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
	ret = bench_cgroups_prepare(o->cgroup);
	if (ret)
		return ret;

	memset(&env, 0, sizeof(env));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: blocking calls return EINTR */
	bench_stop = 0;
	sigaction(SIGINT, &sa, &env.old_int);
	sigaction(SIGTERM, &sa, &env.old_term);
	sigaction(SIGHUP, &sa, &env.old_hup);
	sigaction(SIGPIPE, &ign, &env.old_pipe);
	env.active = true;

	err = save_settings();
	if (err) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot read the THP settings in %s: %s",
				     MTHPCTL_THP_DIR, strerror(-err));
	}
	err = bench_write_file("/proc/sys/vm/overcommit_memory", "1");
	if (!err)
		err = bench_cgroups_create_root();
	if (err) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot set up %s: %s", o->cgroup,
				     strerror(-err));
	}
	return 0;
}

void bench_restore(void)
{
	if (!env.active)
		return;
	bench_kill_all();
	bench_cgroups_remove_all();
	restore_settings();
	if (env.mounted_bpffs) {
		umount(MTHPCTL_BPFFS);
		env.mounted_bpffs = false;
	}
	sigaction(SIGINT, &env.old_int, NULL);
	sigaction(SIGTERM, &env.old_term, NULL);
	sigaction(SIGHUP, &env.old_hup, NULL);
	sigaction(SIGPIPE, &env.old_pipe, NULL);
	env.active = false;
}
