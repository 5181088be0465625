// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The types mthpctl looks for in the kernel's BTF, and a few of every other
 * kind, for the seeds of fuzz_btf (their .BTF sections):
 *
 *   clang-19 -g -O2 -target bpf -c tests/fuzz/btf-seed.c -o /tmp/s.o
 *   llvm-objcopy-19 --dump-section .BTF=tests/fuzz/corpus/btf/NAME /tmp/s.o
 *
 * with -DSTOCK for a kernel without the series, -DBITFIELDS for the
 * kind_flag member layout.
 */
typedef unsigned long u64;
enum tva_type { TVA_SMAPS, TVA_PAGEFAULT, TVA_KHUGEPAGED };
struct cgroup { int level; u64 id; };

#ifndef STOCK
struct bpf_mthp_ops {
#ifdef BITFIELDS
	unsigned int flags : 3;
#endif
	u64 (*choose_orders)(struct cgroup *cgrp, void *vma, enum tva_type type, u64 orders);
};
struct bpf_struct_ops_bpf_mthp_ops {
	int refcnt;
	int state;
	struct bpf_mthp_ops data;
};
struct bpf_struct_ops_bpf_mthp_ops ops_value;

int bpf_cgroup_psi_stall(struct cgroup *cgrp, int res, int full) { return cgrp->level + res + full; }
void *bpf_get_mem_cgroup(struct cgroup *cgrp) { return cgrp; }
#endif
int bpf_wq_start(void *wq, unsigned int flags) { return !!wq + flags; }

volatile const char names[4][8] = { "a", "b" };
union u { int i; float f; } uv;
