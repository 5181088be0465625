// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "needs.h"

enum need {
	NEED_BTF, NEED_OPS, NEED_PSI_KFUNC, NEED_MEMCG_KFUNCS, NEED_WQ,
	NEED_PSI, NEED_CGROUP2, NEED_MEMCG, NEED_BPFFS,
};

static const struct mthpctl_need needs[] = {
	[NEED_BTF] = { "BTF", "a kernel built with CONFIG_DEBUG_INFO_BTF=y, for /sys/kernel/btf/vmlinux" },
	[NEED_OPS] = { "bpf_mthp_ops", "a kernel with the kernel/ series applied to its base, kernel/BASE" },
	[NEED_PSI_KFUNC] = { "kfunc bpf_cgroup_psi_stall",
			     "the whole kernel/ series, built with CONFIG_PSI=y" },
	[NEED_MEMCG_KFUNCS] = { "kfunc bpf_get_mem_cgroup", "the kernel/ series built with CONFIG_MEMCG=y" },
	[NEED_WQ] = { "bpf_wq", "the kernel/ series on its base, kernel/BASE, which has bpf_wq" },
	[NEED_PSI] = { "PSI",
		       "CONFIG_PSI=y, booted without psi=0, or with psi=1 if CONFIG_PSI_DEFAULT_DISABLED=y" },
	[NEED_CGROUP2] = { "cgroup2", "mount -t cgroup2 none /sys/fs/cgroup" },
	[NEED_MEMCG] = { "memory controller in cgroup2",
			 "boot with cgroup_no_v1=memory, so that cgroup v1 does not hold it" },
	[NEED_BPFFS] = { "bpffs", "mount -t bpf bpf /sys/fs/bpf" },
};

int mthpctl_missing(const struct mthpctl_have *h, struct mthpctl_need *out)
{
	int n = 0;

	/* Without BTF nothing it would show is known; without the series the
	 * fix is the series on its base, which has the kfuncs and bpf_wq:
	 * either is one thing to fix, not one per feature. */
	if (!h->btf) {
		out[n++] = needs[NEED_BTF];
	} else if (!h->feat.mthp_ops) {
		out[n++] = needs[NEED_OPS];
	} else {
		if (!h->feat.psi_kfunc)
			out[n++] = needs[NEED_PSI_KFUNC];
		if (!h->feat.memcg_kfuncs)
			out[n++] = needs[NEED_MEMCG_KFUNCS];
		if (!h->feat.wq)
			out[n++] = needs[NEED_WQ];
	}
	if (!h->psi)
		out[n++] = needs[NEED_PSI];
	if (!h->cgroup2)
		out[n++] = needs[NEED_CGROUP2];
	else if (!h->memcg)
		out[n++] = needs[NEED_MEMCG];
	if (!h->bpffs)
		out[n++] = needs[NEED_BPFFS];
	return n;
}
