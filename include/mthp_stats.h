/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Layout of what the policy keeps in its maps, read by `mthpctl status`
 * through the pinned maps. Shared by bpf/ and src/.
 *
 * Memory scales with use, not with a preallocated table: per-cgroup state
 * lives in cgroup local storage ("cgstate", created on a cgroup's first
 * fault, freed with the cgroup), the counters are per-CPU (one slot per
 * CPU in a global array, pinned as "totals"), and
 * one sampler work item serves all cgroups through a bounded queue of
 * cgroup ids ("pending").
 */
#ifndef MTHPCTL_STATS_H
#define MTHPCTL_STATS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "mthp_policy.h"

/* Counters of one policy (summed over CPUs by user space). fallbacks:
 * calls by reason they narrowed the orders for; its row MTHPCTL_REASON_NONE
 * counts the calls that narrowed nothing (readers skip it). Every call
 * counts in exactly one row, so the hook does not write calls:
 * mthpctl_read_totals() fills it with the sum of the rows (one memory
 * increment less per call on the fast path). */
/* Rows of fallbacks: a power of two >= MTHPCTL_NR_REASON (the rows past
 * MTHPCTL_NR_REASON stay 0); the layout of the pinned totals map that status
 * reads, of this build's policies and of those attached before. */
#define MTHPCTL_REASON_ROWS	8

struct mthpctl_counters {
	__u64 calls[MTHPCTL_NR_TVA];	/* hook calls by tva type: sum of the rows */
	__u64 fallbacks[MTHPCTL_REASON_ROWS][MTHPCTL_NR_TVA];
};
_Static_assert(MTHPCTL_NR_REASON <= MTHPCTL_REASON_ROWS &&
	       !(MTHPCTL_REASON_ROWS & (MTHPCTL_REASON_ROWS - 1)),
	       "fallbacks rows: a power of two holding every reason");

/* Per-cgroup value of the "cgstate" cgroup local storage (key: a cgroup
 * directory fd). */
struct mthpctl_cg {
	struct mthpctl_state state;
	__u64 last_kick_ns;		/* last time a sample was requested */
	__u64 nr_kicks;
	struct mthpctl_fill_hint fill;	/* for the sampler: see MTHPCTL_FILL_WINDOWS */
};

/* Per-policy totals. The built-in policy keeps one in each CPU's slot
 * (struct mthpctl_cpu_slot); a policy of the mthp_ops.h convention keeps
 * one per CPU in a per-CPU array whose value may be longer. Readers sum
 * them (mthpctl_read_totals(), which reads both layouts). */
struct mthpctl_totals {
	struct mthpctl_counters cnt;
	__u64 samples;		/* cgroups sampled */
	__u64 psi_errors;	/* bpf_cgroup_psi_stall() failed (PSI off?) */
	__u64 memcg_errors;	/* no memory cgroup for the cgroup */
	__u64 entries_created;	/* cgroups given state */
	__u64 queue_full;	/* sample requests dropped (retried later) */
	__u64 gone;		/* queued cgroups removed before their sample */
	__u64 sampler_runs;	/* runs of the sampler work item */
	__u64 wq_errors;	/* the sampler work item or the memo tick
				 * could not be set up or started */
	__u64 no_state;		/* a queued cgroup had no state (storage full?) */
};

/* One CPU's slot of the global array "cpu_slots" (map .data.slots, pinned
 * as "totals"): its counters (user space sums t over the slots: see
 * mthpctl_read_totals()), its memo (a word: see mthpctl_memo_word()) and its
 * generation (in steps of MTHPCTL_MEMO_GEN_STEP). Cache-line aligned: no
 * two CPUs write one line. */
struct mthpctl_cpu_slot {
	struct mthpctl_totals t;
	__u64 memo;
	__u32 gen;
	__u32 pad;
} __attribute__((aligned(64)));

/* Number of sample requests that may wait at once (not a limit on the
 * cgroups a policy tracks: a dropped request is made again later). */
#define MTHPCTL_PENDING_MAX	1024

#endif /* MTHPCTL_STATS_H */
