// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl apply: what systemd adds. A unit's cgroup and MemoryTHP=
 * (systemctl show -p ControlGroup -p MemoryTHP) and the drop-ins by which
 * a .service runs apply --unit at each start (mthpctl-apply(8): why
 * ExecStartPre).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apply.h"
#include "cgroup.h"
#include "mthpctl.h"
#include "sysfs.h"

int apply_run_capture(char *const argv[], char *out, size_t len)
{
	posix_spawn_file_actions_t fa;
	char rest[256];
	int pfd[2], status, err;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	/* the copy dup2 makes is not close-on-exec */
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		return -err;
	}
	/* read to the end, keeping what fits: a child blocked on a full pipe
	 * would never exit */
	while ((r = read(pfd[0], got + 1 < len ? out + got : rest,
			 got + 1 < len ? len - 1 - got : sizeof(rest))) > 0 || (r < 0 && errno == EINTR))
		got += got + 1 < len && r > 0 ? (size_t)r : 0;
	close(pfd[0]);
	if (len)
		out[got] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

bool apply_systemd_running(void)
{
	struct stat st;

	return !lstat(SYSTEMD_RUN_DIR, &st) && S_ISDIR(st.st_mode);
}

/* The cgroup2 mount: systemd's ControlGroup is relative to it. */
static void cgroup2_root(char *out, size_t len)
{
	static char buf[65536];
	struct statfs sfs;

	if (!statfs("/sys/fs/cgroup", &sfs) && (unsigned long)sfs.f_type == MTHPCTL_CGROUP2_MAGIC)
		snprintf(out, len, "/sys/fs/cgroup");
	else if (mthpctl_read_file("/proc/self/mountinfo", buf, sizeof(buf)) <= 0 ||
		 mthpctl_find_mount(buf, "cgroup2", out, len))
		out[0] = '\0';
}

/* The value of KEY in systemctl show's KEY=VALUE lines, into out ("" if absent). */
static void show_value(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p;

	out[0] = '\0';
	for (p = text; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		if (strncmp(p, key, kl) || p[kl] != '=')
			continue;
		snprintf(out, len, "%.*s", (int)strcspn(p + kl + 1, "\n"), p + kl + 1);
		return;
	}
}

int apply_unit_cgroup(const struct mthpctl_conf_entry *e, char *out, size_t len, char *memory_thp, size_t mlen)
{
	/* a systemd without MemoryTHP= (252 has none) leaves its line out */
	char *argv[] = { "systemctl", "show", "-p", "ControlGroup", "-p", "MemoryTHP", "--", e->target, NULL };
	char root[4096], rel[4096], text[8192];
	int rc;

	out[0] = '\0';
	memory_thp[0] = '\0';
	if (!apply_systemd_running())
		return mthpctl_error(MTHPCTL_EXIT_CGROUP,
				     "%s:%d: [%s]: systemd is not running (no %s), so units have no cgroup "
				     "to resolve; name the cgroup by its path (nothing changed)",
				     e->file, e->line, e->target, SYSTEMD_RUN_DIR);
	rc = apply_run_capture(argv, text, sizeof(text));
	if (rc)
		return mthpctl_error(MTHPCTL_EXIT_CGROUP,
				     "%s:%d: [%s]: `systemctl show -p ControlGroup` failed (%s) (nothing changed)",
				     e->file, e->line, e->target,
				     rc == -ENOENT ? "systemctl not found" : rc < 0 ? strerror(-rc) : "see above");
	show_value(text, "ControlGroup", rel, sizeof(rel));
	show_value(text, "MemoryTHP", memory_thp, mlen);
	if (!rel[0])
		return 0;	/* not running: no cgroup now */
	cgroup2_root(root, sizeof(root));
	if (!root[0])
		return mthpctl_error(MTHPCTL_EXIT_CGROUP, "%s:%d: [%s]: no cgroup2 mount (nothing changed)",
				     e->file, e->line, e->target);
	snprintf(out, len, "%s%s", root, rel);
	return 0;
}

static int is_service(const char *unit)
{
	size_t l = strlen(unit);

	return l > 8 && !strcmp(unit + l - 8, ".service");
}

size_t apply_plan_dropins(const struct mthpctl_conf *c, const char *text, struct apply_dropin **out)
{
	struct apply_dropin *d = NULL, *nd;
	char path[4400], *cur;
	struct dirent *de;
	size_t n = 0, i;
	DIR *dir;

	for (i = 0; i < c->n; i++) {
		if (!c->e[i].is_unit || !is_service(c->e[i].target) || !(nd = realloc(d, (n + 1) * sizeof(*d))))
			continue;
		d = nd;
		memset(&d[n], 0, sizeof(d[n]));
		snprintf(d[n].unit, sizeof(d[n].unit), "%s", c->e[i].target);
		d[n++].want = true;
	}
	dir = opendir(SYSTEMD_RUN_DIR);
	while (dir && (de = readdir(dir))) {
		size_t l = strlen(de->d_name);

		if (l < 3 || l - 2 >= sizeof(d->unit) || strcmp(de->d_name + l - 2, ".d"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", SYSTEMD_RUN_DIR, de->d_name, DROPIN_NAME);
		if (access(path, F_OK))
			continue;
		for (i = 0; i < n; i++)
			if (!strncmp(d[i].unit, de->d_name, l - 2) && !d[i].unit[l - 2])
				break;
		if (i == n) {
			if (!(nd = realloc(d, (n + 1) * sizeof(*d))))
				continue;
			d = nd;
			memset(&d[n], 0, sizeof(d[n]));
			snprintf(d[n].unit, sizeof(d[n].unit), "%.*s", (int)(l - 2), de->d_name);
			n++;
		}
		d[i].have = true;
		cur = apply_read_all(path);
		d[i].differs = !cur || strcmp(cur, text);
		free(cur);
	}
	if (dir)
		closedir(dir);
	*out = d;
	return n;
}

bool apply_dropin_changes(const struct apply_dropin *d)
{
	return d->want ? !d->have || d->differs : d->have;
}

static int write_dropin(const struct apply_dropin *d, const char *text)
{
	char dir[4400], path[4600], tmp[4700];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s.d", SYSTEMD_RUN_DIR, d->unit);
	snprintf(path, sizeof(path), "%s/%s", dir, DROPIN_NAME);
	if (!d->want) {
		if (unlink(path) && errno != ENOENT)
			return -errno;
		rmdir(dir);	/* if nothing else is in it */
		return 0;
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	if (fclose(f) || rename(tmp, path))
		return unlink(tmp), -errno;
	return 0;
}

int apply_sync_dropins(const struct apply_dropin *d, size_t n, const char *text)
{
	char *argv[] = { "systemctl", "daemon-reload", NULL };
	char out[256];
	bool changed = false;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		if (!apply_dropin_changes(&d[i]))
			continue;
		err = write_dropin(&d[i], text);
		if (err)
			return mthpctl_error(MTHPCTL_EXIT_FAIL, "writing the drop-in of %s failed: %s",
					     d[i].unit, strerror(-err));
		changed = true;
	}
	/* systemd reads drop-ins at a reload only */
	if (changed && apply_run_capture(argv, out, sizeof(out)))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "systemctl daemon-reload failed (the drop-ins are written)");
	return 0;
}
