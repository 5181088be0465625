// SPDX-License-Identifier: GPL-2.0
/* Test policies for the bpf_mthp_ops kernel tests (tests/kernel/ktest.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "ktest_psi.h"

char LICENSE[] SEC("license") = "GPL";

/* Orders each mask policy allows; set by the test before attaching. */
unsigned long allowed_a = 0, allowed_b = 0, allowed_c = 0;
/* Calls seen per tva_type, for the cgroup with id watch_cgroup. */
__u64 watch_cgroup = 0;
__u64 calls[4] = {};
__u64 last_orders[4] = {};

static void count_call(struct cgroup *cgrp, enum tva_type type,
		       unsigned long orders)
{
	__u32 t = type;

	if (cgrp->kn->id != watch_cgroup || t >= 4)
		return;
	__sync_fetch_and_add(&calls[t], 1);
	last_orders[t] = orders;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(only_4k, struct cgroup *cgrp, struct vm_area_struct *vma,
		       enum tva_type type, unsigned long orders)
{
	count_call(cgrp, type, orders);
	return 0;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(mask_a, struct cgroup *cgrp, struct vm_area_struct *vma,
		       enum tva_type type, unsigned long orders)
{
	count_call(cgrp, type, orders);
	return orders & allowed_a;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(mask_b, struct cgroup *cgrp, struct vm_area_struct *vma,
		       enum tva_type type, unsigned long orders)
{
	return orders & allowed_b;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(mask_c, struct cgroup *cgrp, struct vm_area_struct *vma,
		       enum tva_type type, unsigned long orders)
{
	return orders & allowed_c;
}

/* Refuses large folios to page faults only: collapse must still work. */
SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(deny_fault, struct cgroup *cgrp, struct vm_area_struct *vma,
		       enum tva_type type, unsigned long orders)
{
	count_call(cgrp, type, orders);
	return type == TVA_PAGEFAULT ? 0 : orders;
}

/*
 * Page faults of watch_cgroup, by the orders they ask about: the PMD order
 * alone (the PMD attempt, asked apart from the smaller orders before each
 * fault asked once), the PMD order with smaller ones (one question for the
 * whole fault), smaller ones only (a fault in a populated PMD range); and
 * calls whose vm_flags are not the VMA's (a fault has no pending flags).
 * Refuses the PMD order, so that faults fall back to the smaller orders.
 */
__u64 pf_pmd_alone = 0, pf_pmd_and_smaller = 0, pf_smaller = 0, pf_flags_differ = 0;

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(no_pmd, struct cgroup *cgrp, struct vm_area_struct *vma,
		       enum tva_type type, unsigned long orders, vm_flags_t vm_flags)
{
	const unsigned long pmd = 1UL << 9;

	if (cgrp->kn->id == watch_cgroup && type == TVA_PAGEFAULT) {
		if (orders == pmd)
			__sync_fetch_and_add(&pf_pmd_alone, 1);
		else if (orders & pmd)
			__sync_fetch_and_add(&pf_pmd_and_smaller, 1);
		else
			__sync_fetch_and_add(&pf_smaller, 1);
		if (vm_flags != vma->vm_flags)
			__sync_fetch_and_add(&pf_flags_differ, 1);
	}
	return orders & ~pmd;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops pol_only_4k = { .choose_orders = (void *)only_4k };
SEC(".struct_ops.link")
struct bpf_mthp_ops pol_no_pmd = { .choose_orders = (void *)no_pmd };
SEC(".struct_ops.link")
struct bpf_mthp_ops pol_mask_a = { .choose_orders = (void *)mask_a };
SEC(".struct_ops.link")
struct bpf_mthp_ops pol_mask_b = { .choose_orders = (void *)mask_b };
SEC(".struct_ops.link")
struct bpf_mthp_ops pol_mask_c = { .choose_orders = (void *)mask_c };
SEC(".struct_ops.link")
struct bpf_mthp_ops pol_deny_fault = { .choose_orders = (void *)deny_fault };

/* PSI kfunc: read by BPF_PROG_RUN of a syscall program. */
extern s64 bpf_cgroup_psi_stall(struct cgroup *cgrp, enum psi_states state) __ksym;
extern struct cgroup *bpf_cgroup_from_id(u64 cgid) __ksym;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym;

SEC("syscall")
int read_psi(struct psi_args *args)
{
	struct cgroup *cgrp = bpf_cgroup_from_id(args->cgroup_id);

	if (!cgrp)
		return -1;
	args->mem_some = bpf_cgroup_psi_stall(cgrp, PSI_MEM_SOME);
	args->mem_full = bpf_cgroup_psi_stall(cgrp, PSI_MEM_FULL);
	args->io_some = bpf_cgroup_psi_stall(cgrp, PSI_IO_SOME);
	args->bad_state = bpf_cgroup_psi_stall(cgrp, PSI_NONIDLE);
	bpf_cgroup_release(cgrp);
	return 0;
}
