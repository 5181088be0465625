/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* cgroup path validation and lookup, with injectable file-system calls. */
#ifndef MTHPCTL_CGROUP_H
#define MTHPCTL_CGROUP_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/types.h>

#define MTHPCTL_CGROUP2_MAGIC	0x63677270	/* CGROUP2_SUPER_MAGIC */
#define MTHPCTL_CGROUP1_MAGIC	0x27e0eb	/* CGROUP_SUPER_MAGIC */
#define MTHPCTL_BPFFS_MAGIC	0xcafe4a11	/* BPF_FS_MAGIC */
#define MTHPCTL_TMPFS_MAGIC	0x01021994

/* File-system calls used by validation; tests substitute fakes. */
struct mthpctl_fsops {
	int (*stat)(const char *path, struct stat *st);
	int (*statfs)(const char *path, struct statfs *sfs);
};
extern const struct mthpctl_fsops mthpctl_real_fsops;

enum mthpctl_cg_result {
	MTHPCTL_CG_OK = 0,
	MTHPCTL_CG_MISSING,	/* does not exist */
	MTHPCTL_CG_EMPTY,	/* the path is "" or NULL */
	MTHPCTL_CG_NOT_DIR,
	MTHPCTL_CG_V1,		/* on a cgroup v1 hierarchy */
	MTHPCTL_CG_NOT_CGROUP,	/* not on a cgroup file system */
	MTHPCTL_CG_ERROR,	/* other errno (see errno_out) */
};

/* Validate that path is a cgroup2 directory; on success *id is its cgroup id
 * (the directory's inode number). */
enum mthpctl_cg_result mthpctl_cgroup_check(const char *path,
					    const struct mthpctl_fsops *ops,
					    __u64 *id, int *errno_out);
/* One-line description of a refusal, with the fix. */
const char *mthpctl_cgroup_strerror(enum mthpctl_cg_result r);
/* The whole refusal of path: "PATH does not exist (...)", or for an empty
 * path a message that does not print an empty name; err: errno_out. */
char *mthpctl_cgroup_describe(const char *path, enum mthpctl_cg_result r, int err,
			      char *buf, size_t len);

/* Mount point of the first mount of type fstype in a /proc/self/mountinfo
 * text. Returns 0, -ENOENT, or -ENAMETOOLONG (out "") when it does not fit
 * in len bytes. Octal escapes (\040) are decoded. */
int mthpctl_find_mount(const char *mountinfo, const char *fstype,
		       char *out, size_t len);

/* Is word a whole space-separated word of buf (cgroup.controllers)? */
int mthpctl_has_word(const char *buf, const char *word);

/* Find the directory under root whose inode is id. 0 or -ENOENT. (One
 * walk; to look up many ids, build a table once.) */
int mthpctl_cgroup_path_by_id(const char *root, __u64 id, char *out, size_t len);

/*
 * root and every directory below it on the same file system, with their
 * cgroup ids, in one walk that stats directories only (files are skipped by
 * their d_type): status names all its policies' cgroups and counts their
 * subtrees from one table instead of walking the whole tree per policy.
 */
struct mthpctl_cg_entry {
	__u64 id;		/* the directory's inode number = cgroup id */
	char *path;		/* root + "/" + ..., no trailing slash */
};
struct mthpctl_cg_table {
	struct mthpctl_cg_entry *e;	/* sorted by id */
	size_t n, cap;
};
int mthpctl_cgroup_table_build(const char *root, struct mthpctl_cg_table *t);	/* 0 or -errno */
const char *mthpctl_cgroup_table_find(const struct mthpctl_cg_table *t, __u64 id);
void mthpctl_cgroup_table_free(struct mthpctl_cg_table *t);

/*
 * Processes that no policy can give large folios: those with THP disabled
 * by prctl(PR_SET_THP_DISABLE) (redis-server as shipped, "disable-thp yes";
 * systemd's MemoryTHP=disable), "THP_enabled: 0" in /proc/PID/status.
 */
struct mthpctl_thp_off {
	__u32 procs;		/* processes counted (cgroup.procs) */
	__u32 disabled;		/* of those, THP disabled by prctl */
	int pid;		/* the first disabled one (0: none) */
	char name[16];		/* and its name (/proc/PID/status "Name:") */
};
/* What a /proc/PID/status text says: 1 THP enabled, 0 disabled by prctl,
 * -ENOENT no THP_enabled line (a kernel before 6.x has none). Its "Name:"
 * into name (len bytes, "" when absent). */
int mthpctl_proc_thp_enabled(const char *status, char *name, size_t len);
/* Adds the processes of the cgroup directory open as cg_fd to *t. */
void mthpctl_thp_off_count_at(int cg_fd, struct mthpctl_thp_off *t);
/* The processes of the cgroup at path and its descendants, into *t (zeroed
 * first). 0 or -errno. */
int mthpctl_thp_off_subtree(const char *path, struct mthpctl_thp_off *t);

#endif
