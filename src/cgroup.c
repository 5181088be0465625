// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"

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
		return MTHPCTL_CG_MISSING;
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
	case MTHPCTL_CG_NOT_DIR: return "is not a directory (give a cgroup directory)";
	case MTHPCTL_CG_V1: return "is a cgroup v1 path (use a cgroup2 path, e.g. under /sys/fs/cgroup)";
	case MTHPCTL_CG_NOT_CGROUP: return "is not on a cgroup2 mount (use a path under the cgroup2 mount)";
	default: return "cannot be checked";
	}
}

static void unescape(const char *in, size_t n, char *out, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 1 < len; i++) {
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
				unescape(mp, mplen, out, len);
				return 0;
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

static __u64 want_id;
static char *found;

static int walk_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type == FTW_D && (__u64)st->st_ino == want_id) {
		found = strdup(path);
		return 1;
	}
	return 0;
}

int mthpctl_cgroup_path_by_id(const char *root, __u64 id, char *out, size_t len)
{
	int ret = -ENOENT;

	want_id = id;
	found = NULL;
	nftw(root, walk_cb, 16, FTW_PHYS | FTW_MOUNT);
	if (found) {
		if (strlen(found) < len) {
			strcpy(out, found);
			ret = 0;
		} else {
			ret = -ENAMETOOLONG;
		}
		free(found);
	}
	return ret;
}
