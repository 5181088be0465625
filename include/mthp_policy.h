/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl policy decision logic, shared by the BPF program (bpf/) and user
 * space (src/, tests/unit/). Pure functions on plain data: no kernel or libc
 * calls, only __u32/__u64, bounded loops, so the verifier accepts it and
 * cmocka can test it.
 */
#ifndef MTHPCTL_POLICY_H
#define MTHPCTL_POLICY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Policy identifiers (stored in the policy's read-only parameters) and
 * their names, once: X(ID, name). */
#define MTHPCTL_POLICIES(X)	\
	X(MTHPCTL_POLICY_AUTO, "auto")	\
	X(MTHPCTL_POLICY_FIXED, "fixed")	\
	X(MTHPCTL_POLICY_NEVER, "never")	\
	X(MTHPCTL_POLICY_SIMPLE, "simple")
#define MTHPCTL_POLICY_ENUM(id, name)	id,
enum { MTHPCTL_POLICY_NONE, MTHPCTL_POLICIES(MTHPCTL_POLICY_ENUM) MTHPCTL_POLICY_END };
#define MTHPCTL_NR_POLICIES	(MTHPCTL_POLICY_END - 1)

/* Our own index of the kernel's enum tva_type (the BPF side maps it with
 * CO-RE, so a renumbering in the kernel cannot shift our counters). */
#define MTHPCTL_TVA_SMAPS		0
#define MTHPCTL_TVA_PAGEFAULT		1
#define MTHPCTL_TVA_KHUGEPAGED		2
#define MTHPCTL_TVA_FORCED_COLLAPSE	3	/* MADV_COLLAPSE */
#define MTHPCTL_TVA_OTHER		4	/* a type this build does not know */
#define MTHPCTL_NR_TVA			5

/* Why a decision narrowed the orders the kernel offered ("fell back"). */
#define MTHPCTL_REASON_NONE		0	/* nothing narrowed */
#define MTHPCTL_REASON_PRESSURE		1	/* memory stall (or simple: at the limit):
						 * capped at the ladder's rung, or simple's
						 * small orders */
#define MTHPCTL_REASON_LOW_USAGE	2	/* a small process in a small cgroup */
#define MTHPCTL_REASON_NO_SAMPLE	3	/* not sampled yet */
#define MTHPCTL_REASON_CAP		4	/* fixed/never policy or --max-size */
#define MTHPCTL_REASON_SPARSE		5	/* fault in a large, sparsely used mapping */
#define MTHPCTL_NR_REASON		6

/* Sample validity flags. */
#define MTHPCTL_SAMPLE_STALL	(1U << 0)	/* stall_ns is valid (PSI on) */
#define MTHPCTL_SAMPLE_USAGE	(1U << 1)	/* usage is valid (memcg on) */

/* headroom of a cgroup with no memory.high/max set up its tree, and a
 * sample's fill_rest when not known. (Not sample flags: one more flag bit
 * doubles the paths the verifier walks through mthpctl_update(), and took
 * the policy's load from 1 s to 6 s.) */
#define MTHPCTL_NO_LIMIT	(~0ULL)

/* Largest order value meaning "no cap". */
#define MTHPCTL_NO_CAP		63

#define MTHPCTL_PARAMS_MAGIC	0x6d746870U	/* "mthp" */

/* Defaults of the auto policy (mthpctl attach and the BPF program's
 * built-in parameters both use these). */
#define MTHPCTL_DEFAULT_WINDOW_NS	1000000000ULL	/* 1 s */
#define MTHPCTL_DEFAULT_THRESHOLD_NS	100000000ULL	/* 100 ms per window */
#define MTHPCTL_DEFAULT_MIN_USAGE	(16ULL << 20)	/* 16 MiB */
#define MTHPCTL_DEFAULT_TOP_ORDER	9		/* PMD with 4 KiB pages */

/*
 * Policy parameters, fixed at load time (BPF .rodata), written once:
 * X(type, field, default). struct mthpctl_params, the BPF program's
 * rodata and get_params(), mthpctl_params_equal() and the defaults of
 * mthpctl_policy_build() are generated from it; what is written field by
 * field elsewhere (the state file, status) asserts MTHPCTL_NR_PARAMS.
 *
 * magic:	MTHPCTL_PARAMS_MAGIC
 * policy:	MTHPCTL_POLICY_*
 * max_order:	never allow orders above; MTHPCTL_NO_CAP = none
 * top_order:	the ladder's top: the PMD order; 0 = default
 * window_ns:	sampling window and stall-rate unit
 * threshold_ns: memory-full stall per window meaning pressure
 * min_usage:	anon+shmem bytes below which 4 KiB only; 0 = off
 */
#define MTHPCTL_PARAMS(X)						\
	X(__u32, magic, MTHPCTL_PARAMS_MAGIC)				\
	X(__u32, policy, MTHPCTL_POLICY_AUTO)				\
	X(__u32, max_order, MTHPCTL_NO_CAP)				\
	X(__u32, top_order, MTHPCTL_DEFAULT_TOP_ORDER)			\
	X(__u64, window_ns, MTHPCTL_DEFAULT_WINDOW_NS)			\
	X(__u64, threshold_ns, MTHPCTL_DEFAULT_THRESHOLD_NS)		\
	X(__u64, min_usage, MTHPCTL_DEFAULT_MIN_USAGE)

#define MTHPCTL_PARAM_FIELD(type, field, dflt)		type field;
#define MTHPCTL_PARAM_INDEX(type, field, dflt)		MTHPCTL_PARAM_IDX_##field,
#define MTHPCTL_PARAM_SIZE(type, field, dflt)		+ sizeof(type)
#define MTHPCTL_PARAM_DEFAULT(type, field, dflt)	.field = (dflt),

struct mthpctl_params {
	MTHPCTL_PARAMS(MTHPCTL_PARAM_FIELD)
};
enum { MTHPCTL_PARAMS(MTHPCTL_PARAM_INDEX) MTHPCTL_NR_PARAMS };
/* No padding: the struct is compared and shared as bytes (attach's rodata). */
_Static_assert(sizeof(struct mthpctl_params) == 0 MTHPCTL_PARAMS(MTHPCTL_PARAM_SIZE),
	       "struct mthpctl_params has padding");
/* The parameters with their defaults, as an initializer. */
#define MTHPCTL_PARAMS_DEFAULTS	{ MTHPCTL_PARAMS(MTHPCTL_PARAM_DEFAULT) }

/* One sample taken by the sampler. */
struct mthpctl_sample {
	__u64 now_ns;
	__u64 stall_ns;		/* cumulative PSI memory "full" stall */
	__u64 usage;		/* anon + shmem bytes */
	__u64 headroom;		/* bytes to the nearest memory.high/max up the
				 * tree, or MTHPCTL_NO_LIMIT */
	__u64 fill_rest;	/* what the mapping the cgroup's faults were in
				 * can still take (mthpctl_fill_hint_take()),
				 * or MTHPCTL_NO_LIMIT: not known */
	__u32 flags;		/* MTHPCTL_SAMPLE_* */
	__u32 pad;
};

/* No step up the ladder is being tried. */
#define MTHPCTL_NO_PROBE	0xffffffffU

/* Per-cgroup decision state. Zero-initialised = never sampled (4 KiB). */
struct mthpctl_state {
	__u64 last_sample_ns;	/* 0: never sampled */
	__u64 last_stall_ns;
	__u64 usage;		/* last sampled anon+shmem bytes */
	__u64 stall_rate_ns;	/* last stall per window, ns */
	__u64 usage_peak;	/* recent peak of usage, decaying (see below) */
	__u64 growth;		/* usage growth per window over the last interval */
	__u64 probe_end_ns;	/* end of the current step's trial / wait */
	__u64 steps_down;	/* ladder moves, for status and tests */
	__u64 steps_up;
	__u64 headroom;		/* last sampled headroom, or MTHPCTL_NO_LIMIT */
	__u32 pressure;		/* 1 while the ladder caps the orders */
	__u32 low_usage;	/* 1 while small and not growing (hysteresis) */
	__u32 flags;		/* flags of the last sample */
	__u32 nr_samples;
	__u32 rung;		/* highest order allowed while pressure is set */
	__u32 probe_from;	/* rung before the step up on trial, or NO_PROBE */
	__u32 backoff;		/* windows to hold a rung before the next step up */
	__u32 good_rung;	/* 1 + the last rung that held a trial; 0 = none */
	__u32 grow_streak;	/* intervals in a row that projected past the minimum */
	__u32 pad;
};

/*
 * Hysteresis: the low-usage rule starts below min_usage and ends only at
 * >= min_usage + min_usage / MTHPCTL_USAGE_EXIT_DIV.
 *
 * Growth: a cgroup whose usage, growing as fast as over the last interval,
 * would pass min_usage within one window is about to be large, not small,
 * once it has done so for MTHPCTL_GROW_STREAK intervals in a row. Two, not
 * one: a small process that touches its few MiB at once grows fast for one
 * interval and stops (its pages stay 4 KiB); a server filling its heap keeps
 * growing (large folios after ~125 ms instead of after 20 MiB of 4 KiB).
 */
#define MTHPCTL_USAGE_EXIT_DIV	4
#define MTHPCTL_GROW_STREAK	2

/*
 * The size ladder. Under memory pressure the auto policy does not switch to
 * 4 KiB: it caps the folio order at a rung and moves the rung by the stall
 * it measures (TCP-like: down at once, up slowly, slower after a failure).
 * Stall per window, against the threshold T:
 *
 *   >= T        step down one rung (a failed trial goes back to where it
 *               came from and doubles the wait before the next trial)
 *   T/2 .. T    hold
 *   T/16 .. T/2 after holding the rung for `backoff` windows, try one rung
 *               up; a trial that ends without stall >= T is kept, remembered
 *               as good, and halves the wait
 *   < T/16      the pressure is over: every size again
 *
 * A new episode starts at the last good rung, or at MTHPCTL_LADDER_START
 * (the smallest mTHP size: a quarter of the faults of 4 KiB pages for the
 * smallest reclaim and swap-in unit of all large sizes). The rungs are the
 * orders 0, 2, 3, ... top (anonymous memory has no order-1 folios).
 */
#define MTHPCTL_LADDER_START	2
#define MTHPCTL_HOLD_DIV	2	/* T/2: below, the rung may go up */
#define MTHPCTL_QUIET_DIV	16	/* T/16: below, the pressure is over */
#define MTHPCTL_BACKOFF_MAX	32	/* windows */

/*
 * At the limit. A cgroup whose headroom to its nearest memory.high or
 * memory.max (its own or an ancestor's) is below 1/MTHPCTL_TIGHT_DIV of its
 * usage reclaims its own memory to make room for every new folio: the folio
 * size is then the unit it reclaims, swaps out and faults back in. There
 * the stall measured is low *because* the folios are small, and reads as an
 * invitation to step up; measured (bench redis at memory.high=128M, where
 * the working set does not fit): the stall of 4K and 16K stays under T/2,
 * stepping up to 2M costs 60x the swap-outs, and the damage shows only
 * after the step was judged. So at the limit the ladder:
 *
 *   - starts an episode on any stall >= T/16, not only at T;
 *   - steps up only when the stall is below T/16 (quiet), not below T/2;
 *   - does not end the episode when quiet, but climbs rung by rung
 *     (each step a trial), so the cgroup leaves the limit gradually.
 *
 * A cgroup without a limit near is judged by the stall alone, as above.
 */
#define MTHPCTL_TIGHT_DIV	16

/*
 * Filling towards the limit. The rule above sees the limit only when it is
 * already there; by then a cgroup that filled its memory with 2 MiB folios
 * keeps them (reclaim does not split what is resident to make room for 4K
 * faults), and reclaim and refaults work on the small remainder: measured
 * with bench redis at memory.high=128M, ~118 MiB of 2 MiB folios filled
 * before the limit, 34% more swap-outs and 60% more major faults than
 * 4 KiB only, p99 1.5 x. So a cgroup whose usage, growing as fast as over
 * the last interval, would use up its headroom within MTHPCTL_FILL_WINDOWS
 * windows is treated as at the limit already: an episode starts at the last
 * good rung or the ladder's start without waiting for stall, and the ladder
 * does not climb while the fill goes on. When the growth stops the rule
 * above judges the cgroup again. No limit, or a limit far beyond the
 * growth: no effect.
 *
 * The growth is projected no further than the faulting mapping can still
 * take: a cgroup whose faults since its last sample were all in one
 * mapping, the same mapping at the same size as at the sample before, is
 * filling a mapping of fixed size, and grows by at most the mapping's
 * unfilled rest (struct mthpctl_fill_hint). If that fits in the headroom,
 * the fill ends below the limit and needs the same memory at any folio
 * size: the cap would only cost faults. Measured with bench mixed's
 * earlier batch job, which filled one 64 MiB array under a node limit
 * shared with a service (~70 MiB of headroom): capped, 50 of its 64 MiB
 * in 16 KiB folios, 49 x the faults and 0.27 x the updates/s of always,
 * and the node never reached its limit. A heap that grows (brk, new mappings)
 * changes its mapping between samples and is projected as before.
 */
#define MTHPCTL_FILL_WINDOWS	8

/*
 * The mapping a cgroup's page faults were in since its last sample, as
 * the BPF program's slow path sees them (one fault in a few: enough to
 * tell one mapping from several). Written by concurrent faults and read
 * by the sampler without a lock: a torn record costs at most one sample
 * judged as the mapping before or after it.
 */
struct mthpctl_fill_hint {
	__u64 vma_start;
	__u64 vma_bytes;
	__u64 rest;		/* the mapping's unfilled rest at the last fault */
	__u32 seen;		/* 1: a fault was noted since the last sample */
	__u32 changed;		/* 1: in another mapping, or this one resized */
};

/*
 * The low-usage rule judges a cgroup by its recent peak, not by the last
 * sample alone: a process that maps, touches and unmaps large regions in a
 * loop is not small, but a sample may land between two of its mappings.
 * The peak follows usage up at once and decays by 1/MTHPCTL_PEAK_DECAY_DIV
 * of itself per elapsed window, so a cgroup that stays small is judged
 * small again after a few windows (64M -> below 16M in 11 windows).
 */
#define MTHPCTL_PEAK_DECAY_DIV	8

/*
 * Samples per window. The stall rate is always scaled to a whole window, so
 * sampling more often than once per window does not change what the
 * threshold means; it shortens the reaction: pressure that starts right
 * after a sample is seen half a window later, not a whole one. While a
 * cgroup is small (or not sampled yet) it samples faster still: the growth
 * that makes it not small must be seen within its first few MiB (samples
 * are cheap, and taken only while the cgroup faults).
 */
#define MTHPCTL_SAMPLES_PER_WINDOW		2
#define MTHPCTL_LOW_USAGE_SAMPLES_PER_WINDOW	16

/*
 * A sample closer than window / MTHPCTL_MIN_DT_DIV to the last one is not
 * used: over a few microseconds the stall counter rarely moves, and a rate
 * of zero would end a pressure episode that is still going on (the ladder
 * would restart at its first rung again and again). The next sample then
 * measures the whole, longer interval.
 */
#define MTHPCTL_MIN_DT_DIV	(2 * MTHPCTL_LOW_USAGE_SAMPLES_PER_WINDOW)

/*
 * How often the BPF fast path's memo goes stale while a policy's cgroups
 * fault (bpf/mthp.bpf.c): a sample that falls due is requested at most
 * window / MTHPCTL_MEMO_TICKS_PER_WINDOW late (15.6 ms by default, a
 * quarter of the small cgroup's interval), and each CPU takes the slow
 * path about that often.
 */
#define MTHPCTL_MEMO_TICKS_PER_WINDOW	64

/*
 * A page fault in a mapping of at least MTHPCTL_SPARSE_MIN_VMA bytes whose
 * process has fewer anonymous bytes resident than 1/MTHPCTL_SPARSE_DIV of
 * the mapping gets 4 KiB, unless its fault addresses show a dense fill
 * (struct mthpctl_fill below): touching one page per 128 KiB of a large
 * mapping would otherwise fill all of it with large folios (32x the memory).
 */
#define MTHPCTL_SPARSE_MIN_VMA	(16ULL << 20)
#define MTHPCTL_SPARSE_DIV	32

/* What the hook knows of the faulting mapping (0/0 = unknown). */
struct mthpctl_vma_info {
	__u64 vma_bytes;	/* size of the VMA */
	__u64 mm_anon_bytes;	/* the process's resident anonymous bytes */
	__u32 dense;		/* the fault is part of a dense fill
				 * (mthpctl_fill_dense(); 0: not known) */
	__u32 strided;		/* the process's faults in the mapping are a
				 * sparse toucher's (mthpctl_fill_strided()) */
	__u32 collapse_asked;	/* a khugepaged request made by the process
				 * itself for the mapping the policy asked to
				 * collapse (see MTHPCTL_GROWN_WINDOW) */
};

static inline int mthpctl_vma_sparse(const struct mthpctl_vma_info *v)
{
	return v && v->vma_bytes >= MTHPCTL_SPARSE_MIN_VMA &&
	       v->mm_anon_bytes < v->vma_bytes / MTHPCTL_SPARSE_DIV;
}

/*
 * The low-usage rule is for small processes. While a cgroup is small (not
 * growing, below min_usage) a page fault gets 4 KiB only if its process
 * holds less anonymous memory than MTHPCTL_SMALL_PROC_BYTES, one PMD folio
 * (such a process cannot fill one); a larger process gets what the
 * cgroup's state would give it if it were not small.
 * Why: a server's cgroup looks small between its start and its first load,
 * and the first allocations of that load are among its hottest memory
 * (for redis: client and query buffers, the first dict tables); growth is
 * seen two sampling intervals later, after them. Measured with bench redis
 * at max, always against auto, 2 x 6 repeats each in one VM boot: auto made
 * 0.87-0.94 x always' rps with the whole small phase in 4 KiB pages, still
 * 0.88-0.92 with only redis' start-up memory in large folios, and
 * 0.94-0.95 (not distinguishable) with this rule (3.0 MiB in 4 KiB pages
 * against 6-9). redis holds 2.7 MiB when its load begins; bench sparse's
 * small processes hold up to 1.5 MiB (what they touch plus what fork gave
 * them) and stay at never's memory. A limit of 4 MiB was too high: redis
 * then faulted its first load in 4 KiB again (0.88-0.92).
 */
#define MTHPCTL_SMALL_PROC_BYTES	(2ULL << 20)

/*
 * A process that grows past MTHPCTL_SMALL_PROC_BYTES while its cgroup is
 * small was given 4 KiB for all it faulted before, and those 2 MiB ranges
 * can no longer get a PMD folio at fault time: for redis, 3 to 5 ranges
 * of its start-up memory (94-96% of always' 2 MiB bytes at the end of
 * bench redis; 99-101% 30 s later, once khugepaged had collapsed them).
 * On its first page faults past the limit that get large folios
 * (mthpctl_grown()), auto asks the kernel to collapse, before the process
 * returns to user space, what khugepaged may collapse in it
 * (bpf_mthp_collapse_on_return(), kernel/ patch 10): the mapping of that
 * fault, once per process. The kernel asks the policy about the collapse
 * as it asks for khugepaged, from the process itself: the policy answers
 * it as that page fault (vma->collapse_asked), while khugepaged's own
 * requests still get 4 KiB in a small cgroup. One mapping, not all the
 * process's: a process that grew may hold mappings it touches sparsely
 * (bench arenas: 16 threads touching 4 pages per 2 MiB of an 8 MiB arena
 * each), which a collapse of all would fill with PMD folios. A window
 * rather than one value: the process's anonymous bytes come from per-CPU
 * counters, which lag and can step over a given value. A process first
 * seen past the window (the child of a large parent) is left to
 * khugepaged.
 */
#define MTHPCTL_GROWN_WINDOW	(MTHPCTL_SMALL_PROC_BYTES / 4)

/* Processes remembered as asked (the BPF program's LRU map "grown") */
#define MTHPCTL_GROWN_MAX	1024

/* Is a process holding anon bytes, in a cgroup whose small-process limit
 * is small (0: not small), just past that limit (MTHPCTL_GROWN_WINDOW)? */
static inline int mthpctl_grown(__u64 anon, __u64 small)
{
	return small && anon >= small && anon - small < MTHPCTL_GROWN_WINDOW;
}

/*
 * The rules of a single page fault after the cgroup's state, for a process
 * v (NULL: unknown, taken as holding nothing): SMALL is
 * MTHPCTL_SMALL_PROC_BYTES while the cgroup is small, else 0. Returns the
 * reason for 4 KiB, or MTHPCTL_REASON_NONE. A dense fill of a large mapping
 * is neither small nor sparse.
 */
static inline __u32 mthpctl_fault_narrow(const struct mthpctl_vma_info *v, __u64 small)
{
	__u64 anon = v ? v->mm_anon_bytes : 0;

	if (v && v->dense)
		return MTHPCTL_REASON_NONE;
	if (anon < small)
		return MTHPCTL_REASON_LOW_USAGE;
	if (mthpctl_vma_sparse(v) || (v && v->strided))
		return MTHPCTL_REASON_SPARSE;
	return MTHPCTL_REASON_NONE;
}

/*
 * Dense fills of large mappings, told apart by their fault addresses.
 * The rules above give 4 KiB to the first faults of every large mapping
 * (its process is small, or holds little of it), and a 4 KiB page in a
 * 2 MiB range leaves that range no PMD folio at fault time. A process that
 * fills a large mapping in random order (hash tables, GUPS-style arrays,
 * in-memory indexes) has touched most of its 2 MiB ranges by the time it
 * holds 1/32 of the mapping: measured, 384 MiB written once in random
 * order held 0 MiB in PMD folios under auto, 384 under always. So where
 * those rules would give 4 KiB in a mapping of at least
 * MTHPCTL_SPARSE_MIN_VMA, the policy follows the faults in it (struct
 * mthpctl_fill, one per thread and mapping) and takes the fill as dense:
 *   - when the fault is at the page right after what the last answer
 *     could map (a sequential fill: after a 4 KiB answer the next page,
 *     after a large one the rest of the PMD range and the next one's
 *     start); a strided toucher skips pages;
 *   - once its faults have jumped MTHPCTL_FILL_JUMPS times each way (a
 *     fill in random order); a sequential toucher, dense or strided, goes
 *     one way.
 * Per thread, not per process: the arenas of an allocator's threads are
 * mapped side by side and merge into one mapping, and each thread touching
 * a few pages per 2 MiB of its own arena goes one way, while their faults
 * taken together jump both ways. Measured with bench arenas (16 threads,
 * 8 MiB arenas, 4 pages per 2 MiB): 115.5 MiB under auto against never's
 * 2.0 with one record per process. Threads filling parts of one mapping
 * each fill in order, or in random order, and still read as dense.
 * A dense fill gets what the cgroup's state allows. What the addresses
 * cannot tell: a process touching a few pages at random all over a large
 * mapping looks like a random fill, and gets large folios as under always.
 *
 * A fill followed from its first faults stays followed when the process
 * outgrows those rules, and a mapping its process touched one way with
 * gaps, in fewer pages than 1/MTHPCTL_SPARSE_DIV of it, keeps 4 KiB
 * (mthpctl_fill_strided()): the sparse rule above counts the whole
 * process's memory, so a process holding more than that elsewhere (what
 * fork gave it, another mapping) would otherwise get large folios for the
 * rest of its sparse touches. Measured with bench sparse, whose small
 * processes are forked from mthpctl: 40.0 MiB against never's 8.8 without
 * this, each process's last two 2 MiB ranges in PMD folios.
 */
#define MTHPCTL_FILL_JUMPS	2
/* Fills followed at once (processes x large mappings in their first
 * faults); the least recently used one makes room. */
#define MTHPCTL_FILL_MAX	1024

struct mthpctl_fill {
	__u64 first;		/* page address of the first fault */
	__u64 last;		/* page address of the last fault; 0: none yet */
	__u64 next;		/* end of what the last answer could map */
	__u32 forward;		/* faults that jumped past next */
	__u32 backward;		/* faults that jumped back before last */
	__u64 faults;		/* faults recorded, the last one included */
	__u64 dense_faults;	/* of those, taken as dense */
	__u32 refill;		/* 1: the fill given back at first was dense */
	__u32 pad;
};

/* Is a fault judged by its fill (see above)? Only where the rules of the
 * call would give it 4 KiB in a large mapping. */
static inline int mthpctl_fill_tracked(const struct mthpctl_vma_info *v, __u64 small)
{
	return v && v->vma_bytes >= MTHPCTL_SPARSE_MIN_VMA &&
	       mthpctl_fault_narrow(v, small) != MTHPCTL_REASON_NONE;
}

/* Record a fault at ADDR in fill f; is it part of a dense fill? A dense
 * fault may get a PMD folio (PMD_ORDER above pages of PAGE_SHIFT), any
 * other 4 KiB.
 * A fault at the page of the fill's first fault again starts the record
 * over: that page was given back (munmap, MADV_DONTNEED), and the mapping
 * there, new or emptied, is filled afresh. Without it a sparse toucher that
 * maps and unmaps one address again and again would add the jump back to
 * its start each time, and read as a random fill from its third mapping.
 * The first fault of such a refill is dense when most faults of the fill
 * given back were (the thread is known to fill this mapping densely):
 * else its 2 MiB range, the first of the mapping, gets no PMD folio in
 * every round of a map, fill, unmap loop (bench pagefault: 1 of every 32
 * PMD faults of always). A sparse toucher's faults are never dense. */
static inline int mthpctl_fill_dense(struct mthpctl_fill *f, __u64 addr,
				     __u32 page_shift, __u32 pmd_order)
{
	__u64 span;
	int dense = 0;

	if (f->last && addr == f->first) {
		__u32 refill = f->dense_faults * 2 > f->faults;

		*f = (struct mthpctl_fill){ .refill = refill };
	}
	if (!f->last) {
		f->first = addr;
		dense = f->refill;
	} else {
		if (addr > f->last && addr <= f->next)
			dense = 1;
		else if (addr > f->last)
			f->forward++;
		else if (addr < f->last)
			f->backward++;
		if (f->forward >= MTHPCTL_FILL_JUMPS && f->backward >= MTHPCTL_FILL_JUMPS)
			dense = 1;
	}
	span = 1ULL << (page_shift + (dense ? pmd_order : 0));
	f->last = addr;
	f->next = (addr & ~(span - 1)) + span;
	f->faults++;
	f->dense_faults += dense;
	return dense;
}

/* After a fault mthpctl_fill_dense() did not take as dense: are the
 * process's faults in the mapping of VMA_BYTES a sparse toucher's (they
 * jumped forward and not back, and fewer than 1/MTHPCTL_SPARSE_DIV of its
 * pages were faulted before this one)? */
static inline int mthpctl_fill_strided(const struct mthpctl_fill *f, __u64 vma_bytes,
				       __u32 page_shift)
{
	return f->forward >= MTHPCTL_FILL_JUMPS && f->backward < MTHPCTL_FILL_JUMPS &&
	       ((f->faults - 1) << page_shift) < vma_bytes / MTHPCTL_SPARSE_DIV;
}

/* The peak after DT ns at decay 1/MTHPCTL_PEAK_DECAY_DIV per window. */
static inline __u64 mthpctl_decay_peak(__u64 peak, __u64 dt, __u64 window)
{
	__u64 n;

	if (!window)
		return 0;
	n = dt / window;
	if (n >= MTHPCTL_PEAK_DECAY_DIV)
		return 0;
	return peak - peak / MTHPCTL_PEAK_DECAY_DIV * n;
}

/* How long after a sample the next may start (rate limit of the sampler). */
static inline __u64 mthpctl_sample_interval(const struct mthpctl_params *p,
					    const struct mthpctl_state *s)
{
	if ((s->low_usage || !s->last_sample_ns) && !s->pressure)
		return p->window_ns / MTHPCTL_LOW_USAGE_SAMPLES_PER_WINDOW;
	return p->window_ns / MTHPCTL_SAMPLES_PER_WINDOW;
}

/*
 * x * window / dt without overflowing 64 bits (precision may drop): both
 * factors are brought below 2^32 by halving them together with dt.
 * (No "x <= ~0 / y" test: clang turns that into a 128-bit multiply, which
 * BPF does not have.)
 */
static inline __u64 mthpctl_scale_rate(__u64 stall, __u64 dt, __u64 window)
{
	int i;

	if (!window)
		return 0;
	for (i = 0; i < 64 && ((stall >> 32) || (window >> 32)); i++) {
		if (stall >> 32)
			stall >>= 1;
		else
			window >>= 1;
		dt >>= 1;
	}
	if (!dt)
		return ~0ULL;
	return stall * window / dt;
}

/* Mask of orders 0..max_order. */
static inline __u64 mthpctl_cap_mask(__u32 max_order)
{
	if (max_order >= MTHPCTL_NO_CAP)
		return ~0ULL;
	return (1ULL << (max_order + 1)) - 1;
}

/* The ladder's top: the PMD order, or the cap if that is lower. */
static inline __u32 mthpctl_ladder_top(const struct mthpctl_params *p)
{
	__u32 top = p->top_order ? p->top_order : MTHPCTL_DEFAULT_TOP_ORDER;

	return p->max_order < top ? p->max_order : top;
}

static inline __u32 mthpctl_rung_down(__u32 r)
{
	return r <= MTHPCTL_LADDER_START ? 0 : r - 1;
}

static inline __u32 mthpctl_rung_up(__u32 r)
{
	return r < MTHPCTL_LADDER_START ? MTHPCTL_LADDER_START : r + 1;
}

/* Is the cgroup restricted (auto policy), and why. */
static inline __u32 mthpctl_restriction(const struct mthpctl_state *s)
{
	if (!s->last_sample_ns)
		return MTHPCTL_REASON_NO_SAMPLE;
	if (s->low_usage)
		return MTHPCTL_REASON_LOW_USAGE;
	if (s->pressure)
		return MTHPCTL_REASON_PRESSURE;
	return MTHPCTL_REASON_NONE;
}

/* Is the cgroup small: below min_usage and not growing, or not sampled
 * yet (a new cgroup is small until its samples say otherwise)? */
static inline int mthpctl_cgroup_small(__u32 restriction)
{
	return restriction == MTHPCTL_REASON_LOW_USAGE ||
	       restriction == MTHPCTL_REASON_NO_SAMPLE;
}

/* MTHPCTL_SMALL_PROC_BYTES while the cgroup is small, else 0. */
static inline __u64 mthpctl_small_limit(const struct mthpctl_state *s)
{
	return mthpctl_cgroup_small(mthpctl_restriction(s)) ? MTHPCTL_SMALL_PROC_BYTES : 0;
}

/* Is a cgroup with these sample values at its memory limit (see
 * MTHPCTL_TIGHT_DIV)? */
static inline int mthpctl_tight(__u32 flags, __u64 usage, __u64 headroom)
{
	return (flags & MTHPCTL_SAMPLE_USAGE) && headroom < usage / MTHPCTL_TIGHT_DIV;
}

/*
 * Near the limit: the headroom to the nearest memory.high/max (its own or
 * an ancestor's) is below 1/MTHPCTL_NEAR_DIV of the cgroup's usage plus
 * that headroom (the limit, for a cgroup whose memory is its own anon and
 * shmem). simple's rule; the divisor swept (4, 8, 16) with bench redis at
 * memory.high=128M: 4 led on requests/s and on large folios swapped out
 * in every count, inside the noise of three runs; simple is the strongest
 * rule of its kind we found, so the one that leads (mthpctl-policies(7),
 * simple).
 */
#define MTHPCTL_NEAR_DIV	4

/* Is a cgroup with these sample values near its limit (see
 * MTHPCTL_NEAR_DIV)? */
static inline int mthpctl_near_limit(__u32 flags, __u64 usage, __u64 headroom)
{
	return (flags & MTHPCTL_SAMPLE_USAGE) && headroom != MTHPCTL_NO_LIMIT &&
	       headroom < (usage + headroom) / MTHPCTL_NEAR_DIV;
}

/*
 * The unfilled rest of the faulting mapping: its bytes less the process's
 * resident anonymous bytes, as if all of those were in it (a process's
 * large fill is most of its memory). A process holding more than the
 * mapping tells nothing about it: then the whole mapping.
 */
static inline __u64 mthpctl_fill_rest(const struct mthpctl_vma_info *v)
{
	if (v->mm_anon_bytes > v->vma_bytes)
		return v->vma_bytes;
	return v->vma_bytes - v->mm_anon_bytes;
}

/* Note a page fault at a mapping [vma_start, + v->vma_bytes) in h. */
static inline void mthpctl_fill_hint_note(struct mthpctl_fill_hint *h, __u64 vma_start,
					  const struct mthpctl_vma_info *v)
{
	if (h->vma_start != vma_start || h->vma_bytes != v->vma_bytes) {
		h->vma_start = vma_start;
		h->vma_bytes = v->vma_bytes;
		h->changed = 1;
	}
	h->rest = mthpctl_fill_rest(v);
	h->seen = 1;
}

/* At a sample: the rest of the mapping the cgroup filled since the last
 * sample into x, if it was one mapping of a fixed size (see
 * MTHPCTL_FILL_WINDOWS); the record starts over. */
static inline void mthpctl_fill_hint_take(struct mthpctl_fill_hint *h,
					  struct mthpctl_sample *x)
{
	x->fill_rest = h->seen && !h->changed ? h->rest : MTHPCTL_NO_LIMIT;
	h->seen = 0;
	h->changed = 0;
}

/* Would a cgroup growing by growth bytes per window use up headroom within
 * MTHPCTL_FILL_WINDOWS windows, when it can grow by at most rest bytes
 * (MTHPCTL_NO_LIMIT: not known)? See MTHPCTL_FILL_WINDOWS. */
static inline int mthpctl_filling(__u64 growth, __u64 headroom, __u64 rest)
{
	return growth && headroom != MTHPCTL_NO_LIMIT &&
	       headroom / MTHPCTL_FILL_WINDOWS < growth && rest > headroom;
}

/* One step of the size ladder for a stall rate measured at time now;
 * tight: the cgroup is at its memory limit; filling: it is growing towards
 * it (mthpctl_filling()). */
static inline void mthpctl_ladder(const struct mthpctl_params *p,
				  struct mthpctl_state *s, __u64 rate, __u64 now, int tight,
				  int filling)
{
	__u64 t = p->threshold_ns, window = p->window_ns;
	__u64 quiet = t / MTHPCTL_QUIET_DIV;
	__u32 top = mthpctl_ladder_top(p);

	if (!s->backoff)
		s->backoff = 1;
	tight |= filling;
	if (rate >= t || (tight && rate >= quiet && !s->pressure) || (filling && !s->pressure)) {
		if (!s->pressure) {
			/* a new episode: the last good rung, or the start */
			s->pressure = 1;
			s->rung = s->good_rung ? s->good_rung - 1 : MTHPCTL_LADDER_START;
			if (s->rung >= top)
				s->rung = mthpctl_rung_down(top);
		} else if (s->probe_from != MTHPCTL_NO_PROBE) {
			/* the step up failed: back, and wait longer next time */
			s->rung = s->probe_from;
			s->good_rung = s->rung + 1;
			if (s->backoff < MTHPCTL_BACKOFF_MAX)
				s->backoff *= 2;
		} else {
			s->rung = mthpctl_rung_down(s->rung);
		}
		s->steps_down++;
		s->probe_from = MTHPCTL_NO_PROBE;
		s->probe_end_ns = now + s->backoff * window;
		return;
	}
	if (!s->pressure)
		return;
	if (rate < quiet && !tight) {
		/* no stall worth the name: the pressure is over */
		if (s->probe_from != MTHPCTL_NO_PROBE)
			s->good_rung = s->rung + 1;
		s->pressure = 0;
		s->probe_from = MTHPCTL_NO_PROBE;
		return;
	}
	if (now < s->probe_end_ns || filling)
		return;		/* hold the rung (or the trial) a while */
	if (s->probe_from != MTHPCTL_NO_PROBE) {
		/* the trial held: keep it */
		s->good_rung = s->rung + 1;
		if (s->backoff > 1)
			s->backoff /= 2;
		s->probe_from = MTHPCTL_NO_PROBE;
	}
	if (rate >= t / MTHPCTL_HOLD_DIV || (tight && rate >= quiet))
		return;		/* some stall (any, at the limit): stay */
	s->probe_from = s->rung;
	s->rung = mthpctl_rung_up(s->rung);
	s->steps_up++;
	s->probe_end_ns = now + s->backoff * window;
	if (s->rung >= top) {
		s->pressure = 0;	/* back at the top: no cap */
		s->probe_from = MTHPCTL_NO_PROBE;
	}
}

/*
 * Feed one sample into the state (auto policy). Returns the restriction
 * reason after the update (MTHPCTL_REASON_NONE = all sizes allowed).
 */
static inline __u32 mthpctl_update(const struct mthpctl_params *p,
				   struct mthpctl_state *s,
				   const struct mthpctl_sample *x)
{
	__u64 dt = 0;
	int growing = 0;

	if (s->last_sample_ns && x->now_ns <= s->last_sample_ns)
		return mthpctl_restriction(s);	/* time did not advance */
	if (s->last_sample_ns) {
		dt = x->now_ns - s->last_sample_ns;
		if (dt < p->window_ns / MTHPCTL_MIN_DT_DIV)
			return mthpctl_restriction(s);	/* too close to measure */
	}

	s->growth = 0;
	if (dt && (x->flags & MTHPCTL_SAMPLE_USAGE) && (s->flags & MTHPCTL_SAMPLE_USAGE) &&
	    x->usage > s->usage)
		s->growth = mthpctl_scale_rate(x->usage - s->usage, dt, p->window_ns);

	if (dt && (x->flags & MTHPCTL_SAMPLE_STALL) &&
	    (s->flags & MTHPCTL_SAMPLE_STALL) && x->stall_ns >= s->last_stall_ns) {
		s->stall_rate_ns = mthpctl_scale_rate(x->stall_ns - s->last_stall_ns,
						      dt, p->window_ns);
		mthpctl_ladder(p, s, s->stall_rate_ns, x->now_ns,
			       mthpctl_tight(x->flags, x->usage, x->headroom),
			       mthpctl_filling(s->growth, x->headroom, x->fill_rest));
	} else {
		/* first sample, PSI off or counter reset: no evidence */
		s->stall_rate_ns = 0;
		s->pressure = 0;
		s->probe_from = MTHPCTL_NO_PROBE;
	}

	if ((x->flags & MTHPCTL_SAMPLE_USAGE) && p->min_usage) {
		if (s->growth && x->usage + s->growth >= p->min_usage)
			s->grow_streak++;
		else
			s->grow_streak = 0;
		growing = s->grow_streak >= MTHPCTL_GROW_STREAK;
		if (s->last_sample_ns)
			s->usage_peak = mthpctl_decay_peak(s->usage_peak, dt,
							   p->window_ns);
		if (x->usage > s->usage_peak)
			s->usage_peak = x->usage;
		if (growing)
			s->low_usage = 0;
		else if (s->low_usage && s->last_sample_ns)
			s->low_usage = s->usage_peak < p->min_usage +
				       p->min_usage / MTHPCTL_USAGE_EXIT_DIV;
		else
			s->low_usage = s->usage_peak < p->min_usage;
	} else {
		s->low_usage = 0;
		s->usage_peak = 0;
		s->grow_streak = 0;
	}

	s->usage = (x->flags & MTHPCTL_SAMPLE_USAGE) ? x->usage : 0;
	s->headroom = x->headroom;
	s->last_stall_ns = x->stall_ns;
	s->last_sample_ns = x->now_ns ? x->now_ns : 1;
	s->flags = x->flags;
	s->nr_samples++;
	return mthpctl_restriction(s);
}

/*
 * The auto policy's answer to a page fault for a cgroup in state s, before
 * the rules of the single call (mthpctl_fault_narrow(): a small process
 * while the cgroup is small, a sparse mapping): the highest order its state
 * allows (orders 0..top; MTHPCTL_NO_CAP: all), and in *why the reason if
 * that narrows them. A small cgroup's answer is the one it would have if it
 * were not small (its small processes get 4 KiB per call).
 * It changes only when the state does, so the BPF program may keep it
 * between calls (see the memo in bpf/mthp.bpf.c).
 */
static inline __u32 mthpctl_auto_top(const struct mthpctl_params *p,
				     const struct mthpctl_state *s, __u32 *why)
{
	__u32 r = mthpctl_restriction(s);

	if (mthpctl_cgroup_small(r))
		r = s->pressure ? MTHPCTL_REASON_PRESSURE : MTHPCTL_REASON_NONE;
	if (r == MTHPCTL_REASON_NONE) {
		*why = MTHPCTL_REASON_CAP;
		return p->max_order;
	}
	*why = r;
	if (r == MTHPCTL_REASON_PRESSURE)
		return s->rung < p->max_order ? s->rung : p->max_order;
	return 0;
}

/* The same answer as a mask: mthpctl_cap_mask() of the top order. */
static inline __u64 mthpctl_auto_allow(const struct mthpctl_params *p,
				       const struct mthpctl_state *s, __u32 *why)
{
	return mthpctl_cap_mask(mthpctl_auto_top(p, s, why));
}

/*
 * The BPF fast path's memo (bpf/mthp.bpf.c) is one 64-bit word, so that one
 * load reads it whole and one store writes it whole (no sequence count):
 *   bits 63..32  the low 32 bits of the cgroup's serial number (the key),
 *   bits 31..10  the low 22 bits of the CPU's generation when it was made,
 *   bit   9      the cgroup is small: small processes get 4 KiB
 *                (mthpctl_memo_small() is then MTHPCTL_SMALL_PROC_BYTES),
 *   bits  8..6   the reason of the answer,
 *   bits  5..0   the answer as a shift: allow = ~0 >> shift (every answer
 *                of auto's state is a mask of orders 0..top).
 * A CPU's generation counts in steps of MTHPCTL_MEMO_GEN_STEP, so that the
 * word's upper 54 bits are the tag (key << 32) | generation.
 */
#define MTHPCTL_MEMO_SHIFT_MASK	0x3fULL
#define MTHPCTL_MEMO_WHY_SHIFT	6
#define MTHPCTL_MEMO_WHY_MASK	0x7ULL
#define MTHPCTL_MEMO_SMALL_BIT	9
#define MTHPCTL_MEMO_TAG_SHIFT	10
#define MTHPCTL_MEMO_GEN_STEP	(1U << MTHPCTL_MEMO_TAG_SHIFT)
_Static_assert(MTHPCTL_NR_REASON <= MTHPCTL_MEMO_WHY_MASK + 1,
	       "a reason fits the memo's reason bits");

/* The memo's tag for a cgroup (serial number) at a generation. */
static inline __u64 mthpctl_memo_tag(__u64 serial, __u32 gen)
{
	/* gen's bits below the step are 0, and mthpctl_memo_hit() ignores them */
	return (serial << 32) | gen;
}

/* The memo word of an answer mthpctl_cap_mask(top) with reason why, for a
 * cgroup whose small processes get 4 KiB if small is not 0. */
static inline __u64 mthpctl_memo_word(__u64 tag, __u32 top, __u32 why, __u64 small)
{
	__u64 shift = top >= MTHPCTL_NO_CAP ? 0 : MTHPCTL_NO_CAP - top;

	return tag | ((__u64)!!small << MTHPCTL_MEMO_SMALL_BIT) |
	       ((why & MTHPCTL_MEMO_WHY_MASK) << MTHPCTL_MEMO_WHY_SHIFT) | shift;
}

/* The memo word of the auto policy's page-fault answer for a cgroup in
 * state s (the tag 0 gives what a memo holds, to compare). */
static inline __u64 mthpctl_auto_memo(const struct mthpctl_params *p,
				      const struct mthpctl_state *s, __u64 tag)
{
	__u32 why, top = mthpctl_auto_top(p, s, &why);

	return mthpctl_memo_word(tag, top, why, mthpctl_small_limit(s));
}

/* Does the memo word hold the answer for this tag? */
static inline int mthpctl_memo_hit(__u64 word, __u64 tag)
{
	return !((word ^ tag) >> MTHPCTL_MEMO_TAG_SHIFT);
}

static inline __u64 mthpctl_memo_allow(__u64 word)
{
	return ~0ULL >> (word & MTHPCTL_MEMO_SHIFT_MASK);
}

static inline __u32 mthpctl_memo_why(__u64 word)
{
	return (word >> MTHPCTL_MEMO_WHY_SHIFT) & MTHPCTL_MEMO_WHY_MASK;
}

/* mthpctl_small_limit() of the state the word was made from. */
static inline __u64 mthpctl_memo_small(__u64 word)
{
	return (word >> MTHPCTL_MEMO_SMALL_BIT & 1) * MTHPCTL_SMALL_PROC_BYTES;
}

/* The reason a page fault answered with ALLOW counts under: why if ALLOW
 * removed any of the offered ORDERS, else MTHPCTL_REASON_NONE (the BPF fast
 * path's counter). */
static inline __u32 mthpctl_fault_reason(__u64 orders, __u64 allow, __u32 why)
{
	return orders & ~allow ? why : MTHPCTL_REASON_NONE;
}

/* Does the sparse-mapping rule apply to a call (tva, orders) that the
 * cgroup's state answers with allow? Only then need the mapping be read. */
static inline int mthpctl_sparse_candidate(__u32 tva, __u64 orders, __u64 allow)
{
	return tva == MTHPCTL_TVA_PAGEFAULT && (orders & allow & ~1ULL);
}

/*
 * The simple policy: the rule an in-kernel heuristic would be, kept as the
 * baseline auto has to beat, and the strongest of its kind we found. It
 * reads the same samples as auto (taken by the same sampler) but keeps no
 * history: while the cgroup is near its limit (mthpctl_near_limit()) or
 * its last stall rate reached the threshold (pressure without a limit
 * near: the host's), orders 0..MTHPCTL_SIMPLE_SMALL_ORDER; otherwise
 * every size up to max-size. No ladder, hysteresis, low-usage or sparse
 * rule: what those add is what the comparison measures. 4 KiB under
 * pressure because that is where the kernel itself falls back when a
 * large folio cannot be had.
 *
 * Near the limit: see MTHPCTL_NEAR_DIV.
 */
#define MTHPCTL_SIMPLE_SMALL_ORDER	0

/* Does the policy decide from its cgroups' samples (state in cgroup
 * storage, the sampler)? fixed and never answer from their parameters. */
static inline int mthpctl_policy_sampled(__u32 policy)
{
	return policy == MTHPCTL_POLICY_AUTO || policy == MTHPCTL_POLICY_SIMPLE;
}

/* simple's answer for a cgroup in state s (never sampled: no evidence of
 * pressure, every size), and in *why the reason if it narrows. */
static inline __u64 mthpctl_simple_allow(const struct mthpctl_params *p,
					 const struct mthpctl_state *s, __u32 *why)
{
	__u32 top = p->max_order;

	*why = MTHPCTL_REASON_CAP;
	if (s->last_sample_ns && top > MTHPCTL_SIMPLE_SMALL_ORDER &&
	    (mthpctl_near_limit(s->flags, s->usage, s->headroom) ||
	     s->stall_rate_ns >= p->threshold_ns)) {
		top = MTHPCTL_SIMPLE_SMALL_ORDER;
		*why = MTHPCTL_REASON_PRESSURE;
	}
	return mthpctl_cap_mask(top);
}

/*
 * The orders the policy allows for one call of the hook. The kernel does
 * orders &= result. *reason says why offered orders were removed
 * (MTHPCTL_REASON_NONE when none were). vma may be NULL (unknown).
 *
 * tva rules (auto): MADV_COLLAPSE is always allowed (the application asked
 * explicitly); khugepaged and page faults (and smaps' report) follow the
 * cgroup's state; while the cgroup is small (or not sampled yet) only page
 * faults of processes that are not small get large folios (khugepaged and
 * smaps: 4 KiB, but for the collapse the policy asked for,
 * vma->collapse_asked, which follows that fault's rules); page faults in
 * a sparse mapping get 4 KiB. A dense fill of a large mapping
 * (vma->dense) is neither small nor sparse.
 * fixed/never cap every type, MADV_COLLAPSE included. simple
 * (mthpctl_simple_allow()) follows its state for every type but
 * MADV_COLLAPSE, as auto.
 */
static inline __u64 mthpctl_orders(const struct mthpctl_params *p,
				   const struct mthpctl_state *s,
				   __u32 tva, __u64 orders,
				   const struct mthpctl_vma_info *vma,
				   __u32 *reason)
{
	__u64 allow, small, cap = mthpctl_cap_mask(p->max_order);
	__u32 why = MTHPCTL_REASON_CAP;

	switch (p->policy) {
	case MTHPCTL_POLICY_NEVER:
		allow = 1;	/* order 0 only */
		break;
	case MTHPCTL_POLICY_FIXED:
		allow = cap;
		break;
	case MTHPCTL_POLICY_SIMPLE:
		allow = tva == MTHPCTL_TVA_FORCED_COLLAPSE ? cap : mthpctl_simple_allow(p, s, &why);
		break;
	default:		/* auto */
		allow = cap;
		if (tva == MTHPCTL_TVA_FORCED_COLLAPSE)
			break;
		small = mthpctl_small_limit(s);
		if (small && tva != MTHPCTL_TVA_PAGEFAULT) {
			/* 4 KiB, but for the collapse the policy asked for
			 * (see MTHPCTL_GROWN_WINDOW): that page fault's rules */
			__u32 r = vma && vma->collapse_asked ?
				  mthpctl_fault_narrow(vma, small) : MTHPCTL_REASON_LOW_USAGE;

			if (r != MTHPCTL_REASON_NONE) {
				allow = 1;
				why = r == MTHPCTL_REASON_LOW_USAGE ? mthpctl_restriction(s) : r;
				break;
			}
		}
		allow = mthpctl_auto_allow(p, s, &why);
		if (mthpctl_sparse_candidate(tva, orders, allow)) {
			__u32 r = mthpctl_fault_narrow(vma, small);

			if (r != MTHPCTL_REASON_NONE) {
				allow = 1;
				why = r;
			}
		}
		break;
	}
	*reason = (orders & ~allow) ? why : MTHPCTL_REASON_NONE;
	return allow;
}

#endif /* MTHPCTL_POLICY_H */
