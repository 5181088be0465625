// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Runs every group; each prints cmocka's summary. Exit status: failures. */
#include "tests.h"

int main(void)
{
	int failed = 0;

	failed += run_parse_tests();
	failed += run_json_tests();
	failed += run_sysfs_tests();
	failed += run_cgroup_tests();
	failed += run_pin_tests();
	failed += run_policy_tests();
	failed += run_bench_tests();
	failed += run_bench_rounds_tests();
	failed += run_interval_tests();
	failed += run_status_tests();
	failed += run_needs_tests();
	failed += run_apply_tests();
	failed += run_object_tests();
	return failed ? 1 : 0;
}
