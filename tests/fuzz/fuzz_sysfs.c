// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel's text files (src/sysfs.c, src/bench/bench_calc.c): PSI
 * (memory.pressure, /proc/pressure/memory), memory.stat / memory.events /
 * vmstat, a "[selected]" sysfs value and a hugepages-<N>kB directory name.
 */
#include <errno.h>

#include "bench/bench_calc.h"
#include "sysfs.h"
#include "fuzz.h"

static void psi(const char *s)
{
	const struct mthpctl_psi_line *l[2];
	struct mthpctl_psi p;
	int i;

	if (mthpctl_parse_psi(s, &p))
		return;
	fuzz_assert(p.some.present || p.full.present);
	l[0] = &p.some;
	l[1] = &p.full;
	for (i = 0; i < 2; i++)		/* at most 100000.99% */
		fuzz_assert(l[i]->avg10 <= 10000099 && l[i]->avg60 <= 10000099 &&
			    l[i]->avg300 <= 10000099);
}

static void memstat(const char *s)
{
	static const char *const keys[] = { "anon", "shmem", "high", "max", "oom", "" };
	struct bench_memstat m;
	size_t i;
	__u64 v;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		mthpctl_stat_get(s, keys[i], &v);
	bench_memstat_parse(s, &m);
}

/* out is a heap block of exactly len bytes: ASan sees any overrun. */
static void bracketed(const char *s, size_t len)
{
	char *out = malloc(len);

	if (!out)
		abort();
	if (!mthpctl_parse_bracketed(s, out, len))
		fuzz_assert(strlen(out) < len && *out && !strchr(out, ']'));
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	__u64 kb;

	psi(s);
	memstat(s);
	bracketed(s, 1);
	bracketed(s, 16);
	if (!mthpctl_parse_hp_dirname(s, &kb))
		fuzz_assert(kb > 0 && !strncmp(s, "hugepages-", 10));
	free(s);
	return 0;
}
