// SPDX-License-Identifier: GPL-2.0
/* Must be rejected: choose_orders has three arguments, this reads a fourth. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(four_args, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp, unsigned long extra)
{
	return mctx->allowed & extra;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops pol_signature = { .choose_orders = (void *)four_args };
