// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include "tests.h"
#include "json.h"

static char *render(bool pretty, void (*fn)(struct jw *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jw w;

	jw_init(&w, f, pretty);
	fn(&w);
	fclose(f);
	return buf;
}

static void doc(struct jw *w)
{
	jw_obj_open(w);
	jw_kstr(w, "name", "a\"b\\c\n\t\x01");
	jw_ku64(w, "big", 18446744073709551615ULL);
	jw_ks64(w, "neg", -5);
	jw_kbool(w, "ok", true);
	jw_key(w, "none"); jw_null(w);
	jw_key(w, "list"); jw_arr_open(w); jw_u64(w, 1); jw_str(w, "x");
	jw_obj_open(w); jw_obj_close(w); jw_arr_close(w);
	jw_key(w, "empty"); jw_arr_open(w); jw_arr_close(w);
	jw_key(w, "null_str"); jw_str(w, NULL);
	jw_kdouble(w, "d", 0.5);
	jw_obj_close(w);
}

static void compact(void **state)
{
	char *s = render(false, doc);

	assert_string_equal(s,
		"{\"name\":\"a\\\"b\\\\c\\n\\t\\u0001\",\"big\":18446744073709551615,"
		"\"neg\":-5,\"ok\":true,\"none\":null,\"list\":[1,\"x\",{}],"
		"\"empty\":[],\"null_str\":null,\"d\":0.5}\n");
	free(s);
}

static void small(struct jw *w)
{
	jw_obj_open(w);
	jw_ku64(w, "a", 1);
	jw_key(w, "b"); jw_arr_open(w); jw_u64(w, 2); jw_u64(w, 3); jw_arr_close(w);
	jw_key(w, "c"); jw_obj_open(w); jw_obj_close(w);
	jw_obj_close(w);
}

static void pretty(void **state)
{
	char *s = render(true, small);

	assert_string_equal(s, "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ],\n  \"c\": {}\n}\n");
	free(s);
}

static void toplevel_array(struct jw *w)
{
	jw_arr_open(w); jw_str(w, "e"); jw_arr_close(w);
}

static void array(void **state)
{
	char *s = render(false, toplevel_array);

	assert_string_equal(s, "[\"e\"]\n");
	free(s);
}

static const char *utf8_in;

static void one_string(struct jw *w)
{
	jw_str(w, utf8_in);
}

/* in, written as a JSON string on its own, must read want */
static void check_utf8(const char *in, const char *want)
{
	char *s;

	utf8_in = in;
	s = render(false, one_string);
	assert_string_equal(s, want);
	free(s);
}

/* well-formed UTF-8 goes through; every byte of an ill-formed sequence
 * becomes U+FFFD (a cgroup name is any bytes but '/' and NUL) */
static void utf8(void **state)
{
	check_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
		   "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"");
	check_utf8("a\xff" "b", "\"a\\ufffdb\"");			/* never a UTF-8 byte */
	check_utf8("\x80", "\"\\ufffd\"");			/* a tail alone */
	check_utf8("\xc0\xaf", "\"\\ufffd\\ufffd\"");		/* overlong '/' */
	check_utf8("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");	/* overlong, 3 bytes */
	check_utf8("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	/* a surrogate */
	check_utf8("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
	check_utf8("\xe2\x82", "\"\\ufffd\\ufffd\"");		/* cut at the end */
	check_utf8("\xe2\x82x", "\"\\ufffd\\ufffdx\"");		/* cut in the middle */
}

int run_json_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(compact), cmocka_unit_test(pretty), cmocka_unit_test(array),
		cmocka_unit_test(utf8),
	};
	return cmocka_run_group_tests_name("json", t, NULL, NULL);
}
