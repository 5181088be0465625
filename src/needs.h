/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the built-in policies need of the running kernel and its mounts,
 * and the fix for each thing missing: the verdict of `mthpctl version`.
 * Pure (no libbpf, no file access): the facts come from status's probe.
 */
#ifndef MTHPCTL_NEEDS_H
#define MTHPCTL_NEEDS_H

#include <stdbool.h>
#include <linux/types.h>
#include <linux/types.h>


/* What mthpctl looks for in the kernel's BTF (mthpctl_probe_kernel()): the
 * series' struct_ops and kfuncs, bpf_wq, and the member offsets attach and
 * status need. */
struct mthpctl_features {
	bool mthp_ops;		/* bpf_mthp_ops and its struct_ops value type */
	bool psi_kfunc;		/* bpf_cgroup_psi_stall */
	bool memcg_kfuncs;	/* bpf_get_mem_cgroup */
	bool wq;		/* bpf_wq_start */
	bool collapse_kfunc;	/* bpf_mthp_collapse_on_return: optional, auto
				 * leaves a grown process to khugepaged
				 * without it (kernel/ patch 10) */
	int ops_data_off;	/* of data in bpf_struct_ops_bpf_mthp_ops, or -ENOENT */
	int ops_fn_off;		/* of choose_orders in bpf_mthp_ops, or -ENOENT */
	__u32 ops_type_id;	/* BTF id of bpf_mthp_ops (BPF_PROG_QUERY); 0: none */
};

struct mthpctl_have {
	bool btf;			/* /sys/kernel/btf/vmlinux readable */
	struct mthpctl_features feat;	/* found in it (nothing without BTF) */
	bool psi;			/* /proc/pressure/memory readable */
	bool cgroup2;			/* a cgroup2 mount */
	bool memcg;			/* its root offers the memory controller */
	bool bpffs;			/* a bpffs mount */
};

struct mthpctl_need {
	const char *what;		/* "bpffs", "bpf_mthp_ops", ... */
	const char *fix;		/* what to do about it, one line */
};

#define MTHPCTL_NR_NEEDS	6	/* the most mthpctl_missing() reports */

/* The needs h lacks, in the order to fix them (a kernel without BTF is
 * reported once, not once per thing its BTF would show), into out (room
 * for MTHPCTL_NR_NEEDS). Returns how many: 0 means attach can work here. */
int mthpctl_missing(const struct mthpctl_have *h, struct mthpctl_need *out);

#endif
