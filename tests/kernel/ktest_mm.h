/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The khugepaged registration test's argument block, shared by the syscall
 * program in ktest_policies.bpf.c (which fills it) and ktest.c (which
 * reads it). Self-contained as ktest_psi.h.
 */
#ifndef KTEST_MM_H
#define KTEST_MM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* include/linux/mm_types.h: set while an mm is registered with khugepaged */
#define KTEST_MMF_VM_HUGEPAGE 17

struct mm_flags_args {
	__u32 pid;		/* in: a process */
	__u32 has_mm;		/* out: 1 if it has an mm */
	__u64 flags;		/* out: the first word of its mm's flags */
};

#endif /* KTEST_MM_H */
