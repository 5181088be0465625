// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The kernel BTF walk (src/kbtf.c) on a BTF blob built here. */
#include <errno.h>
#include <string.h>

#include "tests.h"
#include "kbtf.h"

/* header, then: [1] struct "ops" { int pad; long data; } (bit offset 64),
 * [2] func "fn"; then the strings "\0ops\0pad\0data\0fn\0". */
struct blob {
	struct btf_header h;
	struct btf_type s;
	struct btf_member m[2];
	struct btf_type f;
	char str[20];
} __attribute__((aligned(8)));

static const char strs[] = "\0ops\0pad\0data\0fn";	/* 17 bytes with the NUL */
#define INFO(kind, vlen)	((kind) << 24 | (vlen))

static void build(struct blob *b)
{
	memset(b, 0, sizeof(*b));
	b->h.magic = BTF_MAGIC;
	b->h.version = 1;
	b->h.hdr_len = sizeof(b->h);
	b->h.type_off = 0;
	b->h.type_len = offsetof(struct blob, str) - sizeof(b->h);
	b->h.str_off = b->h.type_len;
	b->h.str_len = sizeof(strs);
	memcpy(b->str, strs, sizeof(strs));
	b->s.name_off = 1;
	b->s.info = INFO(BTF_KIND_STRUCT, 2);
	b->s.size = 16;
	b->m[0].name_off = 5;
	b->m[1].name_off = 9;
	b->m[1].offset = 64;
	b->f.name_off = 14;
	b->f.info = INFO(BTF_KIND_FUNC, 0);
}

static void walk(void **state)
{
	struct kbtf_want w[] = { { "ops", BTF_KIND_STRUCT }, { "fn", BTF_KIND_FUNC },
				 { "missing", BTF_KIND_FUNC } };
	struct blob b;
	struct kbtf k;

	build(&b);
	assert_int_equal(kbtf_init(&k, &b, sizeof(b)), 0);
	assert_int_equal(kbtf_find(&k, w, 3), 0);
	assert_ptr_equal(w[0].found, &b.s);
	assert_ptr_equal(w[1].found, &b.f);
	assert_null(w[2].found);
	assert_int_equal(kbtf_member_off(&k, w[0].found, "data"), 8);
	assert_int_equal(kbtf_member_off(&k, w[0].found, "pad"), 0);
	assert_int_equal(kbtf_member_off(&k, w[0].found, "nope"), -ENOENT);
	assert_int_equal(kbtf_member_off(&k, w[1].found, "data"), -ENOENT);	/* a func */
	assert_int_equal(kbtf_member_off(&k, NULL, "data"), -ENOENT);
}

/* What the fuzzer fed the old walk (tests/fuzz/corpus/btf/regress-*). */
static void malformed(void **state)
{
	struct kbtf_want w[] = { { "ops", BTF_KIND_STRUCT } };
	struct blob b;
	struct kbtf k;

	build(&b);
	b.h.magic = 0;
	assert_int_equal(kbtf_init(&k, &b, sizeof(b)), -EINVAL);
	build(&b);
	/* strings cut short */
	assert_int_equal(kbtf_init(&k, &b, offsetof(struct blob, str) + 16), -EINVAL);
	build(&b);
	b.str[16] = 'x';		/* no NUL at the end: names would run off */
	assert_int_equal(kbtf_init(&k, &b, sizeof(b)), -EINVAL);
	build(&b);
	b.h.type_off = 1;		/* types not 4-byte aligned */
	assert_int_equal(kbtf_init(&k, &b, sizeof(b)), -EINVAL);
	assert_int_equal(kbtf_init(&k, (char *)&b + 1, sizeof(b) - 1), -EINVAL);
	build(&b);
	b.s.info = INFO(BTF_KIND_STRUCT, 9);	/* members past the types */
	assert_int_equal(kbtf_init(&k, &b, sizeof(b)), 0);
	assert_int_equal(kbtf_find(&k, w, 1), -EINVAL);
	build(&b);
	b.f.info = INFO(31, 0);	/* unknown kind */
	assert_int_equal(kbtf_init(&k, &b, sizeof(b)), 0);
	w[0].found = NULL;
	w[0].name = "fn";
	w[0].kind = BTF_KIND_FUNC;
	assert_int_equal(kbtf_find(&k, w, 1), -EINVAL);
}

/* The record of a probe comes back as it went in, for this boot only, and
 * what no probe could give is refused. */
static void cache(void **state)
{
	const char *id = "0b4e8f7a-4d31-4c57-9f39-7d1c2f6a9e10 16 2a1 4c2e01";
	struct kbtf_features f = {
		.mthp_ops = true, .psi_kfunc = true, .memcg_kfuncs = false, .wq = true,
		.ops_data_off = 16, .ops_fn_off = -ENOENT, .ops_type_id = 4242,
	}, got;
	unsigned char rec[KBTF_CACHE_SIZE], bad[KBTF_CACHE_SIZE];
	__u32 bits;

	(void)state;
	kbtf_cache_put(&f, id, rec);
	assert_int_equal(kbtf_cache_get(rec, sizeof(rec), id, &got), 0);
	assert_true(got.mthp_ops && got.psi_kfunc && !got.memcg_kfuncs && got.wq);
	assert_int_equal(got.ops_data_off, 16);
	assert_int_equal(got.ops_fn_off, -ENOENT);
	assert_int_equal(got.ops_type_id, 4242);
	/* another file (or boot), no key, a short or long read, a damaged magic */
	assert_int_equal(kbtf_cache_get(rec, sizeof(rec), "0b4e8f7a-4d31-4c57-9f39-7d1c2f6a9e10 16 2a2 4c2e01", &got),
			 -EINVAL);
	assert_int_equal(kbtf_cache_get(rec, sizeof(rec), "", &got), -EINVAL);
	assert_int_equal(kbtf_cache_get(rec, sizeof(rec) - 1, id, &got), -EINVAL);
	memcpy(bad, rec, sizeof(bad));
	bad[0] ^= 1;
	assert_int_equal(kbtf_cache_get(bad, sizeof(bad), id, &got), -EINVAL);
	/* unknown feature bits; bpf_mthp_ops without its type id; an offset
	 * no struct_ops member has */
	memcpy(bad, rec, sizeof(bad));
	memcpy(&bits, bad + 8 + KBTF_CACHE_KEY_MAX, 4);
	bits |= 0x10;
	memcpy(bad + 8 + KBTF_CACHE_KEY_MAX, &bits, 4);
	assert_int_equal(kbtf_cache_get(bad, sizeof(bad), id, &got), -EINVAL);
	f.ops_type_id = 0;
	kbtf_cache_put(&f, id, bad);
	assert_int_equal(kbtf_cache_get(bad, sizeof(bad), id, &got), -EINVAL);
	f.ops_type_id = 7;
	f.ops_data_off = -7;	/* -ENOENT (-2) means none */
	kbtf_cache_put(&f, id, bad);
	assert_int_equal(kbtf_cache_get(bad, sizeof(bad), id, &got), -EINVAL);
}

int run_kbtf_tests(void)
{
	const struct CMUnitTest t[] = { cmocka_unit_test(walk), cmocka_unit_test(malformed),
					cmocka_unit_test(cache) };
	return cmocka_run_group_tests_name("kbtf", t, NULL, NULL);
}
