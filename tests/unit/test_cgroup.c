// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "tests.h"
#include "cgroup.h"
#include "sysfs.h"

/* A fake file system: a few paths with their type and file-system magic. */
static const struct fake {
	const char *path;
	mode_t mode;
	unsigned long magic;
	ino_t ino;
} fakes[] = {
	{ "/sys/fs/cgroup", S_IFDIR, MTHPCTL_CGROUP2_MAGIC, 1 },
	{ "/sys/fs/cgroup/redis", S_IFDIR, MTHPCTL_CGROUP2_MAGIC, 4242 },
	{ "/sys/fs/cgroup/redis/memory.max", S_IFREG, MTHPCTL_CGROUP2_MAGIC, 4243 },
	{ "/sys/fs/cgroup/memory/app", S_IFDIR, MTHPCTL_CGROUP1_MAGIC, 77 },
	{ "/tmp", S_IFDIR, MTHPCTL_TMPFS_MAGIC, 99 },
	{ "/sys/fs/cgroup/secret", S_IFDIR, MTHPCTL_CGROUP2_MAGIC, 5 },
};

static const struct fake *find(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(fakes) / sizeof(fakes[0]); i++)
		if (!strcmp(fakes[i].path, path))
			return &fakes[i];
	return NULL;
}

static int fake_stat(const char *path, struct stat *st)
{
	const struct fake *f = find(path);

	if (!f) {
		errno = ENOENT;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->st_mode = f->mode;
	st->st_ino = f->ino;
	return 0;
}

static int fake_statfs(const char *path, struct statfs *s)
{
	const struct fake *f = find(path);

	if (!strcmp(path, "/sys/fs/cgroup/secret")) {
		errno = EACCES;
		return -1;
	}
	memset(s, 0, sizeof(*s));
	s->f_type = f->magic;
	return 0;
}

static const struct mthpctl_fsops fake_ops = { fake_stat, fake_statfs };

static void check_paths(void **state)
{
	__u64 id = 0;
	int e;

	assert_int_equal(mthpctl_cgroup_check("/sys/fs/cgroup/redis", &fake_ops, &id, &e), MTHPCTL_CG_OK);
	assert_true(id == 4242);
	assert_int_equal(mthpctl_cgroup_check("/sys/fs/cgroup", &fake_ops, &id, &e), MTHPCTL_CG_OK);
	assert_true(id == 1);
	assert_int_equal(mthpctl_cgroup_check("/sys/fs/cgroup/nope", &fake_ops, &id, &e), MTHPCTL_CG_MISSING);
	assert_int_equal(e, ENOENT);
	assert_int_equal(mthpctl_cgroup_check("", &fake_ops, &id, &e), MTHPCTL_CG_EMPTY);
	assert_int_equal(mthpctl_cgroup_check(NULL, &fake_ops, &id, &e), MTHPCTL_CG_EMPTY);
	assert_int_equal(mthpctl_cgroup_check("/sys/fs/cgroup/redis/memory.max", &fake_ops, &id, &e), MTHPCTL_CG_NOT_DIR);
	assert_int_equal(mthpctl_cgroup_check("/sys/fs/cgroup/memory/app", &fake_ops, &id, &e), MTHPCTL_CG_V1);
	assert_int_equal(mthpctl_cgroup_check("/tmp", &fake_ops, &id, &e), MTHPCTL_CG_NOT_CGROUP);
	assert_int_equal(mthpctl_cgroup_check("/sys/fs/cgroup/secret", &fake_ops, &id, &e), MTHPCTL_CG_ERROR);
	assert_int_equal(e, EACCES);
	assert_non_null(strstr(mthpctl_cgroup_strerror(MTHPCTL_CG_V1), "cgroup2"));
	{
		char buf[256];

		/* no empty name in the message */
		assert_string_equal(mthpctl_cgroup_describe("", MTHPCTL_CG_EMPTY, 0, buf, sizeof(buf)),
				    "the cgroup path is empty (give a cgroup2 directory, e.g. "
				    "/sys/fs/cgroup/NAME)");
		assert_string_equal(mthpctl_cgroup_describe("/x", MTHPCTL_CG_ERROR, EACCES, buf,
							     sizeof(buf)), "/x Permission denied");
		assert_non_null(strstr(mthpctl_cgroup_describe("/x", MTHPCTL_CG_MISSING, 0, buf,
								sizeof(buf)), "/x does not exist"));
	}
}

static void real_fs(void **state)
{
	__u64 id;
	int e;

	/* /proc is neither cgroup v1 nor v2 */
	assert_int_equal(mthpctl_cgroup_check("/proc", &mthpctl_real_fsops, &id, &e), MTHPCTL_CG_NOT_CGROUP);
	assert_int_equal(mthpctl_cgroup_check("/proc/self/stat", &mthpctl_real_fsops, &id, &e), MTHPCTL_CG_NOT_DIR);
}

static const char mountinfo[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"25 22 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
	"26 25 0:23 / /sys/fs/cgroup ro shared:8 - tmpfs tmpfs ro,mode=755\n"
	"27 26 0:24 / /sys/fs/cgroup/unified rw shared:9 - cgroup2x cgroup2 rw\n"
	"28 26 0:25 / /sys/fs/cgroup/memory rw shared:10 - cgroup cgroup rw,memory\n"
	"29 26 0:26 / /sys/fs/cgroup/my\\040unified rw shared:11 - cgroup2 cgroup2 rw,nsdelegate\n"
	"30 25 0:27 / /sys/fs/bpf rw shared:12 - bpf bpf rw\n";

static void mounts(void **state)
{
	char out[256];

	assert_int_equal(mthpctl_find_mount(mountinfo, "cgroup2", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/my unified");
	assert_int_equal(mthpctl_find_mount(mountinfo, "bpf", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/bpf");
	assert_int_equal(mthpctl_find_mount(mountinfo, "cgroup", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/memory");
	assert_int_equal(mthpctl_find_mount(mountinfo, "xfs", out, sizeof(out)), -ENOENT);
	assert_int_equal(mthpctl_find_mount("", "cgroup2", out, sizeof(out)), -ENOENT);
	assert_int_equal(mthpctl_find_mount("garbage line\n", "cgroup2", out, sizeof(out)), -ENOENT);
	/* a mount point that does not fit is refused, not cut short (fuzz) */
	assert_int_equal(mthpctl_find_mount(mountinfo, "bpf", out, 11), -ENAMETOOLONG);
	assert_string_equal(out, "");
	assert_int_equal(mthpctl_find_mount(mountinfo, "bpf", out, 12), 0);
	assert_string_equal(out, "/sys/fs/bpf");
	assert_int_equal(mthpctl_find_mount(mountinfo, "cgroup2", out, 25), -ENAMETOOLONG);
	assert_int_equal(mthpctl_find_mount(mountinfo, "cgroup2", out, 26), 0);
	assert_string_equal(out, "/sys/fs/cgroup/my unified");
}

static void words(void **state)
{
	assert_true(mthpctl_has_word("cpuset cpu io memory hugetlb pids\n", "memory"));
	assert_true(mthpctl_has_word("memory", "memory"));
	assert_false(mthpctl_has_word("cpuset cpu io hugetlb pids\n", "memory"));
	assert_false(mthpctl_has_word("nomemory memoryx", "memory"));
	assert_false(mthpctl_has_word("", "memory"));
}

static void path_by_id(void **state)
{
	char base[] = "/tmp/mthpctl-cg-XXXXXX", d[512], out[512];
	struct stat st;

	assert_non_null(mkdtemp(base));
	snprintf(d, sizeof(d), "%s/a", base); assert_int_equal(mkdir(d, 0755), 0);
	snprintf(d, sizeof(d), "%s/a/b", base); assert_int_equal(mkdir(d, 0755), 0);
	assert_int_equal(stat(d, &st), 0);
	assert_int_equal(mthpctl_cgroup_path_by_id(base, st.st_ino, out, sizeof(out)), 0);
	assert_string_equal(out, d);
	assert_int_equal(mthpctl_cgroup_path_by_id(base, 1, out, sizeof(out)), -ENOENT);
	assert_int_equal(mthpctl_cgroup_path_by_id(base, st.st_ino, out, 4), -ENAMETOOLONG);
	rmdir(d);
	snprintf(d, sizeof(d), "%s/a", base); rmdir(d);
	rmdir(base);
}

static void thp_enabled(void **state)
{
	char name[16];

	assert_int_equal(mthpctl_proc_thp_enabled("Name:\tredis-server\nUmask:\t0022\n"
						  "THP_enabled:\t0\nuntag_mask:\t0x0\n",
						  name, sizeof(name)), 0);
	assert_string_equal(name, "redis-server");
	assert_int_equal(mthpctl_proc_thp_enabled("Name:\tsh\nTHP_enabled:\t1\n", name, sizeof(name)), 1);
	assert_string_equal(name, "sh");
	/* the last line, without its newline */
	assert_int_equal(mthpctl_proc_thp_enabled("THP_enabled: 0", name, sizeof(name)), 0);
	assert_string_equal(name, "");
	/* a kernel without the line; junk; a name cut to fit */
	assert_int_equal(mthpctl_proc_thp_enabled("Name:\tsh\nState:\tS\n", name, sizeof(name)), -ENOENT);
	assert_int_equal(mthpctl_proc_thp_enabled("THP_enabled:\t01\n", NULL, 0), -ENOENT);
	assert_int_equal(mthpctl_proc_thp_enabled("XTHP_enabled:\t0\n", NULL, 0), -ENOENT);
	assert_int_equal(mthpctl_proc_thp_enabled("Name:\tabcdefgh\nTHP_enabled:\t1\n", name, 4), 1);
	assert_string_equal(name, "abc");
}

/* A directory with a cgroup.procs of this process and of a child with
 * PR_SET_THP_DISABLE (and a pid that does not exist) counts one of two. */
static void thp_off_count(void **state)
{
	char base[] = "/tmp/mthpctl-cg-XXXXXX", f[600], buf[128];
	struct mthpctl_thp_off t = {};
	int p[2], fd;
	pid_t child;
	FILE *out;

	assert_non_null(mkdtemp(base));
	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		char c;

		close(p[1]);
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
		prctl(PR_SET_NAME, "thp-off-child", 0, 0, 0);
		_exit(read(p[0], &c, 1) < 0);
	}
	close(p[0]);
	/* the child's prctl before its status is read */
	for (int i = 0; i < 1000; i++) {
		snprintf(f, sizeof(f), "/proc/%d/status", (int)child);
		if (mthpctl_read_file(f, buf, sizeof(buf)) > 0 &&
		    strstr(buf, "thp-off-child"))
			break;
		usleep(1000);
	}
	snprintf(f, sizeof(f), "%s/cgroup.procs", base);
	out = fopen(f, "w");
	assert_non_null(out);
	fprintf(out, "%d\n%d\n999999999\n", (int)getpid(), (int)child);
	fclose(out);
	fd = open(base, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	mthpctl_thp_off_count_at(fd, &t);
	close(fd);
	close(p[1]);
	waitpid(child, NULL, 0);
	unlink(f);
	rmdir(base);
	assert_int_equal(t.procs, 2);
	assert_int_equal(t.disabled, 1);
	assert_int_equal(t.pid, (int)child);
	assert_string_equal(t.name, "thp-off-child");
}

int run_cgroup_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(check_paths), cmocka_unit_test(real_fs),
		cmocka_unit_test(mounts), cmocka_unit_test(words),
		cmocka_unit_test(path_by_id), cmocka_unit_test(thp_enabled),
		cmocka_unit_test(thp_off_count),
	};
	return cmocka_run_group_tests_name("cgroup", t, NULL, NULL);
}
