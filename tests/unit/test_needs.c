// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The verdict of `mthpctl version` (src/needs.c): what is missing, once. */
#include <string.h>

#include "tests.h"
#include "needs.h"

/* The patched kernel in the VM: everything there. */
static struct mthpctl_have patched(void)
{
	struct mthpctl_have h = {
		.btf = true, .psi = true, .cgroup2 = true, .memcg = true, .bpffs = true,
	};

	h.feat.mthp_ops = h.feat.psi_kfunc = h.feat.memcg_kfuncs = h.feat.wq = true;
	return h;
}

/* The n needs found, by name, joined with ','. */
static const char *names(const struct mthpctl_have *h)
{
	static char buf[512];
	struct mthpctl_need out[MTHPCTL_NR_NEEDS + 1];
	int i, n;

	memset(out, 0, sizeof(out));
	n = mthpctl_missing(h, out);
	assert_in_range(n, 0, MTHPCTL_NR_NEEDS);
	assert_null(out[MTHPCTL_NR_NEEDS].what);	/* never past the room promised */
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		assert_non_null(out[i].fix);
		assert_true(strlen(out[i].fix) > 0);
		if (i)
			strcat(buf, ",");
		strcat(buf, out[i].what);
	}
	return buf;
}

static void nothing_missing(void **state)
{
	struct mthpctl_have h = patched();

	assert_string_equal(names(&h), "");
}

/* A stock kernel: the series is the one fix, not one per kfunc it brings. */
static void stock_kernel(void **state)
{
	struct mthpctl_have h = patched();

	h.feat.mthp_ops = h.feat.psi_kfunc = h.feat.memcg_kfuncs = false;
	assert_string_equal(names(&h), "bpf_mthp_ops");
}

/* No BTF: nothing it would show is reported as missing on its own. */
static void no_btf(void **state)
{
	struct mthpctl_have h = patched();

	h.btf = false;
	memset(&h.feat, 0, sizeof(h.feat));
	assert_string_equal(names(&h), "BTF");
	h.bpffs = false;
	assert_string_equal(names(&h), "BTF,bpffs");
}

/* The series built without PSI or MEMCG: each kfunc named. */
static void series_without_kfuncs(void **state)
{
	struct mthpctl_have h = patched();

	h.feat.psi_kfunc = false;
	assert_string_equal(names(&h), "kfunc bpf_cgroup_psi_stall");
	h.feat.memcg_kfuncs = false;
	h.psi = false;
	assert_string_equal(names(&h), "kfunc bpf_cgroup_psi_stall,kfunc bpf_get_mem_cgroup,PSI");
}

/* The memory controller is only judged where cgroup2 is mounted. */
static void mounts(void **state)
{
	struct mthpctl_have h = patched();

	h.memcg = false;
	assert_string_equal(names(&h), "memory controller in cgroup2");
	h.cgroup2 = false;
	assert_string_equal(names(&h), "cgroup2");
	h.bpffs = false;
	assert_string_equal(names(&h), "cgroup2,bpffs");
}

/* Everything missing at once fits the room the header promises. */
static void most_missing(void **state)
{
	struct mthpctl_have h = {
		.btf = true, .feat = { .mthp_ops = true }, .cgroup2 = true,
	};

	assert_string_equal(names(&h), "kfunc bpf_cgroup_psi_stall,kfunc bpf_get_mem_cgroup,"
				       "bpf_wq,PSI,memory controller in cgroup2,bpffs");
}

int run_needs_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_missing),
		cmocka_unit_test(stock_kernel),
		cmocka_unit_test(no_btf),
		cmocka_unit_test(series_without_kfuncs),
		cmocka_unit_test(mounts),
		cmocka_unit_test(most_missing),
	};

	return cmocka_run_group_tests_name("needs", tests, NULL, NULL);
}
