// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl policies: one struct_ops bpf_mthp_ops program whose behaviour is
 * chosen by its read-only parameters (auto, fixed, never, simple).
 *
 * choose_orders() runs for every THP decision of a task in the attached
 * cgroup's subtree (non-sleepable, under RCU). fixed and never answer from
 * their parameters alone. auto looks up the cgroup's local storage (created
 * on first use, freed with the cgroup), answers from its state and the
 * faulting mapping, and at most every mthpctl_sample_interval() queues the
 * cgroup's id for the one sampler work item. Most calls of auto need none
 * of that: each CPU keeps the answer of the last cgroup it decided for (a
 * memo word) until the cgroup's state changes or the memo tick, a timer that
 * runs while the cgroups fault, makes it stale (so that the samples that
 * fall due are requested). simple keeps state and samples as auto does, but
 * answers every call on the slow path (it is a baseline, not tuned). The sampler (sleepable) reads PSI memory-full
 * stall and anon+shmem usage of each queued cgroup and feeds them to the
 * shared decision function in include/mthp_policy.h. Counters are per-CPU:
 * no cache line is shared by the CPUs on the fault path.
 */
#define BPF_NO_KFUNC_PROTOTYPES
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "mthp_ops.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* kfuncs (declared here so the header does not need to carry them) */
extern struct cgroup *bpf_cgroup_from_id(u64 cgid) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;
extern int bpf_wq_init(struct bpf_wq *wq, void *p__map, unsigned int flags) __ksym __weak;
extern int bpf_wq_start(struct bpf_wq *wq, unsigned int flags) __ksym __weak;
extern int bpf_wq_set_callback(struct bpf_wq *wq,
			       int (callback_fn)(void *map, int *key, void *value),
			       unsigned int flags) __ksym __weak;
extern int bpf_cgroup_psi_stall(struct cgroup *cgrp, enum bpf_psi_stall which,
				u64 *stall_ns) __ksym __weak;
extern struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym __weak;
extern void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym __weak;
extern unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx) __ksym __weak;
extern void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym __weak;
extern int bpf_mthp_collapse_on_return(struct bpf_mthp_ctx *ctx) __ksym __weak;

/* Set by mthpctl before load. Read it only through get_params(): a cast that
 * drops the volatile lets clang fold the reads to these defaults. */
const volatile struct mthpctl_params params = MTHPCTL_PARAMS_DEFAULTS;

/* The running kernel's page size (set by mthpctl before load). */
const volatile __u32 page_shift = 12;

/* A hash of this object's ELF (set by mthpctl; read by no program): part of
 * the rodata mthpctl compares before it links a cgroup to the loaded object
 * of another cgroup, so an object of another mthpctl build is not shared. */
const volatile __u64 object_hash;

#ifdef MTHPCTL_OBJECT_VARIANT
/* Another object of the same policy (make nri-e2e's upgrade case builds
 * one with -DMTHPCTL_OBJECT_VARIANT=N): only these bytes differ. */
const volatile __u32 object_variant = MTHPCTL_OBJECT_VARIANT;
#endif

#define READ_ONCE(x)		(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

/* A copy made with volatile reads (the values mthpctl stored), field by
 * field (MTHPCTL_PARAMS). */
static __always_inline void get_params(struct mthpctl_params *p)
{
#define COPY_PARAM(type, field, dflt)	p->field = params.field;
	MTHPCTL_PARAMS(COPY_PARAM)
#undef COPY_PARAM
}

struct {
	__uint(type, BPF_MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mthpctl_cg);
} cgstate SEC(".maps");

/*
 * The fast path's memo: the answer of the last cgroup this CPU decided for,
 * so that the common call (a page fault of the same cgroup as the last one)
 * needs neither the storage lookup nor the decision. One word in this
 * CPU's slot (mthpctl_memo_word() in include/mthp_policy.h), valid while
 *   - its key is the low 32 bits of the cgroup's serial number (unlike its
 *     address and like its id, never reused, and one load away from the
 *     hook's argument; two cgroups 2^32 creations apart would share a key);
 *   - its generation is this CPU's gen. Two things bump every CPU's gen:
 *     the sampler, after a state update that changes an answer, so an
 *     answer is never older than the state it came from; and the memo
 *     tick (tick_cb()), every window / MTHPCTL_MEMO_TICKS_PER_WINDOW while
 *     the policy's cgroups fault, so that the slow path, which requests
 *     the samples that are due, runs on every CPU at least that often.
 * The check reads this CPU's slot (next to the counters it increments) and
 * the cgroup: under TCG every other page the hook touches between two
 * faults costs more than its loads. The hook is preemptible (migration
 * disabled only), and the memo is written and read with one 64-bit access,
 * so a fill interrupted by the hook of another task on this CPU leaves one
 * of the two whole answers. Only the auto policy fills the memo: fixed and
 * never always take the slow path, which is short for them.
 */

/* How each thread fills its large mappings (struct mthpctl_fill in
 * include/mthp_policy.h), while the rules of the call would give them
 * 4 KiB; the least recently used entry makes room. */
struct fill_key {
	__u32 pid;	/* the thread's: see struct mthpctl_fill */
	__u32 pad;
	__u64 vma_start;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MTHPCTL_FILL_MAX);
	__type(key, struct fill_key);
	__type(value, struct mthpctl_fill);
} fills SEC(".maps");

/* The processes (tgid) auto asked to collapse after they grew past the
 * small-process limit (collapse_grown()), with the start of the mapping
 * asked for; the least recently used entry makes room. A new process that
 * reuses a tgid still here is left to khugepaged. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MTHPCTL_GROWN_MAX);
	__type(key, __u32);
	__type(value, __u64);
} grown SEC(".maps");

/* Cgroup ids waiting for a sample. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, MTHPCTL_PENDING_MAX);
	__type(value, __u64);
} pending SEC(".maps");

struct sampler {
	struct bpf_wq wq;
	__u32 ready;		/* 0: not set up, 1: being set up, 2: ready */
	__u32 tick_ready;	/* the same for tick */
	struct bpf_timer tick;	/* the memo tick (see the memo above) */
	__u32 tick_armed;	/* 1: tick will fire (cleared as it does) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sampler);
} sampler SEC(".maps");

/*
 * One slot per CPU: counters, memo and generation (struct mthpctl_cpu_slot).
 * A global array, not a per-CPU array map: a global is addressed directly,
 * where a map lookup is inlined with a bounds check, a null check and two
 * jumps, each of which ends a translation block under TCG (two builds
 * alternated in one VM boot, policy/floor ns per call: 1.72 and 1.75 with
 * the lookup, 1.69 and 1.62 without). mthpctl sizes the array before the
 * load (bpf_map__set_value_size(), to a power of two >= the possible CPUs)
 * and sets cpu_slots_mask to its length - 1: the mask bounds the index for
 * the verifier (it reads the frozen .rodata) without a branch.
 */
const volatile __u32 cpu_slots_mask;
struct mthpctl_cpu_slot cpu_slots[1] SEC(".data.slots");

static __always_inline struct mthpctl_cpu_slot *this_cpu_slot(void)
{
	return &cpu_slots[bpf_get_smp_processor_id() & cpu_slots_mask];
}

static __always_inline struct mthpctl_totals *get_totals(void)
{
	return &this_cpu_slot()->t;
}

/* Counters live in this CPU's slot: no line is shared between CPUs (a slot
 * is cache-line aligned) and no atomic is needed (the hook runs with
 * migration disabled; only a hook preempted between load and store could
 * lose one count). */
static __always_inline void inc(__u64 *p)
{
	*p += 1;
}

/*
 * Bytes between the memory charged and the nearest limit (memory.high or
 * memory.max) of memcg and its ancestors; MTHPCTL_NO_LIMIT when none is
 * set. Reclaim and throttling start there, whatever the stall says yet.
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

static long bump_gen(__u64 slot, void *ctx)
{
	__sync_fetch_and_add(&cpu_slots[slot & cpu_slots_mask].gen, MTHPCTL_MEMO_GEN_STEP);
	return 0;
}

/* Take one sample of cgroup ID (sleepable context). */
static void sample_cgroup(__u64 id, struct mthpctl_totals *t)
{
	struct mthpctl_sample x = { .headroom = MTHPCTL_NO_LIMIT,
				    .fill_rest = MTHPCTL_NO_LIMIT };
	__u64 memo_before;
	struct mthpctl_params p;
	struct mthpctl_state s;
	struct mem_cgroup *memcg;
	struct mthpctl_cg *e;
	struct cgroup *cgrp;

	cgrp = bpf_cgroup_from_id(id);
	if (!cgrp) {
		inc(&t->gone);
		return;
	}
	e = bpf_cgrp_storage_get(&cgstate, cgrp, 0, 0);
	if (!e) {
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
		} else {
			inc(&t->memcg_errors);
		}
	}

	if (bpf_ksym_exists(bpf_cgroup_psi_stall)) {
		u64 stall = 0;

		if (!bpf_cgroup_psi_stall(cgrp, bpf_core_enum_value(enum bpf_psi_stall,
								    BPF_PSI_MEM_FULL),
					  &stall)) {
			x.stall_ns = stall;
			x.flags |= MTHPCTL_SAMPLE_STALL;
		} else {
			inc(&t->psi_errors);
		}
	}

	mthpctl_fill_hint_take(&e->fill, &x);
	x.now_ns = bpf_ktime_get_ns();
	s = e->state;
	get_params(&p);
	memo_before = mthpctl_auto_memo(&p, &s, 0);
	update_state(&s, &x);
	e->state = s;
	/* after the state (atomics: ordered after the stores above), so that
	 * no memo made from the old state stays valid; only when a memo would
	 * differ (most samples change no answer). A change of the sampling
	 * interval alone needs no bump: the memo tick runs the slow path,
	 * which requests the samples that are due, on every CPU anyway */
	if (mthpctl_auto_memo(&p, &s, 0) != memo_before)
		bpf_loop(cpu_slots_mask + 1, bump_gen, NULL, 0);
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
	inc(&get_totals()->sampler_runs);
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
			inc(&t->wq_errors);
			return;
		}
		w->ready = 2;
	}
	if (bpf_wq_start(&w->wq, 0))
		inc(&t->wq_errors);
}

/* Queue a sample of the cgroup if its last one is old enough. */
static __always_inline void maybe_sample(struct mthpctl_cg *e, __u64 id,
					 const struct mthpctl_params *p,
					 struct mthpctl_totals *t)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 last = e->last_kick_ns;

	if (last && now - last < mthpctl_sample_interval(p, &e->state))
		return;
	/* one CPU wins the interval */
	if (__sync_val_compare_and_swap(&e->last_kick_ns, last, now) != last)
		return;
	if (!last)
		inc(&t->entries_created);
	if (bpf_map_push_elem(&pending, &id, 0)) {
		inc(&t->queue_full);
		return;
	}
	inc(&e->nr_kicks);
	kick_sampler(t);
}

/* The memo tick: every memo made before it is stale (see the memo above).
 * It fires once per arming; a slow path after it arms it again, so a
 * policy whose cgroups do not fault has no timer running. */
static int tick_cb(void *map, int *key, struct sampler *w)
{
	/* cleared before the bump (both fully ordered): a slow path that
	 * finds it still set reads its gen before the bump below, so its
	 * memo goes stale with it */
	__sync_val_compare_and_swap(&w->tick_armed, 1, 0);
	bpf_loop(cpu_slots_mask + 1, bump_gen, NULL, 0);
	return 0;
}

/* Arm the memo tick unless it is armed. False if it cannot be: the memo
 * must then not be filled, as nothing would make it stale. */
static __always_inline bool arm_tick(const struct mthpctl_params *p, struct mthpctl_totals *t)
{
	struct sampler *w;
	__u32 k = 0;
	long err;

	w = bpf_map_lookup_elem(&sampler, &k);
	if (!w)
		return false;
	if (READ_ONCE(w->tick_armed))
		return true;
	if (w->tick_ready != 2) {
		/* one CPU sets the timer up, once */
		if (__sync_val_compare_and_swap(&w->tick_ready, 0, 1) != 0)
			return false;
		err = bpf_timer_init(&w->tick, &sampler, 1 /* CLOCK_MONOTONIC */);
		if ((err && err != -16 /* EBUSY: set up by an earlier try */) ||
		    bpf_timer_set_callback(&w->tick, tick_cb)) {
			w->tick_ready = 0;
			inc(&t->wq_errors);
			return false;
		}
		w->tick_ready = 2;
	}
	if (__sync_val_compare_and_swap(&w->tick_armed, 0, 1) != 0)
		return true;
	if (bpf_timer_start(&w->tick, p->window_ns / MTHPCTL_MEMO_TICKS_PER_WINDOW, 0)) {
		WRITE_ONCE(w->tick_armed, 0);
		inc(&t->wq_errors);
		return false;
	}
	return true;
}

/* What every call knows of its mapping: its size and its process's memory
 * (no fill followed, no collapse asked). */
static void vma_basics(const struct bpf_mthp_ctx *mctx, struct mthpctl_vma_info *vi)
{
	vi->vma_bytes = mctx->vma_end - mctx->vma_start;
	vi->mm_anon_bytes = mctx->rss_anon;
	vi->dense = 0;
	vi->strided = 0;
	vi->collapse_asked = 0;
}

/*
 * What the per-call rules read of the mapping and its process: the
 * kernel's context for the call (never NULL: the argument is not
 * __nullable), and, in a large mapping whose fill is followed (from a
 * fault the rules would give 4 KiB on), whether the process fills it
 * densely or touches it sparsely (mthpctl_fill_dense(),
 * mthpctl_fill_strided()).
 * small: mthpctl_small_limit() of the cgroup.
 */
static void vma_info(const struct bpf_mthp_ctx *mctx, __u64 small,
		     struct mthpctl_vma_info *vi)
{
	struct fill_key key = {};
	struct mthpctl_fill *f, empty = {};
	struct mthpctl_params p;

	vma_basics(mctx, vi);
	if (vi->vma_bytes < MTHPCTL_SPARSE_MIN_VMA)
		return;
	key.pid = (__u32)bpf_get_current_pid_tgid();
	key.vma_start = mctx->vma_start;
	f = bpf_map_lookup_elem(&fills, &key);
	if (!f) {
		/* a fill is followed from a fault the rules would give 4 KiB */
		if (!mthpctl_fill_tracked(vi, small))
			return;
		bpf_map_update_elem(&fills, &key, &empty, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&fills, &key);
		if (!f)
			return;
	}
	get_params(&p);
	vi->dense = mthpctl_fill_dense(f, mctx->address, page_shift, mthpctl_ladder_top(&p));
	vi->strided = !vi->dense && mthpctl_fill_strided(f, vi->vma_bytes, page_shift);
}

/* The mapping of a call other than a page fault (khugepaged, smaps): its
 * size, the process's memory, and whether it is the collapse this policy
 * asked for (the kernel asks as for khugepaged, from the process itself);
 * no fill is followed for it. */
static void vma_sizes(const struct bpf_mthp_ctx *mctx, __u64 small,
		      struct mthpctl_vma_info *vi)
{
	__u32 tgid;
	__u64 *asked;

	vma_basics(mctx, vi);
	if (!small)	/* only the small-process rule asks for a collapse */
		return;
	tgid = bpf_get_current_pid_tgid() >> 32;
	asked = bpf_map_lookup_elem(&grown, &tgid);
	vi->collapse_asked = asked && *asked == mctx->vma_start;
}

/* A page fault given large folios by a process just past the small-process
 * limit (mthpctl_grown()): ask the kernel to collapse the fault's mapping,
 * where the process faulted 4 KiB pages while small, before it returns to
 * user space, once per process (see MTHPCTL_GROWN_WINDOW). A kernel
 * without the kfunc leaves them to khugepaged. */
static __always_inline void collapse_grown(struct bpf_mthp_ctx *mctx, __u64 small)
{
	__u64 start = mctx->vma_start;
	__u32 tgid;

	if (!mthpctl_grown(mctx->rss_anon, small) || !bpf_ksym_exists(bpf_mthp_collapse_on_return))
		return;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (!bpf_map_update_elem(&grown, &tgid, &start, BPF_NOEXIST))
		bpf_mthp_collapse_on_return(mctx);
}

/* One row of fallbacks per call; fallbacks[MTHPCTL_REASON_NONE] counts the
 * calls that narrowed nothing, so the rows sum to the calls (readers derive
 * calls from them: see struct mthpctl_counters). */
static __always_inline void count(struct mthpctl_totals *t, __u32 tva, __u32 reason)
{
	if (tva < MTHPCTL_NR_TVA && reason < MTHPCTL_NR_REASON)
		inc(&t->cnt.fallbacks[reason][tva]);
}

/* count() for the fast path: a page fault answered with allow counts
 * under why if allow removed an offered order (mthpctl_fault_reason()). */
static __always_inline void count_fault(struct mthpctl_totals *t, __u64 orders, __u64 allow,
					__u32 why)
{
	count(t, MTHPCTL_TVA_PAGEFAULT, mthpctl_fault_reason(orders, allow, why));
}

/* The state of a cgroup without any (fixed and never do not look at it;
 * auto when the storage could not be created). */
static const struct mthpctl_state no_state;

/* Every call the memo does not answer: the decision from the cgroup's
 * state, then the memo refilled. A function of its own (a BPF-to-BPF call,
 * the hook's arguments read again from ctx) so that what it keeps in
 * registers is saved in its prologue, not in the fast path's. */
static __noinline __u64 choose_slow(unsigned long long *ctx, struct mthpctl_cpu_slot *pc)
{
	struct bpf_mthp_ctx *mctx = (void *)ctx[0];
	/* the task's cgroup: auto decides per cgroup of the tasks, below the
	 * one it is attached to */
	struct cgroup *cgrp = (void *)ctx[2];
	__u64 orders = mthp_ops_offered(mctx);
	struct mthpctl_totals *t = &pc->t;
	struct mthpctl_vma_info vi = {}, *vip = NULL;
	const struct mthpctl_state *s = &no_state;
	__u32 tva = mthp_request_index(mctx->request), reason;
	struct mthpctl_cg *e = NULL;
	struct mthpctl_params p;
	__u64 allow;
	__u32 gen = 0;

	get_params(&p);
	if (mthpctl_policy_sampled(p.policy)) {	/* auto, simple */
		if (cgrp) {
			/* before the state is read: a memo made from a state
			 * older than gen says so */
			gen = __sync_fetch_and_add(&pc->gen, 0);
			e = bpf_cgrp_storage_get(&cgstate, cgrp, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
		}
		if (e)
			s = &e->state;
		if (tva == MTHPCTL_TVA_PAGEFAULT) {
			vma_info(mctx, mthpctl_small_limit(s), &vi);
			/* the slow path's faults tell the sampler what the
			 * cgroup fills (filling towards the limit) */
			if (e)
				mthpctl_fill_hint_note(&e->fill, mctx->vma_start, &vi);
		} else {
			vma_sizes(mctx, p.policy == MTHPCTL_POLICY_AUTO ?
					 mthpctl_small_limit(s) : 0, &vi);
		}
		vip = &vi;
	}
	allow = mthpctl_orders(&p, s, tva, orders, vip, &reason);
	/* auto's rule (simple has no small-process rule to undo; fixed and
	 * never keep no state) */
	if (p.policy == MTHPCTL_POLICY_AUTO && tva == MTHPCTL_TVA_PAGEFAULT &&
	    (orders & allow & ~1ULL))
		collapse_grown(mctx, mthpctl_small_limit(s));
	count(t, tva, reason);
	if (e) {
		maybe_sample(e, cgrp->kn->id, &p, t);	/* trusted: direct access */
		/* the memo holds auto's answers only (simple takes this path) */
		if (p.policy == MTHPCTL_POLICY_AUTO && arm_tick(&p, t))
			WRITE_ONCE(pc->memo,
				   mthpctl_auto_memo(&p, &e->state,
						     mthpctl_memo_tag(cgrp->self.serial_nr, gen)));
	}
	return allow;
}

/* choose_slow() for a call of another type, a function of its own: a
 * second call of choose_slow() in choose_orders() would be merged with the
 * first, at the price of a flag and one more branch on the fast path.
 * (Folding the type test into the memo's branch instead, as (type ^
 * TVA_PAGEFAULT) or-ed into the tag difference, has one branch less but
 * was slower: policy/floor 1.75-1.90 against 1.52-1.67 in one VM boot.) */
static __noinline __u64 choose_other(unsigned long long *ctx)
{
	return choose_slow(ctx, this_cpu_slot());
}

/*
 * The common call, a page fault of the cgroup this CPU answered last, is
 * answered from the memo: one word, checked against the cgroup's serial
 * number and this CPU's gen with one branch, the per-call rules
 * (mthpctl_fault_narrow(): small process in a small cgroup, sparse mapping)
 * if the answer allows large folios, one counter.
 * Measured in the TCG VM (bench pagefault --hook-cost, auto --max-size 4K):
 * see mthpctl-bench(8) and README.md, Results.
 */
SEC("struct_ops/choose_orders")
unsigned long BPF_PROG(choose_orders, struct bpf_mthp_ctx *mctx, struct cgroup *cgrp,
		       struct cgroup *task_cgrp)
{
	struct mthpctl_cpu_slot *pc;
	struct mthpctl_vma_info vi = {};
	__u64 allow, memo, orders;
	__u32 why;

	/* the other requests are rare: tested first, so that the request is
	 * not kept (in a register saved in the prologue) for the slow path.
	 * No test of the policy: only auto fills the memo, and a read of
	 * params would touch one more page. No test of task_cgrp: the kernel
	 * passes the owner's cgroup, never NULL (the argument is not
	 * __nullable) */
	if (__builtin_expect(mctx->request !=
			     bpf_core_enum_value(enum bpf_mthp_request, BPF_MTHP_FAULT), 0))
		return choose_other(ctx);
	pc = this_cpu_slot();
	memo = READ_ONCE(pc->memo);
	/* expected: the fast path falls through to its exit, no jump back */
	if (__builtin_expect(!mthpctl_memo_hit(memo, mthpctl_memo_tag(task_cgrp->self.serial_nr,
								      READ_ONCE(pc->gen))), 0))
		return choose_slow(ctx, pc);
	allow = mthpctl_memo_allow(memo);
	why = mthpctl_memo_why(memo);
	orders = mthp_ops_offered(mctx);
	if (mthpctl_sparse_candidate(MTHPCTL_TVA_PAGEFAULT, orders, allow)) {
		__u32 r;

		vma_info(mctx, mthpctl_memo_small(memo), &vi);
		r = mthpctl_fault_narrow(&vi, mthpctl_memo_small(memo));
		if (r != MTHPCTL_REASON_NONE) {
			allow = 1;
			why = r;
		} else {
			collapse_grown(mctx, mthpctl_memo_small(memo));
		}
	}
	count_fault(&pc->t, orders, allow, why);
	return allow;
}

SEC(".struct_ops.link")
struct bpf_mthp_ops mthpctl_ops = {
	.choose_orders = (void *)choose_orders,
};
