// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "sysfs.h"

static int real_stat(const char *path, struct stat *st) { return stat(path, st); }
static int real_statfs(const char *path, struct statfs *s) { return statfs(path, s); }

const struct mthpctl_fsops mthpctl_real_fsops = {
	.stat = real_stat,
	.statfs = real_statfs,
};

enum mthpctl_cg_result mthpctl_cgroup_check(const char *path,
					    const struct mthpctl_fsops *ops,
					    __u64 *id, int *errno_out)
{
	struct statfs sfs;
	struct stat st;

	*errno_out = 0;
	if (!path || !*path)
		return MTHPCTL_CG_EMPTY;
	if (ops->stat(path, &st)) {
		*errno_out = errno;
		return errno == ENOENT ? MTHPCTL_CG_MISSING : MTHPCTL_CG_ERROR;
	}
	if (!S_ISDIR(st.st_mode))
		return MTHPCTL_CG_NOT_DIR;
	if (ops->statfs(path, &sfs)) {
		*errno_out = errno;
		return MTHPCTL_CG_ERROR;
	}
	if ((unsigned long)sfs.f_type == MTHPCTL_CGROUP1_MAGIC)
		return MTHPCTL_CG_V1;
	if ((unsigned long)sfs.f_type != MTHPCTL_CGROUP2_MAGIC)
		return MTHPCTL_CG_NOT_CGROUP;
	*id = st.st_ino;
	return MTHPCTL_CG_OK;
}

const char *mthpctl_cgroup_strerror(enum mthpctl_cg_result r)
{
	switch (r) {
	case MTHPCTL_CG_OK: return "ok";
	case MTHPCTL_CG_MISSING: return "does not exist (create it with mkdir under the cgroup2 mount)";
	case MTHPCTL_CG_EMPTY: return "is empty (give a cgroup2 directory, e.g. /sys/fs/cgroup/NAME)";
	case MTHPCTL_CG_NOT_DIR: return "is not a directory (give a cgroup directory)";
	case MTHPCTL_CG_V1: return "is a cgroup v1 path (use a cgroup2 path, e.g. under /sys/fs/cgroup)";
	case MTHPCTL_CG_NOT_CGROUP: return "is not on a cgroup2 mount (use a path under the cgroup2 mount)";
	default: return "cannot be checked";
	}
}

char *mthpctl_cgroup_describe(const char *path, enum mthpctl_cg_result r, int err,
			      char *buf, size_t len)
{
	if (r == MTHPCTL_CG_EMPTY)
		snprintf(buf, len, "the cgroup path %s", mthpctl_cgroup_strerror(r));
	else
		snprintf(buf, len, "%s %s", path,
			 r == MTHPCTL_CG_ERROR ? strerror(err) : mthpctl_cgroup_strerror(r));
	return buf;
}

/* Decode in[0..n) into out; -ENAMETOOLONG (and out "") if it does not fit. */
static int unescape(const char *in, size_t n, char *out, size_t len)
{
	size_t i, o = 0;

	if (!len)
		return -ENAMETOOLONG;
	for (i = 0; i < n; i++) {
		if (o + 1 >= len) {
			out[0] = '\0';
			return -ENAMETOOLONG;
		}
		if (in[i] == '\\' && i + 3 < n &&
		    in[i + 1] >= '0' && in[i + 1] <= '3' &&
		    in[i + 2] >= '0' && in[i + 2] <= '7' &&
		    in[i + 3] >= '0' && in[i + 3] <= '7') {
			out[o++] = (in[i + 1] - '0') * 64 + (in[i + 2] - '0') * 8 +
				   (in[i + 3] - '0');
			i += 3;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
	return 0;
}

int mthpctl_find_mount(const char *mountinfo, const char *fstype,
		       char *out, size_t len)
{
	const char *line = mountinfo;
	size_t tlen = strlen(fstype);

	while (line && *line) {
		const char *eol = strchr(line, '\n'), *p = line, *mp, *sep;
		size_t mplen;
		int f;

		if (!eol)
			eol = line + strlen(line);
		/* fields: id parent maj:min root mountpoint opts ... - fstype src */
		for (f = 0; f < 4 && p < eol; f++) {
			p = memchr(p, ' ', eol - p);
			if (!p)
				break;
			p++;
		}
		if (f == 4 && p && p < eol) {
			mp = p;
			p = memchr(mp, ' ', eol - mp);
			mplen = p ? (size_t)(p - mp) : 0;
			sep = p ? strstr(p, " - ") : NULL;
			if (mplen && sep && sep < eol &&
			    !strncmp(sep + 3, fstype, tlen) &&
			    (sep[3 + tlen] == ' ' || sep + 3 + tlen == eol)) {
				return unescape(mp, mplen, out, len);
			}
		}
		line = *eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int mthpctl_has_word(const char *buf, const char *word)
{
	size_t n = strlen(word);
	const char *p = buf;

	while ((p = strstr(p, word))) {
		if ((p == buf || p[-1] == ' ') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

static int table_add(struct mthpctl_cg_table *t, __u64 id, const char *path)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct mthpctl_cg_entry *e = realloc(t->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		t->e = e;
		t->cap = cap;
	}
	t->e[t->n].path = strdup(path);
	if (!t->e[t->n].path)
		return -ENOMEM;
	t->e[t->n].id = id;
	t->n++;
	return 0;
}

/*
 * Directories below dir (path, open as fd), depth first; closes fd.
 *
 * A directory whose link count is 2 has no subdirectory (its "." and its
 * entry in the parent; each subdirectory's ".." adds one): cgroup2 counts
 * them so, and a node's cgroups are mostly leaves, each with some 60 files
 * that reading the directory would list for nothing. Such a leaf is
 * stat()ed, not opened and read. A file system that does not count
 * subdirectories (btrfs: 1) gets every directory read.
 */
static int table_walk(struct mthpctl_cg_table *t, int fd, dev_t dev, char *path, size_t len,
		      int depth)
{
	size_t plen = strlen(path);
	struct dirent *de;
	struct stat st;
	int err = 0, cfd;
	DIR *d;

	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;	/* cgroup files: no stat */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (plen + 1 + strlen(de->d_name) >= len)
			continue;	/* too deep to name */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
		    st.st_dev != dev)
			continue;	/* removed meanwhile, not a directory, a mount */
		snprintf(path + plen, len - plen, "/%s", de->d_name);
		err = table_add(t, st.st_ino, path);
		if (!err && depth < 64 && st.st_nlink != 2) {
			cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd >= 0)
				err = table_walk(t, cfd, dev, path, len, depth + 1);
		}
		path[plen] = '\0';
	}
	closedir(d);
	return err;
}

static int by_id(const void *a, const void *b)
{
	const struct mthpctl_cg_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int mthpctl_cgroup_table_build(const char *root, struct mthpctl_cg_table *t)
{
	char path[4096];
	struct stat st;
	int fd, err;

	memset(t, 0, sizeof(*t));
	if (strlen(root) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	strcpy(path, root);
	while (strlen(path) > 1 && path[strlen(path) - 1] == '/')
		path[strlen(path) - 1] = '\0';
	err = table_add(t, st.st_ino, path);
	if (!err)
		err = table_walk(t, fd, st.st_dev, path, sizeof(path), 0);
	else
		close(fd);
	if (err) {
		mthpctl_cgroup_table_free(t);
		return err;
	}
	qsort(t->e, t->n, sizeof(*t->e), by_id);
	return 0;
}

const char *mthpctl_cgroup_table_find(const struct mthpctl_cg_table *t, __u64 id)
{
	struct mthpctl_cg_entry key = { .id = id }, *e;

	if (!t->n)
		return NULL;
	e = bsearch(&key, t->e, t->n, sizeof(*t->e), by_id);
	return e ? e->path : NULL;
}

void mthpctl_cgroup_table_free(struct mthpctl_cg_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->e[i].path);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

int mthpctl_cgroup_path_by_id(const char *root, __u64 id, char *out, size_t len)
{
	struct mthpctl_cg_table t;
	const char *p;
	int ret;

	ret = mthpctl_cgroup_table_build(root, &t);
	if (ret)
		return ret == -ENOENT ? -ENOENT : ret;
	p = mthpctl_cgroup_table_find(&t, id);
	ret = -ENOENT;
	if (p) {
		ret = -ENAMETOOLONG;
		if (strlen(p) < len) {
			strcpy(out, p);
			ret = 0;
		}
	}
	mthpctl_cgroup_table_free(&t);
	return ret;
}

int mthpctl_proc_thp_enabled(const char *status, char *name, size_t len)
{
	const char *v = mthpctl_status_field(status, "Name");
	size_t n = 0;

	if (len) {
		while (v && v[n] && v[n] != '\n' && n + 1 < len)
			n++;
		if (v)
			memcpy(name, v, n);
		name[n] = '\0';
	}
	v = mthpctl_status_field(status, "THP_enabled");
	if (!v || (*v != '0' && *v != '1') || (v[1] && v[1] != '\n'))
		return -ENOENT;
	return *v == '1';
}

void mthpctl_thp_off_count_at(int cg_fd, struct mthpctl_thp_off *t)
{
	/* a cgroup's processes, one pid a line (64 KiB: thousands of them) */
	static char procs[65536];
	char path[64], status[4096], name[sizeof(t->name)];
	const char *p = procs;
	char *end;
	long pid;

	if (mthpctl_read_file_at(cg_fd, "cgroup.procs", procs, sizeof(procs)) <= 0)
		return;
	for (; (pid = strtol(p, &end, 10)) > 0 && *end == '\n'; p = end + 1) {
		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		if (mthpctl_read_file(path, status, sizeof(status)) <= 0)
			continue;	/* exited since */
		t->procs++;
		if (mthpctl_proc_thp_enabled(status, name, sizeof(name)) != 0)
			continue;
		if (!t->disabled++) {
			t->pid = (int)pid;
			memcpy(t->name, name, sizeof(t->name));
		}
	}
}

int mthpctl_thp_off_subtree(const char *path, struct mthpctl_thp_off *t)
{
	struct mthpctl_cg_table tab;
	size_t i;
	int fd, err;

	memset(t, 0, sizeof(*t));
	err = mthpctl_cgroup_table_build(path, &tab);
	if (err)
		return err;
	for (i = 0; i < tab.n; i++) {
		fd = open(tab.e[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		mthpctl_thp_off_count_at(fd, t);
		close(fd);
	}
	mthpctl_cgroup_table_free(&tab);
	return 0;
}
