// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests.h"
#include "sysfs.h"

static void psi_ok(void **state)
{
	struct mthpctl_psi p;

	assert_int_equal(mthpctl_parse_psi(
		"some avg10=1.50 avg60=0.25 avg300=100.00 total=123456\n"
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=42\n", &p), 0);
	assert_true(p.some.present && p.full.present);
	assert_int_equal(p.some.avg10, 150);
	assert_int_equal(p.some.avg60, 25);
	assert_int_equal(p.some.avg300, 10000);
	assert_true(p.some.total_us == 123456);
	assert_true(p.full.total_us == 42);
	/* cpu.pressure on older kernels has only "some", no trailing newline */
	assert_int_equal(mthpctl_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=0", &p), 0);
	assert_true(p.some.present && !p.full.present);
}

static void psi_bad(void **state)
{
	struct mthpctl_psi p;

	assert_int_equal(mthpctl_parse_psi("", &p), -EINVAL);
	assert_int_equal(mthpctl_parse_psi("half avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &p), -EINVAL);
	assert_int_equal(mthpctl_parse_psi("some avg10=x avg60=0.00 avg300=0.00 total=0\n", &p), -EINVAL);
	assert_int_equal(mthpctl_parse_psi("some avg10=0.00 avg60=0.00 total=0\n", &p), -EINVAL);
	assert_int_equal(mthpctl_parse_psi("some avg10=0.0 avg60=0.00 avg300=0.00 total=0\n", &p), -EINVAL);
	assert_int_equal(mthpctl_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n", &p), -EINVAL);
	assert_int_equal(mthpctl_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=1 junk\n", &p), -EINVAL);
}

static const char memstat[] =
	"anon 1048576\nfile 2097152\nkernel 0\nshmem 4096\nanon_thp 0\n"
	"file_mapped 0\nshmem_thp 0\nsome_anon 7\n";

static void stat_keys(void **state)
{
	__u64 v;

	assert_int_equal(mthpctl_stat_get(memstat, "anon", &v), 0); assert_true(v == 1048576);
	assert_int_equal(mthpctl_stat_get(memstat, "shmem", &v), 0); assert_true(v == 4096);
	assert_int_equal(mthpctl_stat_get(memstat, "anon_thp", &v), 0); assert_true(v == 0);
	assert_int_equal(mthpctl_stat_get(memstat, "some_anon", &v), 0); assert_true(v == 7);
	assert_int_equal(mthpctl_stat_get(memstat, "ano", &v), -ENOENT);
	assert_int_equal(mthpctl_stat_get(memstat, "missing", &v), -ENOENT);
	assert_int_equal(mthpctl_stat_get("", "anon", &v), -ENOENT);
	assert_int_equal(mthpctl_stat_get("anon x\n", "anon", &v), -ENOENT);
	assert_int_equal(mthpctl_stat_get("anon 5", "anon", &v), 0); assert_true(v == 5);
}

static void bracketed(void **state)
{
	char b[16];

	assert_int_equal(mthpctl_parse_bracketed("always inherit [madvise] never\n", b, sizeof(b)), 0);
	assert_string_equal(b, "madvise");
	assert_int_equal(mthpctl_parse_bracketed("[always] never", b, sizeof(b)), 0);
	assert_string_equal(b, "always");
	assert_int_equal(mthpctl_parse_bracketed("always never", b, sizeof(b)), -EINVAL);
	assert_int_equal(mthpctl_parse_bracketed("[] never", b, sizeof(b)), -EINVAL);
	assert_int_equal(mthpctl_parse_bracketed("[always", b, sizeof(b)), -EINVAL);
	assert_int_equal(mthpctl_parse_bracketed("[abcdefghijklmnopq]", b, sizeof(b)), -EINVAL);
}

/* A size resolving to "never" is the one no policy can have */
static void size_usable(void **state)
{
	(void)state;
	assert_true(mthpctl_size_usable("always", "never"));
	assert_true(mthpctl_size_usable("madvise", "never"));
	assert_false(mthpctl_size_usable("never", "always"));
	assert_true(mthpctl_size_usable("inherit", "always"));
	assert_true(mthpctl_size_usable("inherit", "madvise"));
	assert_false(mthpctl_size_usable("inherit", "never"));
	assert_false(mthpctl_size_usable("inherit", ""));
}

/* The host's sizes by setting: inherit resolved, 8K (no "enabled": not
 * an anonymous size) left out, each size in exactly one mask. */
static void host_sizes(void **state)
{
	struct mthpctl_hp_size hp[5] = {
		{ .size_kb = 8 },
		{ .size_kb = 16, .has_enabled = true, .enabled = "inherit" },
		{ .size_kb = 64, .has_enabled = true, .enabled = "always" },
		{ .size_kb = 1024, .has_enabled = true, .enabled = "never" },
		{ .size_kb = 2048, .has_enabled = true, .enabled = "madvise" },
	};
	struct mthpctl_host_sizes h;

	(void)state;
	if (mthpctl_page_size() != 4096)
		skip();
	mthpctl_host_sizes_of(hp, 5, "madvise", &h);
	assert_true(h.always == 1ULL << 4);
	assert_true(h.madvise == (1ULL << 2 | 1ULL << 9));
	assert_true(h.never == 1ULL << 8);
	mthpctl_host_sizes_of(hp, 5, "never", &h);
	assert_true(h.never == (1ULL << 2 | 1ULL << 8) && h.madvise == 1ULL << 9);
	mthpctl_host_sizes_of(hp, 0, "always", &h);
	assert_true(!h.always && !h.madvise && !h.never);
}

static void dirnames(void **state)
{
	__u64 kb;

	assert_int_equal(mthpctl_parse_hp_dirname("hugepages-2048kB", &kb), 0); assert_true(kb == 2048);
	assert_int_equal(mthpctl_parse_hp_dirname("hugepages-8kB", &kb), 0); assert_true(kb == 8);
	assert_int_equal(mthpctl_parse_hp_dirname("hugepages-kB", &kb), -EINVAL);
	assert_int_equal(mthpctl_parse_hp_dirname("hugepages-0kB", &kb), -EINVAL);
	assert_int_equal(mthpctl_parse_hp_dirname("hugepages-16MB", &kb), -EINVAL);
	assert_int_equal(mthpctl_parse_hp_dirname("hugepages-16kB.bak", &kb), -EINVAL);
	assert_int_equal(mthpctl_parse_hp_dirname("enabled", &kb), -EINVAL);
}

static void put(const char *dir, const char *name, const char *content)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void sub(char *out, const char *a, const char *b)
{
	snprintf(out, 512, "%s/%s", a, b);
	assert_int_equal(mkdir(out, 0755), 0);
}

static void hugepages_tree(void **state)
{
	char base[] = "/tmp/mthpctl-test-XXXXXX", d[512], s[512];
	struct mthpctl_hp_size *v;
	int n;

	assert_non_null(mkdtemp(base));
	put(base, "enabled", "always [madvise] never\n");
	sub(d, base, "hugepages-2048kB");
	put(d, "enabled", "always inherit [madvise] never\n");
	sub(s, d, "stats");
	put(s, "anon_fault_alloc", "12\n");
	put(s, "anon_fault_fallback", "3\n");
	put(s, "junk", "notanumber\n");
	sub(d, base, "hugepages-16kB");
	put(d, "enabled", "always inherit madvise [never]\n");
	sub(d, base, "hugepages-8kB");		/* no enabled, no stats */
	sub(d, base, "hugepages-bogus");	/* ignored */
	sub(d, base, "khugepaged");

	n = mthpctl_scan_hugepages(base, &v);
	assert_int_equal(n, 3);
	assert_true(v[0].size_kb == 8);
	assert_false(v[0].has_enabled);
	assert_int_equal(v[0].nr_stats, 0);
	assert_true(v[1].size_kb == 16);
	assert_true(v[1].has_enabled);
	assert_string_equal(v[1].enabled, "never");
	assert_true(v[2].size_kb == 2048);
	assert_string_equal(v[2].enabled, "madvise");
	assert_int_equal(v[2].nr_stats, 2);
	assert_string_equal(v[2].stats[0].name, "anon_fault_alloc");
	assert_true(v[2].stats[0].value == 12);
	assert_string_equal(v[2].stats[1].name, "anon_fault_fallback");
	free(v);

	assert_int_equal(mthpctl_scan_hugepages("/nonexistent/mthpctl", &v), -ENOENT);
	assert_null(v);
	snprintf(d, sizeof(d), "rm -rf '%s'", base);
	assert_int_equal(system(d), 0);
}

static void read_file(void **state)
{
	char buf[4];

	assert_true(mthpctl_read_file("/nonexistent/x", buf, sizeof(buf)) == -ENOENT);
	assert_true(mthpctl_read_file("/proc/self/stat", buf, sizeof(buf)) == 3);
	assert_int_equal(strlen(buf), 3);
}

static void status_field(void **state)
{
	const char *st = "Name:\tredis-server\nRssAnon:\t  2304 kB\nXRss:\t1\n";

	assert_string_equal(mthpctl_status_field(st, "Name"), "redis-server\nRssAnon:\t  2304 kB\nXRss:\t1\n");
	assert_int_equal(strtoull(mthpctl_status_field(st, "RssAnon"), NULL, 10), 2304);
	/* a key matches whole, at the start of a line */
	assert_null(mthpctl_status_field(st, "Rss"));
	assert_null(mthpctl_status_field(st, "Anon"));
	assert_null(mthpctl_status_field("", "Name"));
}

int run_sysfs_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(psi_ok), cmocka_unit_test(psi_bad),
		cmocka_unit_test(stat_keys), cmocka_unit_test(bracketed),
		cmocka_unit_test(dirnames), cmocka_unit_test(hugepages_tree),
		cmocka_unit_test(size_usable), cmocka_unit_test(host_sizes),
		cmocka_unit_test(read_file), cmocka_unit_test(status_field),
	};
	return cmocka_run_group_tests_name("sysfs", t, NULL, NULL);
}
