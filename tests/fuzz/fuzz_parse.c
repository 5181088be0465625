// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Sizes, durations, counts and the bench option lists (src/parse.c,
 * src/bench/bench_calc.c): command-line input. Every accepted size or duration
 * formats back to a string that parses to the same value; list results
 * stay in bounds.
 */
#include <errno.h>

#include "bench/bench_calc.h"
#include "parse.h"
#include "fuzz.h"

static void sizes(const char *s)
{
	char buf[32];
	__u64 v, back;
	int order;

	if (mthpctl_parse_size(s, &v))
		return;
	mthpctl_format_size(v, buf, sizeof(buf));
	fuzz_assert(!mthpctl_parse_size(buf, &back) && back == v);
	order = mthpctl_size_to_order(v, 4096);
	fuzz_assert(order < 0 || (order < 64 && 4096ULL << order == v));
}

static void durations(const char *s)
{
	char buf[32];
	__u64 v, back;

	if (mthpctl_parse_duration(s, &v))
		return;
	mthpctl_format_duration(v, buf, sizeof(buf));
	fuzz_assert(!mthpctl_parse_duration(buf, &back) && back == v);
}

static void lists(const char *s)
{
	__u64 out[BENCH_MAX_LIST];
	unsigned int mask = 0;
	int i, j, n;

	n = bench_parse_high_list(s, out, BENCH_MAX_LIST);
	fuzz_assert(n == -EINVAL || n == -E2BIG || (n > 0 && n <= BENCH_MAX_LIST));
	for (i = 0; i < n; i++)
		fuzz_assert(out[i] > 0);
	n = bench_parse_size_list(s, out, 4);
	fuzz_assert(n == -EINVAL || n == -E2BIG || (n > 0 && n <= 4));
	for (i = 0; i < n; i++) {
		fuzz_assert(out[i] >= 8192 && out[i] <= 1ULL << 30 && !(out[i] & (out[i] - 1)));
		for (j = 0; j < i; j++)
			fuzz_assert(out[i] != out[j]);
	}
	if (!bench_parse_modes(s, &mask))
		fuzz_assert(mask && mask < 1u << BENCH_NR_MODES);
	if (!bench_parse_count(s, 1, 1000000, &out[0]))
		fuzz_assert(out[0] >= 1 && out[0] <= 1000000 && *s >= '0' && *s <= '9');
	{
		double pct;

		/* --until-width: a finite percentage in (0, 100] */
		if (!bench_parse_pct(s, &pct))
			fuzz_assert(pct > 0 && pct <= 100 && *s >= '0' && *s <= '9');
	}
}

static void words(const char *s)
{
	char *copy = strdup(s), *w[8];
	int i, n;

	if (!copy)
		abort();
	n = bench_split_words(copy, w, 8);
	fuzz_assert(n == -E2BIG || (n >= 0 && n <= 8));
	for (i = 0; i < n; i++)
		fuzz_assert(*w[i] && !strpbrk(w[i], " \t"));
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	sizes(s);
	durations(s);
	lists(s);
	words(s);
	free(s);
	return 0;
}
