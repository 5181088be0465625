/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the built-in policies need of the running kernel and its mounts,
 * and the fix for each thing missing: the verdict of `mthpctl version`.
 * Pure (no libbpf, no file access): the facts come from status's probe.
 */
#ifndef MTHPCTL_NEEDS_H
#define MTHPCTL_NEEDS_H

#include <stdbool.h>

#include "kbtf.h"

struct mthpctl_have {
	bool btf;			/* /sys/kernel/btf/vmlinux readable */
	struct kbtf_features feat;	/* found in it (nothing without BTF) */
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
