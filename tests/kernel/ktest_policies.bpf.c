// SPDX-License-Identifier: GPL-2.0
/* Test policies for the bpf_mthp_ops kernel tests (tests/kernel/ktest.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "ktest_mm.h"
#include "ktest_psi.h"

char LICENSE[] SEC("license") = "GPL";

/* Orders each mask policy allows; set by the test before attaching. */
unsigned long allowed_a = 0, allowed_b = 0, allowed_c = 0;
/* Calls seen per enum bpf_mthp_request, for tasks of the cgroup with id
 * watch_cgroup, and the orders the last one could be given. */
__u64 watch_cgroup = 0;
__u64 calls[3] = {};
__u64 last_orders[3] = {};

static __u64 offered(const struct bpf_mthp_ctx *mctx)
{
	return mctx->allowed | mctx->grantable;
}

static void count_call(const struct bpf_mthp_ctx *mctx, struct cgroup *task_cgrp)
{
	__u32 r = mctx->request;

	if (task_cgrp->kn->id != watch_cgroup || r >= 3)
		return;
	__sync_fetch_and_add(&calls[r], 1);
	last_orders[r] = offered(mctx);
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(only_4k, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	count_call(mctx, task_cgrp);
	return 0;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(mask_a, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	count_call(mctx, task_cgrp);
	return allowed_a;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(mask_b, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	return allowed_b;
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(mask_c, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	return allowed_c;
}

/* Refuses large folios to page faults only: khugepaged may collapse. */
SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(deny_fault, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	count_call(mctx, task_cgrp);
	return mctx->request == BPF_MTHP_FAULT ? 0 : mctx->allowed;
}

/*
 * Page faults of watch_cgroup, by the orders they ask about: the PMD order
 * alone (the PMD attempt, asked apart from the smaller orders before each
 * fault asked once), the PMD order with smaller ones (one question for the
 * whole fault), smaller ones only (a fault in a populated PMD range); and
 * calls whose faulting address is outside the VMA the context names.
 * Refuses the PMD order, so that faults fall back to the smaller orders.
 */
__u64 pf_pmd_alone = 0, pf_pmd_and_smaller = 0, pf_smaller = 0, pf_addr_outside = 0;

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(no_pmd, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	const unsigned long pmd = 1UL << 9;
	__u64 orders = offered(mctx);

	if (task_cgrp->kn->id == watch_cgroup && mctx->request == BPF_MTHP_FAULT) {
		if (orders == pmd)
			__sync_fetch_and_add(&pf_pmd_alone, 1);
		else if (orders & pmd)
			__sync_fetch_and_add(&pf_pmd_and_smaller, 1);
		else
			__sync_fetch_and_add(&pf_smaller, 1);
		if (mctx->address < mctx->vma_start || mctx->address >= mctx->vma_end)
			__sync_fetch_and_add(&pf_addr_outside, 1);
	}
	return orders & ~pmd;
}

extern int bpf_mthp_collapse_on_return(struct bpf_mthp_ctx *ctx) __ksym;

/*
 * collapse_each: the page faults of collapse_tgid get 4 KiB and, while
 * collapse_call is set, each asks for a collapse on return; the answers
 * are counted. The collapse's own check (a khugepaged request from that
 * task) is allowed; khugepaged and every other task are refused.
 */
__u32 collapse_tgid = 0;
int collapse_call = 0;
__u64 collapse_queued = 0, collapse_again = 0, collapse_busy = 0;
__u64 collapse_perm = 0, collapse_other = 0;

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(collapse_each, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	int ret;

	if (tgid != collapse_tgid)
		return 0;
	if (mctx->request == BPF_MTHP_KHUGEPAGED)
		return offered(mctx);
	if (mctx->request != BPF_MTHP_FAULT || !collapse_call)
		return 0;
	ret = bpf_mthp_collapse_on_return(mctx);
	if (ret == 0)
		__sync_fetch_and_add(&collapse_queued, 1);
	else if (ret == -11)	/* EAGAIN */
		__sync_fetch_and_add(&collapse_again, 1);
	else if (ret == -16)	/* EBUSY */
		__sync_fetch_and_add(&collapse_busy, 1);
	else if (ret == -1)	/* EPERM */
		__sync_fetch_and_add(&collapse_perm, 1);
	else
		__sync_fetch_and_add(&collapse_other, 1);
	return 0;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops pol_collapse_each = { .choose_orders = (void *)collapse_each };
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
extern int bpf_cgroup_psi_stall(struct cgroup *cgrp, enum bpf_psi_stall which,
				u64 *stall_ns) __ksym;
extern struct cgroup *bpf_cgroup_from_id(u64 cgid) __ksym;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym;

/* The stall in ns, or the kfunc's -errno */
static __s64 stall_or_err(struct cgroup *cgrp, enum bpf_psi_stall which)
{
	u64 ns = 0;
	int err = bpf_cgroup_psi_stall(cgrp, which, &ns);

	return err ? err : (__s64)ns;
}

SEC("syscall")
int read_psi(struct psi_args *args)
{
	struct cgroup *cgrp = bpf_cgroup_from_id(args->cgroup_id);

	if (!cgrp)
		return -1;
	args->mem_some = stall_or_err(cgrp, BPF_PSI_MEM_SOME);
	args->mem_full = stall_or_err(cgrp, BPF_PSI_MEM_FULL);
	args->io_some = stall_or_err(cgrp, BPF_PSI_IO_SOME);
	args->bad_state = stall_or_err(cgrp, BPF_PSI_IRQ_FULL + 1);
	bpf_cgroup_release(cgrp);
	return 0;
}

/*
 * A process's mm flags, for MMF_VM_HUGEPAGE: /proc shows no khugepaged
 * registration, and the test kernel has no tracing.
 */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

SEC("syscall")
int read_mm_flags(struct mm_flags_args *args)
{
	struct task_struct *task = bpf_task_from_pid(args->pid);
	struct mm_struct *mm;

	if (!task)
		return -1;
	/* syscall programs have no probe_read helper: a direct, checked load */
	mm = task->mm;
	args->has_mm = mm != NULL;
	if (mm)
		args->flags = mm->flags.__mm_flags[0];
	bpf_task_release(task);
	return 0;
}
