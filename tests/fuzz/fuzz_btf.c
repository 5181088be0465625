// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel's BTF (/sys/kernel/btf/vmlinux) as src/kbtf.c walks it for
 * `mthpctl status` and attach: the header, the types up to the ones
 * mthpctl looks for, their members and names. Seeds: .BTF sections of
 * small BPF objects declaring those types (tests/fuzz/corpus/btf).
 */
#include <errno.h>

#include "kbtf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kbtf_want w[] = {
		{ "bpf_mthp_ops", BTF_KIND_STRUCT },
		{ "bpf_struct_ops_bpf_mthp_ops", BTF_KIND_STRUCT },
		{ "bpf_cgroup_psi_stall", BTF_KIND_FUNC },
		{ "bpf_get_mem_cgroup", BTF_KIND_FUNC },
		{ "bpf_wq_start", BTF_KIND_FUNC },
	};
	/* a heap block of exactly size bytes (malloc aligns it as a mapping
	 * or mthpctl's malloc would) */
	void *copy = malloc(size ? size : 1);
	struct kbtf b;
	size_t i;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (!kbtf_init(&b, copy, size) && !kbtf_find(&b, w, sizeof(w) / sizeof(w[0]))) {
		for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
			const char *t = (const char *)w[i].found;

			fuzz_assert(!t || (t >= (const char *)copy &&
					   t + sizeof(struct btf_type) <= (const char *)copy + size));
		}
		kbtf_member_off(&b, w[1].found, "data");
		kbtf_member_off(&b, w[0].found, "choose_orders");
		kbtf_member_off(&b, w[2].found, "x");	/* a FUNC: no members */
	}
	free(copy);
	return 0;
}
