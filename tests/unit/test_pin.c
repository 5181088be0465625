// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include "tests.h"
#include "pin.h"

static void naming(void **state)
{
	char b[128];

	assert_int_equal(mthpctl_pin_dir(MTHPCTL_PIN_ROOT, 4242, NULL, b, sizeof(b)), 0);
	assert_string_equal(b, "/sys/fs/bpf/mthpctl/cg-4242");
	assert_int_equal(mthpctl_pin_dir("/r", 18446744073709551615ULL, "_new", b, sizeof(b)), 0);
	assert_string_equal(b, "/r/cg-18446744073709551615_new");
	assert_int_equal(mthpctl_pin_dir("/r", 1, NULL, b, 6), -ENAMETOOLONG);
	assert_int_equal(mthpctl_pin_path("/r/cg-1", "link", b, sizeof(b)), 0);
	assert_string_equal(b, "/r/cg-1/link");
	assert_int_equal(mthpctl_pin_path("/r/cg-1", "totals", b, sizeof(b)), 0);
	assert_string_equal(b, "/r/cg-1/totals");
	assert_int_equal(mthpctl_pin_path("/r/cg-1", "object", b, sizeof(b)), 0);
	assert_string_equal(b, "/r/cg-1/object");
	assert_int_equal(mthpctl_pin_path("/r/cg-1", "bogus", b, sizeof(b)), -EINVAL);
	assert_int_equal(mthpctl_pin_path("/r/cg-1", "link", b, 8), -ENAMETOOLONG);
}

static void parsing(void **state)
{
	__u64 id;

	assert_int_equal(mthpctl_pin_parse("cg-4242", &id), 0); assert_true(id == 4242);
	assert_int_equal(mthpctl_pin_parse("cg-18446744073709551615", &id), 0);
	assert_true(id == 18446744073709551615ULL);
	assert_int_equal(mthpctl_pin_parse("cg-18446744073709551616", &id), -EINVAL);
	assert_int_equal(mthpctl_pin_parse("cg-0", &id), -EINVAL);
	assert_int_equal(mthpctl_pin_parse("cg-012", &id), -EINVAL);
	assert_int_equal(mthpctl_pin_parse("cg-", &id), -EINVAL);
	assert_int_equal(mthpctl_pin_parse("cg-12x", &id), -EINVAL);
	assert_int_equal(mthpctl_pin_parse("cg-12_new", &id), -EINVAL);
	assert_int_equal(mthpctl_pin_parse("link", &id), -EINVAL);
	assert_true(mthpctl_pin_is_leftover("cg-12_new"));
	assert_true(mthpctl_pin_is_leftover("cg-12_old"));
	assert_false(mthpctl_pin_is_leftover("cg-12"));
	assert_false(mthpctl_pin_is_leftover("cg-12_"));
	assert_false(mthpctl_pin_is_leftover("xx-12_new"));
}

int run_pin_tests(void)
{
	const struct CMUnitTest t[] = { cmocka_unit_test(naming), cmocka_unit_test(parsing) };
	return cmocka_run_group_tests_name("pin", t, NULL, NULL);
}
