/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A repeatable permutation for the tests that fill memory in random order
 * (tests/unit/test_policy.c's fill_order, tests/vm/faulter.c -r): the same
 * seed gives the same order, so a failure can be replayed.
 */
#ifndef MTHPCTL_TESTS_SHUFFLE_H
#define MTHPCTL_TESTS_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/* a[0..n-1] = a permutation of 0..n-1 (Fisher-Yates over xorshift64). */
static inline void test_shuffle(size_t *a, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = i;
	for (i = n ? n - 1 : 0; i > 0; i--) {
		size_t j, t;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		j = seed % (i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

#endif
