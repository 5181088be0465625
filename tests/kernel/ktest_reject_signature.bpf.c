// SPDX-License-Identifier: GPL-2.0
/* Must be rejected: choose_orders has five arguments, this reads a sixth. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(six_args, struct cgroup *cgrp, struct vm_area_struct *vma,
		       enum tva_type type, unsigned long orders,
		       unsigned long vm_flags, unsigned long extra)
{
	return orders & vm_flags & extra;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops pol_signature = { .choose_orders = (void *)six_args };
