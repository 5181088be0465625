// SPDX-License-Identifier: GPL-2.0
/* Must be rejected: choose_orders runs under RCU and cannot sleep. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops.s/choose_orders")
unsigned long BPF_PROG(sleepy, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	return mctx->allowed;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops pol_sleepable = { .choose_orders = (void *)sleepy };
