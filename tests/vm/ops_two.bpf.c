// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * For tests/vm/run.sh (t_object): an object with two bpf_mthp_ops maps,
 * so attach --object needs --ops, and no "totals" map, so status cannot
 * know its counters. cap16k allows folios up to 16K, cap4k none.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mthp_ops.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(choose_16k, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	return MTHP_ORDERS_UPTO(2);
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(choose_4k, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	return 0;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops cap16k = { .choose_orders = (void *)choose_16k };

SEC(".struct_ops.link")
struct bpf_mthp_ops cap4k = { .choose_orders = (void *)choose_4k };
