/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Writing a bpf_mthp_ops policy of your own for `mthpctl attach --object`.
 *
 * Include it from BPF C after vmlinux.h (of a kernel with the kernel/
 * series: it defines struct bpf_mthp_ops, struct bpf_mthp_ctx and enum
 * bpf_mthp_request):
 *
 *	#include "vmlinux.h"
 *	#include <bpf/bpf_helpers.h>
 *	#include <bpf/bpf_tracing.h>
 *	#include "mthp_ops.h"
 *
 *	SEC("struct_ops/choose_orders")
 *	unsigned long BPF_PROG(my_choose, struct bpf_mthp_ctx *mctx,
 *			       struct cgroup *cgrp, struct cgroup *task_cgrp)
 *	{
 *		return MTHP_ORDERS_UPTO(2);	(16K and below)
 *	}
 *
 *	SEC(".struct_ops.link")
 *	struct bpf_mthp_ops my_ops = { .choose_orders = (void *)my_choose };
 *
 * The operation, as the running kernel declares it (kernel/0005-*.patch,
 * include/linux/bpf_mthp.h there):
 *
 *	unsigned long (*choose_orders)(struct bpf_mthp_ctx *ctx,
 *				       struct cgroup *cgrp,
 *				       struct cgroup *task_cgrp);
 *
 * (Name the context something other than ctx in BPF_PROG(): the macro
 * keeps the raw arguments in ctx.)
 *
 * It is called for the anonymous memory of a task in the attached cgroup's
 * subtree (task_cgrp: the task's own cgroup; cgrp: the cgroup the policy is
 * attached to), under RCU: it must not sleep. ctx->request says who asks:
 * BPF_MTHP_FAULT (with ctx->address, once per page fault for all its
 * candidate orders, again if the fault is retried, and for swap-ins),
 * BPF_MTHP_KHUGEPAGED (khugepaged's scans, and mmap() or madvise() offering
 * it a VMA, with address 0) or BPF_MTHP_SMAPS; MADV_COLLAPSE
 * does not ask. ctx also carries the VMA's range (vma_start, vma_end), the
 * process's resident anonymous bytes (rss_anon), BPF_MTHP_ADVISED in flags
 * for a MADV_HUGEPAGE region, and two masks: allowed, the orders the sysfs
 * settings allow, and grantable, the sizes the administrator left at
 * "madvise" that a policy may grant to this VMA (0 while every policy in
 * effect was linked by a task without CAP_SYS_ADMIN in the initial user
 * namespace, as with a BPF token or in a container: such a policy may
 * only take sizes away). Bit N of a mask stands for
 * a folio of PAGE_SIZE << N bytes (with 4 KiB pages: bit 2 = 16K, bit 4 =
 * 64K, bit 9 = 2M, the PMD size); bit 0 is never offered (a single page is
 * always allowed). The kernel keeps the return value & (allowed |
 * grantable): return ctx->allowed to change nothing, 0 for 4 KiB pages
 * only, MTHP_ORDERS_UPTO(n) for every size up to order n that the host
 * allows or left at madvise. "never", prctl(PR_SET_THP_DISABLE) and
 * MADV_NOHUGEPAGE are never crossed. With several policies in effect (here
 * and in ancestor cgroups) every one of them must allow a size.
 *
 * The object needs exactly one map of struct bpf_mthp_ops in
 * SEC(".struct_ops.link") (mthpctl links it to a cgroup), or --ops NAME
 * to pick one of several. It is loaded for each cgroup on its own: keep
 * state per cgroup in cgroup local storage if the object is attached more
 * than once, or in global maps if one attach is all it will see.
 *
 * Counters that `mthpctl status` shows (optional): a map named "totals"
 * (MTHP_OPS_STATS_MAP below) whose value is struct mthpctl_totals of
 * mthp_stats.h, the counters of the built-in policies. Call
 * mthp_ops_count() once per call of choose_orders with what it decided.
 * An object without such a map is attached all the same; status then
 * says its counters are unknown.
 */
#ifndef MTHPCTL_OPS_H
#define MTHPCTL_OPS_H

#include "mthp_policy.h"
#include "mthp_stats.h"

/* The map status reads the counters from, by its name in the object. */
#define MTHP_OPS_STATS_MAP_NAME	"totals"

/* Bit of a folio order in orders, and every order from 1 up to max. */
#define MTHP_ORDER(n)		(1UL << (n))
#define MTHP_ORDERS_UPTO(max)	((2UL << (max)) - 2)

#ifdef __VMLINUX_H__
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* The stats map of the convention: one per-CPU struct mthpctl_totals. */
#define MTHP_OPS_STATS_MAP						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);		\
		__uint(max_entries, 1);					\
		__type(key, __u32);					\
		__type(value, struct mthpctl_totals);			\
	} totals SEC(".maps")

/* mthpctl's index (MTHPCTL_TVA_*) of the kernel's enum bpf_mthp_request,
 * by name through CO-RE: a renumbering in the kernel cannot shift the
 * counters. */
static __always_inline __u32 mthp_request_index(__u32 request)
{
	if (request == bpf_core_enum_value(enum bpf_mthp_request, BPF_MTHP_FAULT))
		return MTHPCTL_TVA_PAGEFAULT;
	if (request == bpf_core_enum_value(enum bpf_mthp_request, BPF_MTHP_KHUGEPAGED))
		return MTHPCTL_TVA_KHUGEPAGED;
	if (request == bpf_core_enum_value(enum bpf_mthp_request, BPF_MTHP_SMAPS))
		return MTHPCTL_TVA_SMAPS;
	return MTHPCTL_TVA_OTHER;
}

/* What a policy may answer with: the orders the host allows and those it
 * left at madvise (the kernel keeps the answer & this). */
static __always_inline __u64 mthp_ops_offered(const struct bpf_mthp_ctx *ctx)
{
	return ctx->allowed | ctx->grantable;
}

/*
 * Count one decision in the stats map t (&totals, declared with
 * MTHP_OPS_STATS_MAP): a call for this ctx, and under reason
 * (MTHPCTL_REASON_*, MTHPCTL_REASON_CAP for a plain size limit) if the
 * answer kept any of the orders the policy could give (allowed or
 * grantable) from this request. status shows them as "decisions" and "fell
 * back".
 */
static __always_inline void mthp_ops_count(void *t, const struct bpf_mthp_ctx *ctx,
					   unsigned long answer, __u32 reason)
{
	__u32 zero = 0, tva = mthp_request_index(ctx->request);
	struct mthpctl_totals *v = bpf_map_lookup_elem(t, &zero);

	if (!v || tva >= MTHPCTL_NR_TVA || reason >= MTHPCTL_NR_REASON)
		return;
	/* one row per call: readers sum the rows into calls */
	v->cnt.fallbacks[mthp_ops_offered(ctx) & ~answer ? reason : MTHPCTL_REASON_NONE][tva]++;
}
#endif /* __VMLINUX_H__ */

#endif /* MTHPCTL_OPS_H */
