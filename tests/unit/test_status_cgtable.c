// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The cgroup table status builds in one walk (src/cgroup.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tests.h"
#include "cgroup.h"

static __u64 ino(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void table(void **state)
{
	char base[] = "/tmp/mthpctl-cgt-XXXXXX", p[6][512];
	static const char *const rel[] = { "a", "a/b", "a-x", "a/b/c" };
	struct mthpctl_cg_table t;
	size_t i;
	int fd;

	assert_non_null(mkdtemp(base));
	for (i = 0; i < 4; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/%s", base, rel[i]);
		assert_int_equal(mkdir(p[i], 0755), 0);
	}
	snprintf(p[4], sizeof(p[4]), "%s/a/memory.stat", base);	/* a file: skipped */
	fd = open(p[4], O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);

	assert_int_equal(mthpctl_cgroup_table_build(base, &t), 0);
	assert_int_equal(t.n, 5);	/* base and four directories */
	for (i = 1; i < t.n; i++)
		assert_true(t.e[i - 1].id < t.e[i].id);	/* sorted by id */
	assert_string_equal(mthpctl_cgroup_table_find(&t, ino(base)), base);
	for (i = 0; i < 4; i++)
		assert_string_equal(mthpctl_cgroup_table_find(&t, ino(p[i])), p[i]);
	assert_null(mthpctl_cgroup_table_find(&t, ino(p[4])));
	mthpctl_cgroup_table_free(&t);
	assert_int_equal(t.n, 0);

	/* a subtree root, given with a trailing slash */
	snprintf(p[5], sizeof(p[5]), "%s/a/", base);
	assert_int_equal(mthpctl_cgroup_table_build(p[5], &t), 0);
	assert_int_equal(t.n, 3);	/* a, a/b, a/b/c */
	assert_string_equal(mthpctl_cgroup_table_find(&t, ino(p[0])), p[0]);
	assert_null(mthpctl_cgroup_table_find(&t, ino(p[2])));
	mthpctl_cgroup_table_free(&t);

	assert_int_equal(mthpctl_cgroup_table_build("/nonexistent-mthpctl", &t), -ENOENT);

	unlink(p[4]);
	rmdir(p[3]);
	rmdir(p[1]);
	rmdir(p[0]);
	rmdir(p[2]);
	rmdir(base);
}

int run_status_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(table),
	};
	return cmocka_run_group_tests_name("status", t, NULL, NULL);
}
