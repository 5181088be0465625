/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PSI kfunc test's argument block, shared by the syscall program in
 * ktest_policies.bpf.c (which fills it) and ktest.c (which reads it).
 * Self-contained: __u64/__s64 come from vmlinux.h on the BPF side and from
 * <linux/types.h> in user space.
 */
#ifndef KTEST_PSI_H
#define KTEST_PSI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

struct psi_args {
	__u64 cgroup_id;	/* in: the cgroup to read */
	__s64 mem_some;		/* out: bpf_cgroup_psi_stall()'s stall in ns, or its -errno */
	__s64 mem_full;
	__s64 io_some;
	__s64 bad_state;	/* one past enum bpf_psi_stall: must be refused */
};

#endif /* KTEST_PSI_H */
