// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl policies: one struct_ops bpf_mthp_ops program whose behaviour is
 * chosen by its read-only parameters (auto, fixed, never).
 *
 * choose_orders() runs for every THP decision of a task in the attached
 * cgroup's subtree (non-sleepable, under RCU). fixed and never answer from
 * their parameters alone. auto looks up the cgroup's local storage (created
 * on first use, freed with the cgroup), answers from its state and the
 * faulting mapping, and at most every mthpctl_sample_interval() queues the
 * cgroup's id for the one sampler work item. The sampler (sleepable) reads
 * PSI memory-full stall and anon+shmem usage of each queued cgroup and feeds
 * them to the shared decision function in include/mthp_policy.h. Counters are
 * per-CPU: no cache line is shared by the CPUs on the fault path.
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
	.top_order = MTHPCTL_DEFAULT_TOP_ORDER,
	.window_ns = MTHPCTL_DEFAULT_WINDOW_NS,
	.threshold_ns = MTHPCTL_DEFAULT_THRESHOLD_NS,
	.min_usage = MTHPCTL_DEFAULT_MIN_USAGE,
};

/* The running kernel's page size (set by mthpctl before load). */
const volatile __u32 page_shift = 12;

/* A copy made with volatile reads (the values mthpctl stored). */
static __always_inline void get_params(struct mthpctl_params *p)
{
	p->magic = params.magic;
	p->policy = params.policy;
	p->max_order = params.max_order;
	p->top_order = params.top_order;
	p->window_ns = params.window_ns;
	p->threshold_ns = params.threshold_ns;
	p->min_usage = params.min_usage;
}

struct {
	__uint(type, BPF_MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mthpctl_cg);
} cgstate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mthpctl_totals);
} totals SEC(".maps");

/* Cgroup ids waiting for a sample. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, MTHPCTL_PENDING_MAX);
	__type(value, __u64);
} pending SEC(".maps");

struct sampler {
	struct bpf_wq wq;
	__u32 ready;		/* 0: not set up, 1: being set up, 2: ready */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sampler);
} sampler SEC(".maps");

/*
 * The hook's clock: the jiffies counter (bpf_jiffies64() is inlined by the
 * verifier to a load), converted to ns since the calibration point with
 * ns_per_jiffy, which the sampler measures once against bpf_ktime_get_ns()
 * over at least a second. It only gates how often a cgroup is queued for a
 * sample, so a tick (a few ms) of resolution is plenty, and the fault path
 * makes no clock call. It is measured once and never changed: a rate that
 * moved by 1 ns per jiffy later would move this clock by seconds, backwards
 * too, and a clock going back would queue a sample on every fault. Until
 * the calibration is done the hook uses bpf_ktime_get_ns().
 */
__u64 calib_t0, calib_j0, ns_per_jiffy;

static __always_inline __u64 hook_now(void)
{
	__u64 npj = ns_per_jiffy;

	if (!npj)
		return bpf_ktime_get_ns();
	return calib_t0 + (bpf_jiffies64() - calib_j0) * npj;
}

static void calibrate(void)
{
	__u64 t = bpf_ktime_get_ns(), j = bpf_jiffies64();

	if (ns_per_jiffy)
		return;
	if (!calib_t0) {
		calib_t0 = t;
		calib_j0 = j;
	} else if (j > calib_j0 && t - calib_t0 >= 1000000000ULL) {
		ns_per_jiffy = (t - calib_t0) / (j - calib_j0);
	}
}

static __always_inline struct mthpctl_totals *get_totals(void)
{
	__u32 k = 0;

	return bpf_map_lookup_elem(&totals, &k);
}

/* Counters live in this CPU's copy of "totals": no line is shared between
 * CPUs and no atomic is needed (the hook runs with migration disabled; only
 * a hook preempted between load and store could lose one count). */
static __always_inline void inc(__u64 *p)
{
	*p += 1;
}

static __always_inline __u32 tva_index(enum tva_type type)
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

/*
 * Bytes between the memory charged and the nearest limit (memory.high or
 * memory.max) of memcg and its ancestors; false when none is set. Reclaim
 * and throttling start there, whatever the stall says yet.
 */
#define MTHPCTL_LIMIT_LEVELS	16

static __u64 memcg_headroom(struct mem_cgroup *memcg)
{
	struct page_counter *pc = &memcg->memory;
	unsigned long best = ~0UL;
	int i;

	for (i = 0; i < MTHPCTL_LIMIT_LEVELS && pc; i++) {
		unsigned long lim = pc->high < pc->max ? pc->high : pc->max;
		long usage = pc->usage.counter;

		/* the root's counters are unlimited (PAGE_COUNTER_MAX) */
		if (lim < (~0UL >> (page_shift + 1))) {
			unsigned long room = usage < 0 || (unsigned long)usage >= lim ?
					     0 : lim - usage;

			if (room < best)
				best = room;
		}
		pc = pc->parent;
	}
	return best == ~0UL ? MTHPCTL_NO_LIMIT : (__u64)best << page_shift;
}

/*
 * The decision update, as a global function: the verifier checks it once,
 * for any state and sample, instead of once for every combination of the
 * sampler's branches that led to it (memcg there or not, PSI on or off,
 * a limit set or not, ...): that product took the load from 1 s to 6 s.
 */
__noinline int update_state(struct mthpctl_state *s, const struct mthpctl_sample *x)
{
	struct mthpctl_params p;

	if (!s || !x)
		return 0;
	get_params(&p);
	return mthpctl_update(&p, s, x);
}

/* Take one sample of cgroup ID (sleepable context). */
static void sample_cgroup(__u64 id, struct mthpctl_totals *t)
{
	struct mthpctl_sample x = { .headroom = MTHPCTL_NO_LIMIT };
	struct mthpctl_state s;
	struct mem_cgroup *memcg;
	struct mthpctl_cg *e;
	struct cgroup *cgrp;

	cgrp = bpf_cgroup_from_id(id);
	if (!cgrp) {
		if (t)
			inc(&t->gone);
		return;
	}
	e = bpf_cgrp_storage_get(&cgstate, cgrp, 0, 0);
	if (!e) {
		if (t)
			inc(&t->no_state);
		goto out;
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
			x.headroom = memcg_headroom(memcg);
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

	x.now_ns = bpf_ktime_get_ns();
	s = e->state;
	update_state(&s, &x);
	e->state = s;
	if (t)
		inc(&t->samples);
out:
	bpf_cgroup_release(cgrp);
}

static long sample_next(__u64 i, void *ctx)
{
	__u64 id;

	if (bpf_map_pop_elem(&pending, &id))
		return 1;	/* queue empty: stop */
	sample_cgroup(id, get_totals());
	return 0;
}

/* The sampler work item: every queued cgroup, once. */
static int sampler_cb(void *map, int *key, void *value)
{
	struct mthpctl_totals *t = get_totals();

	if (t)
		inc(&t->sampler_runs);
	calibrate();
	if (!bpf_ksym_exists(bpf_cgroup_from_id))
		return 0;
	bpf_loop(MTHPCTL_PENDING_MAX, sample_next, NULL, 0);
	return 0;
}

static __always_inline void kick_sampler(struct mthpctl_totals *t)
{
	struct sampler *w;
	__u32 k = 0;
	int err;

	if (!bpf_ksym_exists(bpf_wq_init) || !bpf_ksym_exists(bpf_wq_set_callback) ||
	    !bpf_ksym_exists(bpf_wq_start))
		return;
	w = bpf_map_lookup_elem(&sampler, &k);
	if (!w)
		return;
	if (w->ready != 2) {
		/* one CPU sets the work item up, once */
		if (__sync_val_compare_and_swap(&w->ready, 0, 1) != 0)
			return;
		err = bpf_wq_init(&w->wq, &sampler, 0);
		if ((err && err != -16 /* EBUSY: set up by an earlier try */) ||
		    bpf_wq_set_callback(&w->wq, sampler_cb, 0)) {
			w->ready = 0;
			if (t)
				inc(&t->wq_errors);
			return;
		}
		w->ready = 2;
	}
	if (bpf_wq_start(&w->wq, 0) && t)
		inc(&t->wq_errors);
}

/* Queue a sample of the cgroup if its last one is old enough. */
static __always_inline void maybe_sample(struct mthpctl_cg *e, __u64 id,
					 const struct mthpctl_params *p,
					 struct mthpctl_totals *t)
{
	__u64 now = hook_now();
	__u64 last = e->last_kick_ns;

	if (last && now - last < mthpctl_sample_interval(p, &e->state))
		return;
	/* one CPU wins the interval */
	if (__sync_val_compare_and_swap(&e->last_kick_ns, last, now) != last)
		return;
	if (!last && t)
		inc(&t->entries_created);
	if (bpf_map_push_elem(&pending, &id, 0)) {
		if (t)
			inc(&t->queue_full);
		return;
	}
	inc(&e->nr_kicks);
	kick_sampler(t);
}

SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(choose_orders, struct cgroup *cgrp,
		       struct vm_area_struct *vma, enum tva_type type,
		       unsigned long orders)
{
	struct mthpctl_totals *t = get_totals();
	struct mthpctl_vma_info vi, *vip = NULL;
	struct mthpctl_state none = {};
	struct mthpctl_state *s = &none;
	struct mthpctl_cg *e = NULL;
	struct mthpctl_params p;
	__u32 tva = tva_index(type);
	__u32 reason = MTHPCTL_REASON_NONE;
	__u64 allow;

	get_params(&p);
	if (p.policy == MTHPCTL_POLICY_AUTO) {
		if (cgrp)
			e = bpf_cgrp_storage_get(&cgstate, cgrp, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (e)
			s = &e->state;
		if (tva == MTHPCTL_TVA_PAGEFAULT && vma) {
			/* plain loads (BTF pointer walk), no helper calls */
			struct mm_struct *mm = vma->vm_mm;

			if (mm) {
				vi.vma_bytes = vma->vm_end - vma->vm_start;
				vi.mm_anon_bytes = (__u64)mm->rss_stat[MM_ANONPAGES].count
						   << page_shift;
				vip = &vi;
			}
		}
	}
	allow = mthpctl_orders(&p, s, tva, orders, vip, &reason);

	if (t && tva < MTHPCTL_NR_TVA && reason < MTHPCTL_NR_REASON) {
		inc(&t->cnt.calls[tva]);
		if (reason != MTHPCTL_REASON_NONE)
			inc(&t->cnt.fallbacks[reason][tva]);
	}
	if (e)
		maybe_sample(e, cgrp->kn->id, &p, t);	/* trusted: direct access */
	return allow;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops mthpctl_ops = {
	.choose_orders = (void *)choose_orders,
};
