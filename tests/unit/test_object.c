// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* attach --object's pure part (src/object.c). */
#include <string.h>
#include <linux/bpf.h>
#include "tests.h"
#include "mthp_stats.h"
#include "object.h"

static char err[1024];

static int pick(const struct mthpctl_ops_map *m, size_t n, const char *want)
{
	err[0] = '\0';
	return mthpctl_pick_ops(m, n, want, "p.bpf.o", err, sizeof(err));
}

static void pick_one(void **state)
{
	const struct mthpctl_ops_map m[] = {
		{ "tcp", "tcp_congestion_ops", true },
		{ "mine", "bpf_mthp_ops", true },
	};

	/* the one bpf_mthp_ops map, with --ops or without */
	assert_int_equal(pick(m, 2, NULL), 1);
	assert_int_equal(pick(m, 2, "mine"), 1);
	/* a map of another type, named */
	assert_int_equal(pick(m, 2, "tcp"), -1);
	assert_string_equal(err, "map 'tcp' of p.bpf.o is a struct tcp_congestion_ops, not a struct "
			    "bpf_mthp_ops (name a bpf_mthp_ops map with --ops: mine)");
	/* a name the object does not have */
	assert_int_equal(pick(m, 2, "other"), -1);
	assert_string_equal(err, "p.bpf.o has no struct_ops map named 'other' (its bpf_mthp_ops maps: "
			    "mine; name one of them with --ops)");
}

static void pick_several(void **state)
{
	const struct mthpctl_ops_map m[] = {
		{ "small", "bpf_mthp_ops", true },
		{ "big", "bpf_mthp_ops", true },
		{ "old", "bpf_mthp_ops", false },
	};

	assert_int_equal(pick(m, 3, NULL), -1);
	assert_string_equal(err, "p.bpf.o has 3 bpf_mthp_ops maps (small, big, old): name the one to "
			    "attach with --ops");
	assert_int_equal(pick(m, 3, "small"), 0);
	assert_int_equal(pick(m, 3, "big"), 1);
	/* not in SEC(".struct_ops.link"): cannot be linked to a cgroup */
	assert_int_equal(pick(m, 3, "old"), -1);
	assert_string_equal(err, "map 'old' of p.bpf.o is in SEC(\".struct_ops\"); a policy is linked "
			    "to a cgroup: put it in SEC(\".struct_ops.link\")");
	assert_int_equal(pick(m + 2, 1, NULL), -1);
	assert_non_null(strstr(err, "put it in SEC(\".struct_ops.link\")"));
}

static void pick_none(void **state)
{
	const struct mthpctl_ops_map m[] = { { "tcp", "tcp_congestion_ops", true } };

	assert_int_equal(pick(m, 0, NULL), -1);
	assert_string_equal(err, "p.bpf.o has no struct_ops map of struct bpf_mthp_ops (declare one in "
			    "SEC(\".struct_ops.link\"): see mthp_ops.h)");
	assert_int_equal(pick(m, 1, NULL), -1);
	assert_non_null(strstr(err, "has no struct_ops map of struct bpf_mthp_ops"));
	assert_int_equal(pick(m, 1, "x"), -1);
	assert_string_equal(err, "p.bpf.o has no struct_ops map named 'x', nor any of struct "
			    "bpf_mthp_ops (declare one: see mthp_ops.h)");
}

static void stats_convention(void **state)
{
	struct mthpctl_map_desc d = {
		.name = "totals", .type = BPF_MAP_TYPE_PERCPU_ARRAY, .key_size = 4,
		.value_size = sizeof(struct mthpctl_totals), .max_entries = 1,
		.value_type = "mthpctl_totals",
	};
	struct mthpctl_map_desc x;

	assert_true(mthpctl_stats_convention(&d));
	/* the built-in policy's: a struct that starts with the totals */
	x = d; x.value_type = "mthpctl_percpu"; x.first_type = "mthpctl_totals";
	x.value_size += 64;
	assert_true(mthpctl_stats_convention(&x));
	/* a "totals" of something else is not read as counters */
	x = d; x.value_type = "my_counts"; x.first_type = "__u64";
	assert_false(mthpctl_stats_convention(&x));
	x = d; x.value_type = NULL;
	assert_false(mthpctl_stats_convention(&x));
	x = d; x.name = "stats";
	assert_false(mthpctl_stats_convention(&x));
	x = d; x.type = BPF_MAP_TYPE_ARRAY;
	assert_false(mthpctl_stats_convention(&x));
	x = d; x.key_size = 8;
	assert_false(mthpctl_stats_convention(&x));
	x = d; x.value_size = sizeof(struct mthpctl_totals) - 8;
	assert_false(mthpctl_stats_convention(&x));
	x = d; x.max_entries = 0;
	assert_false(mthpctl_stats_convention(&x));
}

static void record(void **state)
{
	static struct mthpctl_object_info i;
	static char longpath[sizeof(i.file) + 1];

	assert_int_equal(sizeof(i), 4096);
	assert_int_equal(mthpctl_object_info_fill(&i, "/usr/share/x.bpf.o", "ops", 7, 100, true), 0);
	assert_true(mthpctl_object_info_valid(&i));
	assert_int_equal(i.flags, MTHPCTL_OBJECT_STATS);
	assert_string_equal(i.file, "/usr/share/x.bpf.o");
	assert_int_equal(mthpctl_object_info_fill(&i, "/x", "ops", 7, 100, false), 0);
	assert_int_equal(i.flags, 0);
	/* what does not fit is refused, not cut */
	memset(longpath, 'a', sizeof(longpath) - 1);
	assert_int_equal(mthpctl_object_info_fill(&i, longpath, "ops", 0, 0, false), -1);
	longpath[sizeof(i.file) - 1] = '\0';
	assert_int_equal(mthpctl_object_info_fill(&i, longpath, "ops", 0, 0, false), 0);
	assert_true(mthpctl_object_info_valid(&i));
	/* damaged records */
	i.magic++;
	assert_false(mthpctl_object_info_valid(&i));
	assert_int_equal(mthpctl_object_info_fill(&i, "/x", "ops", 0, 0, false), 0);
	memset(i.ops, 'o', sizeof(i.ops));
	assert_false(mthpctl_object_info_valid(&i));
	memset(&i, 0, sizeof(i));
	i.magic = MTHPCTL_OBJECT_MAGIC;
	assert_false(mthpctl_object_info_valid(&i));	/* no file */
}

static void hashing(void **state)
{
	const char a[] = "0123456789abcdef!", b[] = "0123456789abcdeF!";
	char moved[sizeof(a) + 1];

	/* FNV-1a's offset basis for nothing, the length folded in */
	assert_true(mthpctl_hash_bytes(a, 0) == 0xcbf29ce484222325ULL);
	/* the bytes count, not where they are (another address, unaligned) */
	memcpy(moved + 1, a, sizeof(a));
	assert_true(mthpctl_hash_bytes(moved + 1, 17) == mthpctl_hash_bytes(a, 17));
	assert_true(mthpctl_hash_bytes(a, 17) != mthpctl_hash_bytes(b, 17));
	/* a tail shorter than a word counts, and so does the length */
	assert_true(mthpctl_hash_bytes(a, 17) != mthpctl_hash_bytes(a, 16));
	assert_true(mthpctl_hash_bytes("\0", 1) != mthpctl_hash_bytes("\0\0", 2));
}

static void object_hash_var(void **state)
{
	/* a .rodata of this build, and one of a build whose params grew */
	const struct mthpctl_sec_var now[] = {
		{ "params", 0, 48 }, { "page_shift", 48, 4 }, { "object_hash", 56, 8 },
		{ "cpu_slots_mask", 64, 4 },
	};
	const struct mthpctl_sec_var other[] = {
		{ "cpu_slots_mask", 0, 4 }, { "params", 8, 64 }, { "object_hash", 72, 8 },
	};
	const struct mthpctl_sec_var damaged[] = {
		{ NULL, 0, 8 }, { "object_hash", 8, 4 },
	};
	char id[MTHPCTL_OBJECT_ID_LEN];

	assert_int_equal(mthpctl_sec_var_find(now, 4, "object_hash", 8, 68), 56);
	assert_int_equal(mthpctl_sec_var_find(other, 3, "object_hash", 8, 80), 72);
	/* none, another size, or past the end of the value: not read */
	assert_int_equal(mthpctl_sec_var_find(now, 2, "object_hash", 8, 68), -1);
	assert_int_equal(mthpctl_sec_var_find(damaged, 2, "object_hash", 8, 64), -1);
	assert_int_equal(mthpctl_sec_var_find(other, 3, "object_hash", 8, 79), -1);
	assert_int_equal(mthpctl_sec_var_find(other, 3, "object_hash", 8, 64), -1);
	mthpctl_object_id(id, 0x00c0ffee12345678ULL);
	assert_string_equal(id, "00c0ffee12345678");
	mthpctl_object_id(id, ~0ULL);
	assert_string_equal(id, "ffffffffffffffff");
}

int run_object_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(pick_one),
		cmocka_unit_test(pick_several),
		cmocka_unit_test(pick_none),
		cmocka_unit_test(stats_convention),
		cmocka_unit_test(record),
		cmocka_unit_test(hashing),
		cmocka_unit_test(object_hash_var),
	};

	return cmocka_run_group_tests_name("object", t, NULL, NULL);
}
