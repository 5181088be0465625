/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by the libFuzzer targets in tests/fuzz (see tests/fuzz/run.sh). */
#ifndef MTHPCTL_FUZZ_H
#define MTHPCTL_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The input as a C string of its own heap block (ASan sees a read past its
 * NUL); the parsers get what mthpctl_read_file gives them, a NUL-terminated
 * text, so an embedded NUL simply ends it. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A property of a parser's result does not hold: a crash libFuzzer keeps. */
#define fuzz_assert(cond) do {						\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: fuzz_assert(%s) failed\n", \
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

#endif
