/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Layout of the counters the policy keeps in its maps, read by
 * `mthpctl status` through the pinned maps. Shared by bpf/ and src/.
 */
#ifndef MTHPCTL_STATS_H
#define MTHPCTL_STATS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "mthp_policy.h"

/* Counters of one policy or one cgroup. */
struct mthpctl_counters {
	__u64 calls[MTHPCTL_NR_TVA];			/* hook calls by tva type */
	__u64 fallbacks[MTHPCTL_NR_REASON][MTHPCTL_NR_TVA]; /* narrowed calls */
};

/* Per-cgroup entry, value of the "cgroups" hash map (key: __u64 cgroup id).
 * The BPF side prepends a struct bpf_wq (16 bytes, 8-aligned); user space
 * sees it as wq_opaque (the kernel zeroes it on lookup). */
struct mthpctl_cg_entry {
	__u64 wq_opaque[2];
	struct mthpctl_state state;
	__u64 last_kick_ns;		/* last time the sampler was started */
	__u64 nr_kicks;
	struct mthpctl_counters cnt;
};

/* Per-policy totals, value 0 of the one-element "totals" array map. */
struct mthpctl_totals {
	struct mthpctl_counters cnt;
	__u64 samples;		/* sampler runs */
	__u64 psi_errors;	/* bpf_cgroup_psi_stall() failed (PSI off?) */
	__u64 memcg_errors;	/* no memory cgroup for the cgroup */
	__u64 entries_created;
	__u64 entries_removed;	/* cgroup gone */
	__u64 map_full;		/* no room for a new cgroup's entry */
};

#endif /* MTHPCTL_STATS_H */
