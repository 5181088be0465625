// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * For bench mixed (--policy "--object FILE --ops NAME"): fixed sizes per
 * workload, as a user who knows each workload's best static setting would
 * attach them one by one: what a static choice per cgroup reaches on the
 * host, the measure for auto's mixed result (README, Results). Run as
 *
 *   make vm-tests
 *   mthpctl bench mixed --modes always,never,policy \
 *     --policy "--object .output/tests/vm/ops_mixed_oracle.bpf.o --ops oracle_b2m"
 *
 * Attached to <bench>/mixed, it answers for its children service, batch
 * and small:
 *
 *   oracle_b64k   service and small 4 KiB, batch up to 64K
 *   oracle_b2m    service and small 4 KiB, batch every size
 *
 * A task in any other cgroup gets every size offered.
 *
 * The workload is told by its cgroup's creation order, not its name: the
 * name is a string this program type cannot read (libbpf turns
 * bpf_probe_read_kernel_str() into bpf_probe_read_str() on a kernel
 * without tracing programs, and that one is refused here). bench mixed
 * creates <bench>/mixed and then service, batch and small; each cgroup
 * takes one serial number for itself and one for each controller's css
 * (cgroup.subtree_control of its parent). So, in a VM where nothing else
 * creates cgroups meanwhile and <bench> enables what mixed does (memory),
 * the n-th child's serial number is the parent's plus n times that
 * stride.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mthp_ops.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

MTHP_OPS_STATS_MAP;

enum { SERVICE = 1, BATCH, SMALL };	/* creation order under the parent */

/* 4 KiB for the service and the small processes, batch_orders for the
 * batch job, every size elsewhere. */
static __always_inline unsigned long by_workload(const struct bpf_mthp_ctx *mctx,
						 const struct cgroup *cgrp,
						 const struct cgroup *task_cgrp,
						 unsigned long batch_orders)
{
	__u64 stride = 1 + __builtin_popcount(cgrp->subtree_ss_mask);
	__u64 diff = task_cgrp->self.serial_nr - cgrp->self.serial_nr;
	__u64 nr = diff % stride ? 0 : diff / stride;
	unsigned long allow = ~0UL;

	if (nr == SERVICE || nr == SMALL)
		allow = 0;
	else if (nr == BATCH)
		allow = batch_orders;
	mthp_ops_count(&totals, mctx, allow, MTHPCTL_REASON_CAP);
	return allow;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(choose_b64k, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	return by_workload(mctx, cgrp, task_cgrp, MTHP_ORDERS_UPTO(4));
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(choose_b2m, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	return by_workload(mctx, cgrp, task_cgrp, ~0UL);
}

SEC(".struct_ops.link")
struct bpf_mthp_ops oracle_b64k = { .choose_orders = (void *)choose_b64k };

SEC(".struct_ops.link")
struct bpf_mthp_ops oracle_b2m = { .choose_orders = (void *)choose_b2m };
