// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel's BTF (/sys/kernel/btf/vmlinux) as src/kbtf.c walks it for
 * `mthpctl status` and attach: the header, the types up to the ones
 * mthpctl looks for, their members and names. Seeds: .BTF sections of
 * small BPF objects declaring those types (tests/fuzz/btf-seed.c). Also
 * the record mthpctl keeps of what it found (kbtf_cache_get()).
 */
#include <errno.h>

#include "kbtf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a heap block of exactly size bytes, aligned as a mapping or
	 * mthpctl's malloc would be */
	void *copy = malloc(size ? size : 1);
	struct kbtf_features f;
	struct kbtf b;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (!kbtf_init(&b, copy, size) && !kbtf_features(&b, &f)) {
		/* an offset is one of a member inside its struct (< 2^32 / 8) */
		fuzz_assert(f.ops_data_off == -ENOENT || (f.ops_data_off >= 0 && f.ops_data_off < 1 << 29));
		fuzz_assert(f.ops_fn_off == -ENOENT || (f.ops_fn_off >= 0 && f.ops_fn_off < 1 << 29));
		fuzz_assert(f.mthp_ops || f.ops_data_off == -ENOENT || f.ops_fn_off == -ENOENT);
	}
	/* the same bytes as a cached record (src/bpfutil.c): what it accepts
	 * goes back and forth unchanged */
	if (!kbtf_cache_get(data, size, "fuzz", &f)) {
		unsigned char rec[KBTF_CACHE_SIZE];
		struct kbtf_features g;

		kbtf_cache_put(&f, "fuzz", rec);
		fuzz_assert(!kbtf_cache_get(rec, sizeof(rec), "fuzz", &g));
		fuzz_assert(!memcmp(&f, &g, sizeof(f)));
	}
	free(copy);
	return 0;
}
