/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Writing a bpf_mthp_ops policy of your own for `mthpctl attach --object`.
 *
 * Include it from BPF C after vmlinux.h (of a kernel with the kernel/
 * series: it defines struct bpf_mthp_ops and enum tva_type):
 *
 *	#include "vmlinux.h"
 *	#include <bpf/bpf_helpers.h>
 *	#include <bpf/bpf_tracing.h>
 *	#include "mthp_ops.h"
 *
 *	SEC("struct_ops/choose_orders")
 *	unsigned long BPF_PROG(my_choose, struct cgroup *cgrp,
 *			       struct vm_area_struct *vma, enum tva_type type,
 *			       unsigned long orders)
 *	{
 *		return orders & MTHP_ORDERS_UPTO(2);	(16K and below)
 *	}
 *
 *	SEC(".struct_ops.link")
 *	struct bpf_mthp_ops my_ops = { .choose_orders = (void *)my_choose };
 *
 * The operation, as the running kernel declares it (kernel/0005-*.patch,
 * include/linux/bpf_mthp.h there):
 *
 *	unsigned long (*choose_orders)(struct cgroup *cgrp,
 *				       struct vm_area_struct *vma,
 *				       enum tva_type type, unsigned long orders,
 *				       vm_flags_t vm_flags);
 *
 * vm_flags, last so that a program declaring only the first four loads as
 * well, are the VMA flags the caller checks: they can differ from
 * vma->vm_flags while those are being changed (never for a page fault).
 * A page fault asks once, for all its candidate orders (PMD and smaller).
 *
 * It is called from thp_vma_allowable_orders() for anonymous memory of a
 * task in the attached cgroup's subtree (cgrp: the task's own cgroup),
 * after the sysfs settings and the VMA's flags, under RCU: it must not
 * sleep. type says who asks: TVA_PAGEFAULT, TVA_KHUGEPAGED,
 * TVA_FORCED_COLLAPSE (MADV_COLLAPSE) or TVA_SMAPS. Bit N of orders stands
 * for a folio of PAGE_SIZE << N bytes (with 4 KiB pages: bit 2 = 16K, bit 4
 * = 64K, bit 9 = 2M, the PMD size); bit 0 is never offered (a single page
 * is always allowed). The kernel keeps orders & the return value, so a
 * policy can only take sizes away: return orders to change nothing, 0 for
 * 4 KiB pages only. With several policies in effect (here and in ancestor
 * cgroups) every one of them must allow a size.
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

/* mthpctl's index (MTHPCTL_TVA_*) of the kernel's enum tva_type, by name
 * through CO-RE: a renumbering in the kernel cannot shift the counters. */
static __always_inline __u32 mthp_tva_index(enum tva_type type)
{
	if (type == bpf_core_enum_value(enum tva_type, TVA_PAGEFAULT))
		return MTHPCTL_TVA_PAGEFAULT;
	if (type == bpf_core_enum_value(enum tva_type, TVA_KHUGEPAGED))
		return MTHPCTL_TVA_KHUGEPAGED;
	if (type == bpf_core_enum_value(enum tva_type, TVA_FORCED_COLLAPSE))
		return MTHPCTL_TVA_FORCED_COLLAPSE;
	if (type == bpf_core_enum_value(enum tva_type, TVA_SMAPS))
		return MTHPCTL_TVA_SMAPS;
	return MTHPCTL_TVA_OTHER;
}

/*
 * Count one decision in the stats map t (&totals, declared with
 * MTHP_OPS_STATS_MAP): a call of this type, and under reason
 * (MTHPCTL_REASON_*, MTHPCTL_REASON_CAP for a plain size limit) if allowed
 * took away any of the offered orders. status shows them as "decisions"
 * and "fell back".
 */
static __always_inline void mthp_ops_count(void *t, enum tva_type type, unsigned long offered,
					   unsigned long allowed, __u32 reason)
{
	__u32 zero = 0, tva = mthp_tva_index(type);
	struct mthpctl_totals *v = bpf_map_lookup_elem(t, &zero);

	if (!v || tva >= MTHPCTL_NR_TVA || reason >= MTHPCTL_NR_REASON)
		return;
	/* one row per call: readers sum the rows into calls */
	v->cnt.fallbacks[offered & ~allowed ? reason : MTHPCTL_REASON_NONE][tva]++;
}
#endif /* __VMLINUX_H__ */

#endif /* MTHPCTL_OPS_H */
