// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Mounts, cgroup paths and bpffs names (src/cgroup.c, src/pin.c):
 * /proc/self/mountinfo, cgroup.controllers, a --cgroup path checked and
 * described, and the cg-<id> directory names under /sys/fs/bpf/mthpctl.
 */
#include <errno.h>

#include "cgroup.h"
#include "pin.h"
#include "fuzz.h"

/*
 * out is a heap block of exactly len bytes: ASan sees any overrun. A mount
 * point found with a small buffer is the whole one (not cut short).
 */
static void mountinfo(const char *s, const char *fstype, size_t len)
{
	char *out = malloc(len), full[8192];

	if (!out)
		abort();
	if (!mthpctl_find_mount(s, fstype, out, len)) {
		fuzz_assert(strlen(out) < len);
		fuzz_assert(!mthpctl_find_mount(s, fstype, full, sizeof(full)));
		fuzz_assert(!strcmp(out, full));
	}
	free(out);
}

/* A file system answering from the path itself: every result is reached. */
static int fake_stat(const char *path, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = strlen(path);
	st->st_mode = path[0] == '/' ? S_IFDIR : S_IFREG;
	errno = path[0] == 'x' ? EACCES : ENOENT;
	return path[0] == 'n' || path[0] == 'x' ? -1 : 0;
}

static int fake_statfs(const char *path, struct statfs *sfs)
{
	memset(sfs, 0, sizeof(*sfs));
	sfs->f_type = path[1] == '1' ? MTHPCTL_CGROUP1_MAGIC :
		      path[1] == 't' ? MTHPCTL_TMPFS_MAGIC : MTHPCTL_CGROUP2_MAGIC;
	errno = EIO;
	return path[1] == 'e' ? -1 : 0;
}

static const struct mthpctl_fsops fake_ops = { .stat = fake_stat, .statfs = fake_statfs };

static void cgroup_path(const char *s)
{
	enum mthpctl_cg_result r;
	char msg[64], *small;
	__u64 id = 0;
	int err;

	r = mthpctl_cgroup_check(s, &fake_ops, &id, &err);
	fuzz_assert(r != MTHPCTL_CG_OK || id == strlen(s));
	mthpctl_cgroup_describe(s, r, err, msg, sizeof(msg));
	fuzz_assert(strlen(msg) < sizeof(msg));
	small = malloc(8);
	if (!small)
		abort();
	mthpctl_cgroup_describe(s, r, err, small, 8);
	free(small);
}

/* A name that parses is the canonical one mthpctl_pin_dir writes. */
static void pin_name(const char *s)
{
	char dir[64];
	__u64 id;

	if (!mthpctl_pin_parse(s, &id)) {
		fuzz_assert(!mthpctl_pin_dir("", id, NULL, dir, sizeof(dir)));
		fuzz_assert(!strcmp(dir + 1, s));
		fuzz_assert(!mthpctl_pin_is_leftover(s));
	}
	if (mthpctl_pin_is_leftover(s))
		fuzz_assert(mthpctl_pin_parse(s, &id) && strchr(s, '_'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	mountinfo(s, "cgroup2", 4096);
	mountinfo(s, "bpf", 1);
	mountinfo(s, "bpf", 8);
	mthpctl_has_word(s, "memory");
	cgroup_path(s);
	pin_name(s);
	free(s);
	return 0;
}
