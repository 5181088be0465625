// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include "tests.h"
#include "parse.h"

static void size_units(void **state)
{
	__u64 v;

	assert_int_equal(mthpctl_parse_size("0", &v), 0); assert_true(v == 0);
	assert_int_equal(mthpctl_parse_size("4096", &v), 0); assert_true(v == 4096);
	assert_int_equal(mthpctl_parse_size("64K", &v), 0); assert_true(v == 65536);
	assert_int_equal(mthpctl_parse_size("64k", &v), 0); assert_true(v == 65536);
	assert_int_equal(mthpctl_parse_size("64KiB", &v), 0); assert_true(v == 65536);
	assert_int_equal(mthpctl_parse_size("16M", &v), 0); assert_true(v == 16ULL << 20);
	assert_int_equal(mthpctl_parse_size("2MB", &v), 0); assert_true(v == 2ULL << 20);
	assert_int_equal(mthpctl_parse_size("1G", &v), 0); assert_true(v == 1ULL << 30);
	assert_int_equal(mthpctl_parse_size("3T", &v), 0); assert_true(v == 3ULL << 40);
	assert_int_equal(mthpctl_parse_size("12B", &v), 0); assert_true(v == 12);
}

static void size_errors(void **state)
{
	__u64 v = 42;

	assert_int_equal(mthpctl_parse_size("", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size(NULL, &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("-1", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("+1", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size(" 1M", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("1M ", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("M", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("1.3B", &v), -EINVAL);	/* not whole bytes */
	assert_int_equal(mthpctl_parse_size("1.M", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size(".5M", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("1.5.5M", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("1.0000000001G", &v), -EINVAL);	/* > 9 digits */
	assert_int_equal(mthpctl_parse_size("16777215.5T", &v), 0);
	assert_true(v == ~0ULL - (1ULL << 39) + 1);
	assert_int_equal(mthpctl_parse_size("1.5M", &v), 0);
	assert_true(v == 1572864);
	assert_int_equal(mthpctl_parse_size("0.5K", &v), 0);
	assert_true(v == 512);
	assert_int_equal(mthpctl_parse_size("2.00G", &v), 0);
	assert_true(v == 2ULL << 30);
	assert_int_equal(mthpctl_parse_size("16X", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("16MM", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("0x10", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("18446744073709551615", &v), 0);
	assert_true(v == ~0ULL);
	assert_int_equal(mthpctl_parse_size("18446744073709551616", &v), -ERANGE);
	assert_int_equal(mthpctl_parse_size("99999999999999999999999", &v), -ERANGE);
	assert_int_equal(mthpctl_parse_size("16777216T", &v), -ERANGE);
	assert_int_equal(mthpctl_parse_size("16777215T", &v), 0);
}

static void duration_units(void **state)
{
	__u64 v;

	assert_int_equal(mthpctl_parse_duration("100ms", &v), 0); assert_true(v == 100000000ULL);
	assert_int_equal(mthpctl_parse_duration("1s", &v), 0); assert_true(v == 1000000000ULL);
	assert_int_equal(mthpctl_parse_duration("250us", &v), 0); assert_true(v == 250000ULL);
	assert_int_equal(mthpctl_parse_duration("7ns", &v), 0); assert_true(v == 7);
	assert_int_equal(mthpctl_parse_duration("2min", &v), 0); assert_true(v == 120000000000ULL);
	assert_int_equal(mthpctl_parse_duration("0ms", &v), 0); assert_true(v == 0);
	/* nine fraction digits times a large unit pass 2^64 on the way (they
	 * were refused as out of range) */
	assert_int_equal(mthpctl_parse_duration("1.999999999min", &v), 0);
	assert_true(v == 119999999940ULL);
	assert_int_equal(mthpctl_parse_size("0.998046875T", &v), 0);
	assert_true(v == 511ULL << 31);
	assert_int_equal(mthpctl_parse_size("0.998046876T", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_size("16777215.998046875T", &v), 0);
	assert_true(v == (16777215ULL << 40) + (511ULL << 31));
}

static void duration_errors(void **state)
{
	__u64 v;

	assert_int_equal(mthpctl_parse_duration("100", &v), -EINVAL);	/* unit required */
	assert_int_equal(mthpctl_parse_duration("", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("-1s", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("1.5ns", &v), -EINVAL);	/* not whole ns */
	assert_int_equal(mthpctl_parse_duration("1.s", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("1,5s", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("1.5s", &v), 0);
	assert_true(v == 1500000000ULL);
	assert_int_equal(mthpctl_parse_duration("0.25ms", &v), 0);
	assert_true(v == 250000ULL);
	assert_int_equal(mthpctl_parse_duration("1.000000001s", &v), 0);
	assert_true(v == 1000000001ULL);
	assert_int_equal(mthpctl_parse_duration("1S", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("1 s", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("ms", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("1h", &v), -EINVAL);
	assert_int_equal(mthpctl_parse_duration("18446744073709551615s", &v), -ERANGE);
	assert_int_equal(mthpctl_parse_duration("307445734561min", &v), -ERANGE);
}

static void formatting(void **state)
{
	char b[32];

	assert_string_equal(mthpctl_format_size(16ULL << 20, b, sizeof(b)), "16M");
	assert_string_equal(mthpctl_format_size(65536, b, sizeof(b)), "64K");
	assert_string_equal(mthpctl_format_size(1536, b, sizeof(b)), "1536");
	assert_string_equal(mthpctl_format_size(0, b, sizeof(b)), "0");
	assert_string_equal(mthpctl_format_size(1ULL << 30, b, sizeof(b)), "1G");
	assert_string_equal(mthpctl_format_duration(100000000ULL, b, sizeof(b)), "100ms");
	assert_string_equal(mthpctl_format_duration(1000000000ULL, b, sizeof(b)), "1s");
	assert_string_equal(mthpctl_format_duration(1500000000ULL, b, sizeof(b)), "1500ms");
	assert_string_equal(mthpctl_format_duration(120000000000ULL, b, sizeof(b)), "2min");
	assert_string_equal(mthpctl_format_duration(7, b, sizeof(b)), "7ns");
	assert_string_equal(mthpctl_format_duration(0, b, sizeof(b)), "0ns");
}

static void orders(void **state)
{
	assert_int_equal(mthpctl_size_to_order(4096, 4096), 0);
	assert_int_equal(mthpctl_size_to_order(16384, 4096), 2);
	assert_int_equal(mthpctl_size_to_order(2ULL << 20, 4096), 9);
	assert_int_equal(mthpctl_size_to_order(1ULL << 30, 4096), 18);
	assert_int_equal(mthpctl_size_to_order(12288, 4096), -EINVAL);
	assert_int_equal(mthpctl_size_to_order(2048, 4096), -EINVAL);
	assert_int_equal(mthpctl_size_to_order(0, 4096), -EINVAL);
	assert_int_equal(mthpctl_size_to_order(4096, 0), -EINVAL);
	assert_int_equal(mthpctl_size_to_order(1ULL << 63, 4096), 51);
}

int run_parse_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(size_units), cmocka_unit_test(size_errors),
		cmocka_unit_test(duration_units), cmocka_unit_test(duration_errors),
		cmocka_unit_test(formatting), cmocka_unit_test(orders),
	};
	return cmocka_run_group_tests_name("parse", t, NULL, NULL);
}
