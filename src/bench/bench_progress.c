// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: progress lines on stderr. A file of its own below every
 * other one that prints them (the rounds, the start state, the runners),
 * so that none of them calls into the report that reads their results.
 */
#include <stdarg.h>
#include <stdio.h>

#include "bench_common.h"

void bench_progress(const struct bench_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->quiet)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
