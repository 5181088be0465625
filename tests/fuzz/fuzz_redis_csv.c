// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * redis-benchmark --csv output (src/bench/bench_calc.c): the 7.x layout with its
 * header line and the legacy one of rows only; quoted fields, "" escapes,
 * CRLF. A row found has a NUL-terminated name and a finite rps >= 0; a
 * latency is a finite number >= 0 or NAN (column absent).
 */
#include <math.h>

#include "bench/bench_calc.h"
#include "fuzz.h"

static void row(const char *s, const char *test)
{
	struct bench_redis_row r;
	const double *lat[] = { &r.avg, &r.min, &r.p50, &r.p95, &r.p99, &r.max };
	size_t i;

	if (bench_parse_redis_csv(s, test, &r))
		return;
	fuzz_assert(memchr(r.test, '\0', sizeof(r.test)));
	fuzz_assert(isfinite(r.rps) && r.rps >= 0);
	for (i = 0; i < sizeof(lat) / sizeof(lat[0]); i++)
		fuzz_assert(isnan(*lat[i]) || (isfinite(*lat[i]) && *lat[i] >= 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	row(s, NULL);
	row(s, "SET");
	row(s, "get");
	free(s);
	return 0;
}
