// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: the settings a run changes and puts back. The THP enabled
 * values and sysctls are saved before they are first written, bpffs is
 * mounted if it was not; bench_env_restore() puts them back. The stop flag
 * the signal handlers of bench_setup.c set is here, for every wait.
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

/* THP enabled files, overcommit, khugepaged's scan knobs (bench_start.c) and
 * --hook-cost's bpf_stats_enabled */
#define MAX_KNOBS	40

static struct {
	struct { char path[512]; char value[32]; } knobs[MAX_KNOBS];
	int nr_knobs;
	bool mounted_bpffs;
} env;

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

int bench_env_save(void)
{
	struct mthpctl_hp_size *hp;
	char path[512];
	int n, i, err;

	memset(&env, 0, sizeof(env));
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

void bench_env_restore(void)
{
	int i, err;

	for (i = env.nr_knobs - 1; i >= 0; i--) {
		err = bench_write_file(env.knobs[i].path, env.knobs[i].value);
		if (err)
			fprintf(stderr, "mthpctl: warning: could not restore %s to %s: %s\n",
				env.knobs[i].path, env.knobs[i].value, strerror(-err));
	}
	env.nr_knobs = 0;
	if (env.mounted_bpffs) {
		umount(MTHPCTL_BPFFS);
		env.mounted_bpffs = false;
	}
}

/* The global or a size's enabled (not khugepaged's knobs, also saved) */
static bool thp_enabled_knob(const char *path)
{
	size_t n = strlen(path);

	return !strncmp(path, MTHPCTL_THP_DIR "/", sizeof(MTHPCTL_THP_DIR)) &&
	       n > strlen("/enabled") && !strcmp(path + n - strlen("/enabled"), "/enabled");
}

int bench_set_thp(const char *value)
{
	int i, err;

	for (i = 0; i < env.nr_knobs; i++) {
		if (!thp_enabled_knob(env.knobs[i].path))
			continue;
		err = bench_write_file(env.knobs[i].path, value);
		if (err)
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot write %s to %s: %s",
					     value, env.knobs[i].path, strerror(-err));
	}
	return 0;
}

int bench_set_thp_only(__u64 size_kb)
{
	char mine[64];
	bool found = false;
	int i, err;

	snprintf(mine, sizeof(mine), "/hugepages-%llukB/enabled", (unsigned long long)size_kb);
	for (i = 0; i < env.nr_knobs; i++) {
		const char *path = env.knobs[i].path, *value;

		if (!thp_enabled_knob(path))
			continue;
		/* the global enabled too: it is what "inherit" would follow */
		value = strstr(path, mine) ? "always" : "never";
		found |= value[0] == 'a';
		err = bench_write_file(path, value);
		if (err)
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot write %s to %s: %s",
					     value, path, strerror(-err));
	}
	if (!found)
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "no %s%s", MTHPCTL_THP_DIR, mine);
	return 0;
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
