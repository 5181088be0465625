// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl policies: one struct_ops bpf_mthp_ops program whose behaviour is
 * chosen by its read-only parameters (auto, fixed, never).
 *
 * choose_orders() runs for every THP decision of a task in the attached
 * cgroup's subtree (non-sleepable, under RCU). It looks up the per-cgroup
 * entry (creating it on first use), answers from the current decision, counts
 * the call, and, at most every mthpctl_sample_interval(), starts the entry's bpf_wq. The wq
 * callback (sleepable) samples PSI memory-full stall and anon+shmem usage and
 * feeds them to the shared decision function in include/mthp_policy.h.
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "mthp_policy.h"
#include "mthp_stats.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* kfuncs (declared here so the header does not need to carry them) */
extern struct cgroup *bpf_cgroup_from_id(u64 cgid) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;
extern int bpf_wq_init(struct bpf_wq *wq, void *p__map, unsigned int flags) __ksym __weak;
extern int bpf_wq_start(struct bpf_wq *wq, unsigned int flags) __ksym __weak;
extern int bpf_wq_set_callback(struct bpf_wq *wq,
			       int (callback_fn)(void *map, int *key, void *value),
			       unsigned int flags) __ksym __weak;
extern s64 bpf_cgroup_psi_stall(struct cgroup *cgrp, enum psi_states state) __ksym __weak;
extern struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym __weak;
extern void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym __weak;
extern unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx) __ksym __weak;
extern void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym __weak;

/* Set by mthpctl before load. Read it only through get_params(): a cast that
 * drops the volatile lets clang fold the reads to these defaults. */
const volatile struct mthpctl_params params = {
	.magic = MTHPCTL_PARAMS_MAGIC,
	.policy = MTHPCTL_POLICY_AUTO,
	.max_order = MTHPCTL_NO_CAP,
	.window_ns = 1000000000ULL,
	.threshold_ns = 100000000ULL,
	.min_usage = 16ULL << 20,
};

/* A copy made with volatile reads (the values mthpctl stored). */
static __always_inline void get_params(struct mthpctl_params *p)
{
	p->magic = params.magic;
	p->policy = params.policy;
	p->max_order = params.max_order;
	p->pad = 0;
	p->window_ns = params.window_ns;
	p->threshold_ns = params.threshold_ns;
	p->min_usage = params.min_usage;
}

struct cg_entry {
	struct bpf_wq wq;
	struct mthpctl_state state;
	__u64 last_kick_ns;
	__u64 nr_kicks;
	struct mthpctl_counters cnt;
};

_Static_assert(sizeof(struct cg_entry) == sizeof(struct mthpctl_cg_entry),
	       "struct cg_entry and struct mthpctl_cg_entry differ");
_Static_assert(__builtin_offsetof(struct cg_entry, state) ==
	       __builtin_offsetof(struct mthpctl_cg_entry, state),
	       "bpf_wq is not 16 bytes");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct cg_entry);
} cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mthpctl_totals);
} totals SEC(".maps");

/* Never written: the template for new entries (too big for the stack).
 * Plain bytes: the verifier refuses a value with a bpf_wq as the source of
 * bpf_map_update_elem() ("bpf_wq cannot be accessed directly"). */
struct cg_blank {
	__u8 bytes[sizeof(struct cg_entry)];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_blank);
} zero_entry SEC(".maps");

static __always_inline struct mthpctl_totals *get_totals(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&totals, &k);
}

static __always_inline void inc(__u64 *p)
{
	__sync_fetch_and_add(p, 1);
}

static __u32 tva_index(enum tva_type type)
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

/* Sampler: runs in process context (sleepable). */
static int sample_cb(void *map, int *key, void *value)
{
	struct cg_entry *e = value;
	struct mthpctl_totals *t = get_totals();
	struct mthpctl_sample x = {};
	struct mthpctl_params p;
	struct mthpctl_state s;
	struct mem_cgroup *memcg;
	struct cgroup *cgrp;
	__u64 id = *(__u64 *)key;

	if (!bpf_ksym_exists(bpf_cgroup_from_id))
		return 0;
	cgrp = bpf_cgroup_from_id(id);
	if (!cgrp) {
		/* the cgroup is gone: forget it */
		bpf_map_delete_elem(&cgroups, &id);
		if (t)
			inc(&t->entries_removed);
		return 0;
	}

	if (bpf_ksym_exists(bpf_get_mem_cgroup) &&
	    bpf_ksym_exists(bpf_mem_cgroup_page_state)) {
		memcg = bpf_get_mem_cgroup(&cgrp->self);
		if (memcg) {
			unsigned long anon, shmem;

			if (bpf_ksym_exists(bpf_mem_cgroup_flush_stats))
				bpf_mem_cgroup_flush_stats(memcg);
			anon = bpf_mem_cgroup_page_state(memcg,
				bpf_core_enum_value(enum node_stat_item, NR_ANON_MAPPED));
			shmem = bpf_mem_cgroup_page_state(memcg,
				bpf_core_enum_value(enum node_stat_item, NR_SHMEM));
			if (anon != (unsigned long)-1 && shmem != (unsigned long)-1) {
				x.usage = anon + shmem;
				x.flags |= MTHPCTL_SAMPLE_USAGE;
			}
			bpf_put_mem_cgroup(memcg);
		} else if (t) {
			inc(&t->memcg_errors);
		}
	}

	if (bpf_ksym_exists(bpf_cgroup_psi_stall)) {
		s64 stall = bpf_cgroup_psi_stall(cgrp,
				bpf_core_enum_value(enum psi_states, PSI_MEM_FULL));

		if (stall >= 0) {
			x.stall_ns = stall;
			x.flags |= MTHPCTL_SAMPLE_STALL;
		} else if (t) {
			inc(&t->psi_errors);
		}
	}
	bpf_cgroup_release(cgrp);

	x.now_ns = bpf_ktime_get_ns();
	s = e->state;
	get_params(&p);
	mthpctl_update(&p, &s, &x);
	e->state = s;
	if (t)
		inc(&t->samples);
	return 0;
}

static struct cg_entry *cg_entry_get(__u64 id, struct mthpctl_totals *t)
{
	struct cg_blank *zero;
	struct cg_entry *e;
	__u32 k = 0;
	long err;

	e = bpf_map_lookup_elem(&cgroups, &id);
	if (e)
		return e;
	zero = bpf_map_lookup_elem(&zero_entry, &k);
	if (!zero)
		return NULL;
	err = bpf_map_update_elem(&cgroups, &id, zero, BPF_NOEXIST);
	e = bpf_map_lookup_elem(&cgroups, &id);
	if (!e) {
		if (t && err && err != -17 /* EEXIST */)
			inc(&t->map_full);
		return NULL;
	}
	if (!err) {
		/* we created it: set up the sampler once */
		if (params.policy == MTHPCTL_POLICY_AUTO &&
		    bpf_ksym_exists(bpf_wq_init) &&
		    bpf_ksym_exists(bpf_wq_set_callback) &&
		    !bpf_wq_init(&e->wq, &cgroups, 0))
			bpf_wq_set_callback(&e->wq, sample_cb, 0);
		if (t)
			inc(&t->entries_created);
	}
	return e;
}

static void maybe_sample(struct cg_entry *e, const struct mthpctl_params *p)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 last = e->last_kick_ns;

	if (last && now - last < mthpctl_sample_interval(p, &e->state))
		return;
	/* one CPU wins the window */
	if (__sync_val_compare_and_swap(&e->last_kick_ns, last, now) != last)
		return;
	if (bpf_ksym_exists(bpf_wq_start) && !bpf_wq_start(&e->wq, 0))
		inc(&e->nr_kicks);
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(choose_orders, struct cgroup *cgrp,
		       struct vm_area_struct *vma, enum tva_type type,
		       unsigned long orders)
{
	struct mthpctl_totals *t = get_totals();
	struct mthpctl_state none = {};
	struct mthpctl_state *s = &none;
	struct mthpctl_params p;
	struct cg_entry *e = NULL;
	__u32 tva = tva_index(type);
	__u32 reason = MTHPCTL_REASON_NONE;
	__u64 allow;

	if (cgrp)
		e = cg_entry_get(cgrp->kn->id, t);	/* trusted: direct access */
	if (e)
		s = &e->state;
	get_params(&p);
	allow = mthpctl_orders(&p, s, tva,
			       orders, &reason);

	if (tva < MTHPCTL_NR_TVA && reason < MTHPCTL_NR_REASON) {
		if (t) {
			inc(&t->cnt.calls[tva]);
			if (reason != MTHPCTL_REASON_NONE)
				inc(&t->cnt.fallbacks[reason][tva]);
		}
		if (e) {
			inc(&e->cnt.calls[tva]);
			if (reason != MTHPCTL_REASON_NONE)
				inc(&e->cnt.fallbacks[reason][tva]);
		}
	}
	if (e && params.policy == MTHPCTL_POLICY_AUTO)
		maybe_sample(e, &p);
	return allow;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops mthpctl_ops = {
	.choose_orders = (void *)choose_orders,
};
