// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "needs.h"

static const struct mthpctl_need need_btf = {
	"BTF", "a kernel built with CONFIG_DEBUG_INFO_BTF=y, for /sys/kernel/btf/vmlinux" };
static const struct mthpctl_need need_ops = {
	"bpf_mthp_ops", "a kernel with the kernel/ series applied to its base, kernel/BASE" };
static const struct mthpctl_need need_psi_kfunc = {
	"kfunc bpf_cgroup_psi_stall", "the whole kernel/ series, built with CONFIG_PSI=y" };
static const struct mthpctl_need need_memcg_kfuncs = {
	"kfunc bpf_get_mem_cgroup", "the kernel/ series built with CONFIG_MEMCG=y" };
static const struct mthpctl_need need_wq = {
	"bpf_wq", "the kernel/ series on its base, kernel/BASE, which has bpf_wq" };
static const struct mthpctl_need need_psi = {
	"PSI", "CONFIG_PSI=y, booted without psi=0, or with psi=1 if CONFIG_PSI_DEFAULT_DISABLED=y" };
static const struct mthpctl_need need_cgroup2 = {
	"cgroup2", "mount -t cgroup2 none /sys/fs/cgroup" };
static const struct mthpctl_need need_memcg = {
	"memory controller in cgroup2", "boot with cgroup_no_v1=memory, so that cgroup v1 does not hold it" };
static const struct mthpctl_need need_bpffs = {
	"bpffs", "mount -t bpf bpf /sys/fs/bpf" };

int mthpctl_missing(const struct mthpctl_have *h, struct mthpctl_need *out)
{
	int n = 0;

	/* Without BTF nothing it would show is known; without the series the
	 * fix is the series on its base, which has the kfuncs and bpf_wq:
	 * either is one thing to fix, not one per feature. */
	if (!h->btf) {
		out[n++] = need_btf;
	} else if (!h->feat.mthp_ops) {
		out[n++] = need_ops;
	} else {
		if (!h->feat.psi_kfunc)
			out[n++] = need_psi_kfunc;
		if (!h->feat.memcg_kfuncs)
			out[n++] = need_memcg_kfuncs;
		if (!h->feat.wq)
			out[n++] = need_wq;
	}
	if (!h->psi)
		out[n++] = need_psi;
	if (!h->cgroup2)
		out[n++] = need_cgroup2;
	else if (!h->memcg)
		out[n++] = need_memcg;
	if (!h->bpffs)
		out[n++] = need_bpffs;
	return n;
}
