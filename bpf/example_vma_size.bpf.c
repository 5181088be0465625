// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An example policy for `mthpctl attach --object` (see include/mthp_ops.h
 * and mthpctl-policies(7), "Writing a policy"): large folios only in
 * mappings of at least 64 MiB, and there at most 64K; 4 KiB pages in every
 * smaller mapping.
 *
 * Why such a rule: a process's small mappings (thread stacks, arenas of a
 * few MiB) are where a large folio is most likely to be touched only in
 * part, while a big heap or cache mapping is filled densely; 64K caps what
 * one fault charges and one reclaim must write back (and is the size of
 * arm64's contiguous-PTE blocks with 4 KiB pages).
 *
 * On a host whose sizes are "madvise" it grants up to 64K to the big
 * mappings of the cgroup; on an "always" host it takes the larger sizes
 * away.
 *
 * It keeps no state, so one object could serve any number of cgroups;
 * mthpctl loads it once per attach all the same. It counts its decisions
 * in the "totals" map of the convention, so status shows them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mthp_ops.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define MIN_VMA_BYTES	(64UL << 20)
#define MAX_ORDER	4		/* 64K with 4 KiB pages */

MTHP_OPS_STATS_MAP;

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(vma_size_choose, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	unsigned long allow = MTHP_ORDERS_UPTO(MAX_ORDER);

	if (mctx->vma_end - mctx->vma_start < MIN_VMA_BYTES)
		allow = 0;
	mthp_ops_count(&totals, mctx, allow, MTHPCTL_REASON_CAP);
	return allow;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops vma_size_ops = {
	.choose_orders = (void *)vma_size_choose,
};
