// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The decision logic shared with the BPF program. */
#include <stdlib.h>
#include <string.h>
#include "tests.h"
#include "mthp_policy.h"
#include "../shuffle.h"

#define MS 1000000ULL
#define S 1000000000ULL
#define MB (1ULL << 20)
#define ALL_ANON 0x3fcULL	/* orders 2..9 as the kernel offers them */

static const struct mthpctl_params auto_p = {
	.magic = MTHPCTL_PARAMS_MAGIC, .policy = MTHPCTL_POLICY_AUTO,
	.max_order = MTHPCTL_NO_CAP, .window_ns = S, .threshold_ns = 100 * MS,
	.min_usage = 16 * MB,
};

/* Sample at time t (s) with cumulative stall (ms) and usage (MB). */
static __u32 feed(const struct mthpctl_params *p, struct mthpctl_state *s,
		  __u64 t_ms, __u64 stall_ms, __u64 usage_mb)
{
	struct mthpctl_sample x = {
		.now_ns = t_ms * MS, .stall_ns = stall_ms * MS, .usage = usage_mb * MB,
		.headroom = MTHPCTL_NO_LIMIT, .fill_rest = MTHPCTL_NO_LIMIT,
		.flags = MTHPCTL_SAMPLE_STALL | MTHPCTL_SAMPLE_USAGE,
	};
	return mthpctl_update(p, s, &x);
}

/* Does the BPF program (bpf/mthp.bpf.c: choose_slow(), choose_orders())
 * pass a mapping for this call? Every call of auto and simple gets one
 * (vma_info() of the faulting VMA, vma_sizes() of another call's, never
 * NULL); fixed and never get NULL. The tests give mthpctl_orders() only
 * such inputs. */
static int bpf_passes_vma(const struct mthpctl_params *p, __u32 tva)
{
	(void)tva;
	return mthpctl_policy_sampled(p->policy);
}

/* The anonymous orders allowed for a call of type tva offering all of
 * them, by a process vma (NULL where the BPF program passes none). */
static __u64 fault_of(const struct mthpctl_params *p, const struct mthpctl_state *s,
		      __u32 tva, const struct mthpctl_vma_info *vma, __u32 *reason)
{
	assert_int_equal(vma != NULL, bpf_passes_vma(p, tva));
	return ALL_ANON & mthpctl_orders(p, s, tva, ALL_ANON, vma, reason);
}

/* A small process (1 MiB of anonymous memory, under
 * MTHPCTL_SMALL_PROC_BYTES) faulting in a dense 8 MiB mapping, and a large
 * one (8 MiB in a 16 MiB mapping: dense, not small). */
static const struct mthpctl_vma_info small_proc_vma = { .vma_bytes = 8 * MB,
							.mm_anon_bytes = 1 * MB };
static const struct mthpctl_vma_info large_proc_vma = { .vma_bytes = 16 * MB,
							.mm_anon_bytes = 8 * MB };

/* A call of type tva by the small process (the mapping only where the BPF
 * program passes one). */
static __u64 fault(const struct mthpctl_params *p, const struct mthpctl_state *s,
		   __u32 tva, __u32 *reason)
{
	return fault_of(p, s, tva, bpf_passes_vma(p, tva) ? &small_proc_vma : NULL, reason);
}

/* A page fault of the large process. */
static __u64 fault_large(const struct mthpctl_params *p, const struct mthpctl_state *s,
			 __u32 *reason)
{
	return fault_of(p, s, MTHPCTL_TVA_PAGEFAULT, &large_proc_vma, reason);
}

/* A cgroup not sampled yet is small: its small processes get 4 KiB, a
 * large one large folios, khugepaged nothing. */
static void no_sample_is_small(void **state)
{
	struct mthpctl_state s = {};
	__u32 r;

	assert_int_equal(mthpctl_restriction(&s), MTHPCTL_REASON_NO_SAMPLE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	assert_true(fault_large(&auto_p, &s, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_NO_SAMPLE);
	/* MADV_COLLAPSE is never refused by auto */
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_FORCED_COLLAPSE, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
}

static void first_sample_usage_rule(void **state)
{
	struct mthpctl_state s = {};
	__u32 r;

	/* big enough, no rate yet: allowed */
	assert_int_equal(feed(&auto_p, &s, 1000, 5000, 64), MTHPCTL_REASON_NONE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	assert_true(s.stall_rate_ns == 0);
	/* a small cgroup: 4K for its small processes, not for a large one */
	memset(&s, 0, sizeof(s));
	assert_int_equal(feed(&auto_p, &s, 1000, 0, 15), MTHPCTL_REASON_LOW_USAGE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	assert_true(fault_large(&auto_p, &s, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	/* exactly the minimum is enough */
	memset(&s, 0, sizeof(s));
	assert_int_equal(feed(&auto_p, &s, 1000, 0, 16), MTHPCTL_REASON_NONE);
}

static void pressure_threshold(void **state)
{
	struct mthpctl_state s = {};

	feed(&auto_p, &s, 1000, 0, 64);
	/* 99 ms in 1 s: below */
	assert_int_equal(feed(&auto_p, &s, 2000, 99, 64), MTHPCTL_REASON_NONE);
	assert_true(s.stall_rate_ns == 99 * MS);
	/* 100 ms in 1 s: at threshold = pressure */
	assert_int_equal(feed(&auto_p, &s, 3000, 199, 64), MTHPCTL_REASON_PRESSURE);
	/* rate is normalised to the window: 200 ms over 2 s = 100 ms/s */
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 64);
	assert_int_equal(feed(&auto_p, &s, 3000, 200, 64), MTHPCTL_REASON_PRESSURE);
	assert_true(s.stall_rate_ns == 100 * MS);
}

static void pressure_zones(void **state)
{
	struct mthpctl_state s = {};
	__u32 r;

	feed(&auto_p, &s, 1000, 0, 64);
	/* a new episode starts at the smallest mTHP size, not at 4K */
	assert_int_equal(feed(&auto_p, &s, 2000, 300, 64), MTHPCTL_REASON_PRESSURE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0x4);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	/* 50..99 ms per window: hold the rung, however long */
	assert_int_equal(feed(&auto_p, &s, 3000, 360, 64), MTHPCTL_REASON_PRESSURE);
	assert_int_equal(feed(&auto_p, &s, 4000, 410, 64), MTHPCTL_REASON_PRESSURE);
	assert_int_equal(feed(&auto_p, &s, 9000, 660, 64), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == 2 && s.steps_up == 0 && s.steps_down == 1);
	/* below T/16 (6.25 ms): the pressure is over at once, every size */
	assert_int_equal(feed(&auto_p, &s, 10000, 665, 64), MTHPCTL_REASON_NONE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
	/* and 60 ms does not start an episode (needs 100 ms) */
	assert_int_equal(feed(&auto_p, &s, 11000, 725, 64), MTHPCTL_REASON_NONE);
	assert_int_equal(feed(&auto_p, &s, 12000, 825, 64), MTHPCTL_REASON_PRESSURE);
}

static void size_ladder(void **state)
{
	struct mthpctl_state s = {};
	__u32 r = 0;	/* set by fault(); clang cannot see that past the && */

	feed(&auto_p, &s, 1000, 0, 64);
	assert_int_equal(feed(&auto_p, &s, 2000, 300, 64), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == 2);
	/* still >= T: one rung down (16K -> 4K: there is no order 1) */
	feed(&auto_p, &s, 3000, 450, 64);
	assert_true(s.rung == 0 && fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	/* 10 ms: low, and the rung was held a window: try one up */
	feed(&auto_p, &s, 4000, 460, 64);
	assert_true(s.rung == 2 && s.probe_from == 0 && s.steps_up == 1);
	/* the trial brings stall >= T: back, and wait twice as long */
	feed(&auto_p, &s, 5000, 660, 64);
	assert_true(s.rung == 0 && s.backoff == 2 && s.good_rung == 1);
	assert_true(s.probe_from == MTHPCTL_NO_PROBE);
	feed(&auto_p, &s, 6000, 670, 64);
	assert_true(s.rung == 0);		/* waits 2 windows */
	feed(&auto_p, &s, 7000, 680, 64);
	assert_true(s.rung == 2 && s.probe_from == 0);
	feed(&auto_p, &s, 8000, 690, 64);
	assert_true(s.rung == 2);		/* trial runs 2 windows */
	/* the trial held: kept as good, the wait halves, next rung tried */
	feed(&auto_p, &s, 9000, 700, 64);
	assert_true(s.good_rung == 3 && s.backoff == 1 && s.rung == 3);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0xc);
	/* quiet: over; the trial in progress counts as good */
	assert_int_equal(feed(&auto_p, &s, 9500, 701, 64), MTHPCTL_REASON_NONE);
	assert_true(s.good_rung == 4);
	/* the next episode starts at the last good rung (32K) */
	assert_int_equal(feed(&auto_p, &s, 10500, 1001, 64), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == 3 && fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0xc);
}

/* Sample with a headroom (MB) to a memory limit. */
static __u32 feed_lim(struct mthpctl_state *s, __u64 t_ms, __u64 stall_ms, __u64 usage_mb,
		      __u64 headroom_mb)
{
	struct mthpctl_sample x = {
		.now_ns = t_ms * MS, .stall_ns = stall_ms * MS, .usage = usage_mb * MB,
		.headroom = headroom_mb * MB, .fill_rest = MTHPCTL_NO_LIMIT,
		.flags = MTHPCTL_SAMPLE_STALL | MTHPCTL_SAMPLE_USAGE,
	};
	return mthpctl_update(&auto_p, s, &x);
}

static void at_the_limit(void **state)
{
	struct mthpctl_state s = {}, far = {};

	assert_false(mthpctl_tight(MTHPCTL_SAMPLE_USAGE, 128 * MB, 8 * MB));
	assert_true(mthpctl_tight(MTHPCTL_SAMPLE_USAGE, 128 * MB,
				  8 * MB - 1));
	assert_false(mthpctl_tight(MTHPCTL_SAMPLE_USAGE, 128 * MB, MTHPCTL_NO_LIMIT));
	assert_false(mthpctl_tight(MTHPCTL_SAMPLE_STALL, 128 * MB, 0));	/* usage unknown */
	/* 20 ms of stall per window: nothing far from the limit ... */
	feed_lim(&far, 1000, 0, 128, 64);
	assert_int_equal(feed_lim(&far, 2000, 20, 128, 64), MTHPCTL_REASON_NONE);
	/* ... an episode at the limit, from the smallest mTHP size */
	feed_lim(&s, 1000, 0, 128, 1);
	assert_int_equal(feed_lim(&s, 2000, 20, 128, 1), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == MTHPCTL_LADDER_START && s.steps_down == 1);
	/* 20..40 ms: held there (far from the limit it would step up) */
	feed_lim(&s, 3000, 60, 128, 0);
	feed_lim(&s, 4000, 100, 128, 2);
	feed_lim(&s, 9000, 200, 128, 0);
	assert_true(s.rung == MTHPCTL_LADDER_START && s.steps_up == 0 && s.pressure);
	/* >= T still steps down */
	feed_lim(&s, 10000, 320, 128, 0);
	assert_true(s.rung == 0 && s.steps_down == 2);
	/* quiet at the limit: no end of the episode, one rung up (a trial) */
	assert_int_equal(feed_lim(&s, 11000, 321, 128, 0), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == MTHPCTL_LADDER_START && s.probe_from == 0 && s.steps_up == 1);
	/* the trial held a window: kept, and the next rung is tried */
	feed_lim(&s, 12000, 322, 128, 0);
	assert_true(s.good_rung == MTHPCTL_LADDER_START + 1 && s.rung == MTHPCTL_LADDER_START + 1);
	/* room again (the limit was raised): quiet ends the episode */
	assert_int_equal(feed_lim(&s, 13000, 323, 128, 512), MTHPCTL_REASON_NONE);
}

/* Growing towards a limit: limited before the limit is there (no stall). */
static void filling_towards_the_limit(void **state)
{
	struct mthpctl_state s = {}, nolim = {}, far = {};
	__u64 t, u;

	assert_false(mthpctl_filling(0, 8 * MB, MTHPCTL_NO_LIMIT));
	assert_false(mthpctl_filling(16 * MB, MTHPCTL_NO_LIMIT, MTHPCTL_NO_LIMIT));
	assert_false(mthpctl_filling(16 * MB, 8 * 16 * MB, MTHPCTL_NO_LIMIT));
	assert_true(mthpctl_filling(16 * MB, 8 * 16 * MB - 8, MTHPCTL_NO_LIMIT));
	assert_true(mthpctl_filling(MTHPCTL_NO_LIMIT / 2, 8 * MB, MTHPCTL_NO_LIMIT));
	/* a fill that ends within the headroom, however fast: not filling */
	assert_false(mthpctl_filling(64 * MB, 70 * MB, 64 * MB));
	assert_false(mthpctl_filling(64 * MB, 70 * MB, 70 * MB));
	assert_true(mthpctl_filling(64 * MB, 70 * MB, 70 * MB + 1));
	/* 16 MB per window, no limit or a limit far beyond: no episode */
	for (t = 1000, u = 32; t <= 4000; t += 1000, u += 16) {
		assert_int_equal(feed(&auto_p, &nolim, t, 0, u), MTHPCTL_REASON_NONE);
		assert_int_equal(feed_lim(&far, t, 0, u, 1024), MTHPCTL_REASON_NONE);
	}
	/* 200 MB of headroom: nothing until it is below 8 windows of growth */
	assert_int_equal(feed_lim(&s, 1000, 0, 32, 200), MTHPCTL_REASON_NONE);
	assert_int_equal(feed_lim(&s, 2000, 0, 48, 184), MTHPCTL_REASON_NONE);
	assert_int_equal(feed_lim(&s, 3000, 0, 64, 120), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == MTHPCTL_LADDER_START && s.steps_down == 1);
	/* no stall while it fills: held, no trial of a larger size */
	assert_int_equal(feed_lim(&s, 4000, 0, 80, 104), MTHPCTL_REASON_PRESSURE);
	assert_int_equal(feed_lim(&s, 5000, 0, 96, 88), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == MTHPCTL_LADDER_START && s.steps_up == 0 &&
		    s.probe_from == MTHPCTL_NO_PROBE);
	/* stall >= T still steps down while filling */
	assert_int_equal(feed_lim(&s, 6000, 150, 112, 72), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == 0 && s.steps_down == 2);
	/* the growth stops far from the limit: quiet ends the episode */
	assert_int_equal(feed_lim(&s, 7000, 150, 112, 72), MTHPCTL_REASON_NONE);
}

/* Sample with a headroom and the hint of the BPF program's slow path;
 * does the ladder cap the cgroup after it? */
static int feed_hint(struct mthpctl_state *s, struct mthpctl_fill_hint *h, __u64 t_ms,
		       __u64 usage_mb, __u64 headroom_mb)
{
	struct mthpctl_sample x = {
		.now_ns = t_ms * MS, .usage = usage_mb * MB, .headroom = headroom_mb * MB,
		.flags = MTHPCTL_SAMPLE_STALL | MTHPCTL_SAMPLE_USAGE,
	};

	mthpctl_fill_hint_take(h, &x);
	mthpctl_update(&auto_p, s, &x);
	return s->pressure;
}

/* A fault of a process holding anon_mb MB in a mapping of vma_mb MB at
 * start, as the slow path notes it. */
static void note(struct mthpctl_fill_hint *h, __u64 start, __u64 vma_mb, __u64 anon_mb)
{
	struct mthpctl_vma_info v = { .vma_bytes = vma_mb * MB, .mm_anon_bytes = anon_mb * MB };

	mthpctl_fill_hint_note(h, start, &v);
}

/* The growth towards the limit is bounded by what the faulting mapping can
 * still take: bench mixed's batch job (a 64 MB array, ~70 MB of a shared
 * node's headroom) is not limited; a heap that grows past the limit is. */
static void filling_a_mapping(void **state)
{
	struct mthpctl_state s = {}, heap = {}, two = {};
	struct mthpctl_fill_hint h = {}, hh = {}, h2 = {};
	struct mthpctl_vma_info big = { .vma_bytes = 64 * MB, .mm_anon_bytes = 65 * MB };
	struct mthpctl_sample x = {};

	assert_int_equal(mthpctl_fill_rest(&big), 64 * MB);	/* nothing known */
	/* no fault noted since the last sample: no bound */
	mthpctl_fill_hint_take(&h, &x);
	assert_true(x.fill_rest == MTHPCTL_NO_LIMIT);

	/* the array's first interval: a new mapping, no bound yet */
	assert_false(feed_hint(&s, &h, 1000, 2, 70));
	note(&h, 1ULL << 30, 64, 2);
	assert_true(feed_hint(&s, &h, 1500, 18, 54));
	/* the same mapping: it grows 32 MB per window with 30 MB of headroom
	 * left, but what is left to fill (24 MB) fits */
	note(&h, 1ULL << 30, 64, 40);
	assert_false(feed_hint(&s, &h, 2000, 34, 38));
	note(&h, 1ULL << 30, 64, 56);
	assert_false(feed_hint(&s, &h, 2500, 50, 22));
	assert_false(s.pressure);
	/* it would not fit: limited again */
	note(&h, 1ULL << 30, 64, 56);
	assert_true(feed_hint(&s, &h, 3000, 60, 7));

	/* a heap growing by its end (brk): its mapping changes size, the
	 * growth is projected as without a bound */
	feed_hint(&heap, &hh, 1000, 32, 96);
	note(&hh, 1ULL << 30, 48, 32);
	feed_hint(&heap, &hh, 2000, 48, 80);
	note(&hh, 1ULL << 30, 64, 48);
	assert_true(feed_hint(&heap, &hh, 3000, 64, 64));
	note(&hh, 1ULL << 30, 80, 64);
	assert_true(feed_hint(&heap, &hh, 4000, 80, 48));
	/* a fixed mapping again, but its rest does not fit: still limited */
	note(&hh, 1ULL << 30, 80, 64);
	feed_hint(&heap, &hh, 4500, 80, 48);
	note(&hh, 1ULL << 30, 200, 80);
	feed_hint(&heap, &hh, 5000, 88, 40);
	note(&hh, 1ULL << 30, 200, 88);
	assert_true(feed_hint(&heap, &hh, 5500, 96, 32));

	/* faults in two mappings since the sample: no bound */
	note(&h2, 1ULL << 30, 64, 2);
	feed_hint(&two, &h2, 1000, 2, 70);
	note(&h2, 1ULL << 30, 64, 18);
	feed_hint(&two, &h2, 1500, 18, 54);
	note(&h2, 1ULL << 30, 64, 20);
	note(&h2, 2ULL << 30, 64, 22);
	assert_true(feed_hint(&two, &h2, 2000, 34, 38));
}

static void ladder_top_and_cap(void **state)
{
	struct mthpctl_params p = auto_p;
	struct mthpctl_state s = {};
	__u64 t = 1000, stall = 0;
	__u32 r;
	int i;

	/* climbing to the top ends the episode without a quiet window */
	feed(&p, &s, t, stall, 64);
	t += 1000; stall += 300;
	feed(&p, &s, t, stall, 64);
	for (i = 0; i < 20 && s.pressure; i++) {
		t += 1000; stall += 20;		/* low zone: steps up */
		feed(&p, &s, t, stall, 64);
	}
	assert_false(s.pressure);
	assert_true(s.steps_up == 7);		/* 16K .. 2M: 2->3->..->9 */
	/* a cap lowers the top; an episode never starts above the cap */
	memset(&s, 0, sizeof(s));
	p.max_order = 2;
	feed(&p, &s, 1000, 0, 64);
	feed(&p, &s, 2000, 300, 64);
	assert_true(s.rung == 0);
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	/* top_order from the kernel (PMD order 13 with 64K pages... or 9) */
	p = auto_p;
	p.top_order = 4;
	assert_int_equal(mthpctl_ladder_top(&p), 4);
	p.top_order = 0;
	assert_int_equal(mthpctl_ladder_top(&p), MTHPCTL_DEFAULT_TOP_ORDER);
	assert_int_equal(mthpctl_rung_up(0), 2);
	assert_int_equal(mthpctl_rung_down(2), 0);
	assert_int_equal(mthpctl_rung_down(5), 4);
}

static void usage_hysteresis(void **state)
{
	struct mthpctl_state s = {};

	/* usage that is not growing fast enough to pass the minimum */
	assert_int_equal(feed(&auto_p, &s, 1000, 0, 8), MTHPCTL_REASON_LOW_USAGE);
	assert_int_equal(feed(&auto_p, &s, 2000, 0, 8), MTHPCTL_REASON_LOW_USAGE);
	/* 16 MB..20 MB is the band: still 4K when coming from below (one
	 * interval of growth is not yet growing) */
	assert_int_equal(feed(&auto_p, &s, 3000, 0, 16), MTHPCTL_REASON_LOW_USAGE);
	assert_int_equal(feed(&auto_p, &s, 4000, 0, 16), MTHPCTL_REASON_LOW_USAGE);
	assert_int_equal(feed(&auto_p, &s, 5000, 0, 20), MTHPCTL_REASON_NONE);
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 10);
	feed(&auto_p, &s, 2000, 0, 13);
	assert_int_equal(feed(&auto_p, &s, 3000, 0, 15), MTHPCTL_REASON_NONE);	/* growing */
	assert_int_equal(feed(&auto_p, &s, 4000, 0, 16), MTHPCTL_REASON_NONE);
	/* going down: small again once the decaying peak is below 16 MB */
	assert_int_equal(feed(&auto_p, &s, 5000, 0, 15), MTHPCTL_REASON_LOW_USAGE);
	/* growth that stops below the minimum: small again at the next sample */
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 6);
	feed(&auto_p, &s, 2000, 0, 11);
	assert_int_equal(feed(&auto_p, &s, 3000, 0, 14), MTHPCTL_REASON_NONE);	/* growing */
	assert_int_equal(feed(&auto_p, &s, 4000, 0, 14), MTHPCTL_REASON_LOW_USAGE);
	assert_int_equal(feed(&auto_p, &s, 5000, 0, 20), MTHPCTL_REASON_NONE);
}

static void growth_rule(void **state)
{
	struct mthpctl_state s = {};
	__u32 r;

	/* a server filling its heap at 32 MB/s: large folios from its third
	 * sample, 125 ms after its first fault, not after 20 MB of 4K */
	assert_int_equal(feed(&auto_p, &s, 1000, 0, 1), MTHPCTL_REASON_LOW_USAGE);
	assert_true(mthpctl_sample_interval(&auto_p, &s) == S / 16);
	assert_int_equal(feed(&auto_p, &s, 1062, 0, 3), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.growth > 30 * MB && s.growth < 34 * MB && s.grow_streak == 1);
	assert_int_equal(feed(&auto_p, &s, 1125, 0, 5), MTHPCTL_REASON_NONE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
	/* a small process touching its few MB at once: one fast interval,
	 * then nothing: stays small */
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 0);
	assert_int_equal(feed(&auto_p, &s, 1062, 0, 4), MTHPCTL_REASON_LOW_USAGE);
	assert_int_equal(feed(&auto_p, &s, 1125, 0, 4), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.grow_streak == 0);
	/* a burst that stops after two fast intervals: small again at once */
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 1);
	feed(&auto_p, &s, 1062, 0, 4);
	assert_int_equal(feed(&auto_p, &s, 1125, 0, 7), MTHPCTL_REASON_NONE);
	assert_int_equal(feed(&auto_p, &s, 1187, 0, 7), MTHPCTL_REASON_LOW_USAGE);
	/* slow growth that will not reach the minimum within a window */
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 1);
	assert_int_equal(feed(&auto_p, &s, 2000, 0, 2), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.growth == 1 * MB);
	/* shrinking is no growth */
	assert_int_equal(feed(&auto_p, &s, 3000, 0, 1), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.growth == 0);
}

static void sparse_mapping(void **state)
{
	struct mthpctl_state s = {};
	struct mthpctl_vma_info sparse = { .vma_bytes = 64 * MB, .mm_anon_bytes = 1 * MB };
	struct mthpctl_vma_info dense = { .vma_bytes = 64 * MB, .mm_anon_bytes = 2 * MB };
	struct mthpctl_vma_info small = { .vma_bytes = 8 * MB, .mm_anon_bytes = 0 };
	__u32 r;

	feed(&auto_p, &s, 1000, 0, 64);
	assert_true(mthpctl_vma_sparse(&sparse) && !mthpctl_vma_sparse(&dense));
	assert_false(mthpctl_vma_sparse(&small));	/* waste bounded by the VMA */
	assert_false(mthpctl_vma_sparse(NULL));
	assert_true(mthpctl_orders(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, ALL_ANON,
				   &sparse, &r) == 1);
	assert_int_equal(r, MTHPCTL_REASON_SPARSE);
	assert_true((ALL_ANON & mthpctl_orders(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, ALL_ANON,
					       &dense, &r)) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	/* khugepaged decides with its own max_ptes_none: not sparse-limited */
	assert_true((ALL_ANON & mthpctl_orders(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, ALL_ANON,
					       &sparse, &r)) == ALL_ANON);
	/* nothing large offered: no fallback counted */
	mthpctl_orders(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, 1, &sparse, &r);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	/* fixed ignores it */
	{
		struct mthpctl_params p = auto_p;

		p.policy = MTHPCTL_POLICY_FIXED;
		p.max_order = 4;
		assert_true((ALL_ANON & mthpctl_orders(&p, &s, MTHPCTL_TVA_PAGEFAULT, ALL_ANON,
						       &sparse, &r)) == 0x1c);
	}
}

/*
 * A fill of a mapping of NPAGES pages at FILL_BASE: N faults at the page
 * indices ORDER[], as the kernel would see it under the auto policy's per-call
 * rules: a page whose 2 MiB range already holds a PMD folio does not fault;
 * a fault judged dense in an untouched range maps a PMD folio there; any
 * other fault a 4 KiB page. Returns the ranges that got a PMD folio.
 */
#define FILL_BASE	(1ULL << 40)
#define PAGES_PER_PMD	512

static unsigned int fill_pmds(const size_t *order, __u32 n, __u32 npages)
{
	__u32 nranges = npages / PAGES_PER_PMD, i, pmds = 0;
	unsigned char *range = calloc(nranges, 1);	/* 1: 4K pages, 2: PMD */
	struct mthpctl_fill f = {};

	assert_non_null(range);
	for (i = 0; i < n; i++) {
		__u32 pg = order[i], rg = pg / PAGES_PER_PMD;

		assert_true(pg < npages);

		if (range[rg] == 2)
			continue;
		if (mthpctl_fill_dense(&f, FILL_BASE + (__u64)pg * 4096, 12, 9) && !range[rg]) {
			range[rg] = 2;
			pmds++;
		} else {
			range[rg] = 1;
		}
	}
	free(range);
	return pmds;
}

/* Dense fills, in order or at random, get PMD folios in >= 90% of their
 * 2 MiB ranges; strided touchers (one page per 128 KiB or per 2 MiB,
 * forwards or backwards) in none. */
static void fill_order(void **state)
{
	const __u32 npages = 384 * PAGES_PER_PMD / 2;	/* 384 MiB */
	size_t *order = calloc(npages, sizeof(*order));
	__u32 i, n, seed;

	assert_non_null(order);
	for (i = 0; i < npages; i++)
		order[i] = i;
	/* in order: only the first range misses (its first fault is 4K) */
	assert_int_equal(fill_pmds(order, npages, npages), npages / PAGES_PER_PMD - 1);
	for (seed = 1; seed <= 5; seed++) {
		test_shuffle(order, npages, 0x9e3779b97f4a7c15ULL * seed);
		assert_true(fill_pmds(order, npages, npages) * 10 >= npages / PAGES_PER_PMD * 9);
	}
	/* strided: every 32nd page, every 512th, and backwards */
	for (n = 0, i = 0; i < npages; i += 32)
		order[n++] = i;
	assert_int_equal(fill_pmds(order, n, npages), 0);
	for (n = 0, i = 0; i < npages; i += PAGES_PER_PMD)
		order[n++] = i;
	assert_int_equal(fill_pmds(order, n, npages), 0);
	for (n = 0, i = npages; i >= 32; i -= 32)
		order[n++] = i - 32;
	assert_int_equal(fill_pmds(order, n, npages), 0);
	free(order);
}

/* A strided toucher that maps one address again and again (the record
 * outlives each munmap) stays a strided toucher; a dense fill there too,
 * whose first fault is dense from its second round on (the fill given
 * back was dense), not after the strided rounds. */
static void fill_remapped(void **state)
{
	const __u64 vma = 64 * MB;
	struct mthpctl_fill f = {};
	__u64 off;
	int round, dense;

	for (round = 0; round < 4; round++)
		for (off = 0; off < vma; off += 128 * 1024) {
			assert_false(mthpctl_fill_dense(&f, FILL_BASE + off, 12, 9));
			assert_int_equal(mthpctl_fill_strided(&f, vma, 12), off >= 2 * 128 * 1024);
		}
	for (round = 0; round < 4; round++)
		for (off = 0; off < vma; off += 4096) {
			dense = mthpctl_fill_dense(&f, FILL_BASE + off, 12, 9);
			assert_int_equal(dense, off != 0 || round > 0);
			if (dense)	/* the PMD folio maps the rest of its range */
				off = (((off >> 21) + 1) << 21) - 4096;
		}
}

/* A sparse toucher whose process holds more than the sparse rule allows
 * elsewhere (what fork gave it) keeps 4 KiB in the mapping its first faults
 * were followed in; a dense fill there gets large folios. */
static void fill_strided_outgrown(void **state)
{
	const __u64 vma = 32 * MB, stride = 128 * 1024;
	struct mthpctl_vma_info v = { .vma_bytes = vma, .mm_anon_bytes = 1536 * 1024 };
	struct mthpctl_fill f = {};
	struct mthpctl_state s = {};
	__u64 off;
	__u32 r;

	feed(&auto_p, &s, 1000, 0, 64);		/* not small, no pressure */
	assert_false(mthpctl_fill_tracked(&v, 0));	/* the process rules: large */
	for (off = 0; off < vma; off += stride) {
		v.dense = mthpctl_fill_dense(&f, FILL_BASE + off, 12, 9);
		v.strided = !v.dense && mthpctl_fill_strided(&f, vma, 12);
		if (off >= 2 * stride) {	/* from its third fault */
			assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &v, &r) == 0);
			assert_int_equal(r, MTHPCTL_REASON_SPARSE);
		}
	}
	/* the same mapping filled densely from its start, in order */
	memset(&f, 0, sizeof(f));
	for (off = 0; off < vma; off += 4096) {
		v.dense = mthpctl_fill_dense(&f, FILL_BASE + off, 12, 9);
		v.strided = !v.dense && mthpctl_fill_strided(&f, vma, 12);
		if (off)
			assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &v, &r) ==
				    ALL_ANON);
	}
	/* denser than 1/32 of the mapping: no longer a sparse toucher */
	memset(&f, 0, sizeof(f));
	for (off = 0; off < vma; off += 64 * 1024) {
		v.dense = mthpctl_fill_dense(&f, FILL_BASE + off, 12, 9);
		v.strided = !v.dense && mthpctl_fill_strided(&f, vma, 12);
	}
	assert_false(v.strided);
}

/* Only a fault the rules of the call would give 4 KiB in a large mapping
 * is judged by its fill; dense, it is neither small nor sparse. */
static void fill_overrides_rules(void **state)
{
	struct mthpctl_vma_info v = { .vma_bytes = 64 * MB, .mm_anon_bytes = 1 * MB };
	struct mthpctl_vma_info small_vma = { .vma_bytes = 8 * MB, .mm_anon_bytes = 0 };
	struct mthpctl_state s = {};
	__u32 r;

	feed(&auto_p, &s, 1000, 0, 64);
	assert_true(mthpctl_fill_tracked(&v, 0));		/* sparse */
	assert_true(mthpctl_fill_tracked(&v, MTHPCTL_SMALL_PROC_BYTES));
	assert_false(mthpctl_fill_tracked(&small_vma, MTHPCTL_SMALL_PROC_BYTES));
	v.mm_anon_bytes = 4 * MB;
	assert_false(mthpctl_fill_tracked(&v, 0));		/* dense enough */
	v.mm_anon_bytes = 1 * MB;
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &v, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_SPARSE);
	v.dense = 1;
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &v, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	/* and in a small cgroup, for a small process */
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 1);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &v, &r) == ALL_ANON);
	v.dense = 0;
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &v, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	/* pressure still caps a dense fill */
	memset(&s, 0, sizeof(s));
	s.last_sample_ns = 1;
	s.pressure = 1;
	s.rung = 4;
	v.dense = 1;
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &v, &r) == (ALL_ANON & 0x1f));
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
}

static void usage_recent_peak(void **state)
{
	struct mthpctl_state s = {};
	__u64 t = 1000;
	int i;

	/* a process that maps 64 MB, touches it and unmaps it, in a loop: a
	 * sample between two mappings does not make it small */
	assert_int_equal(feed(&auto_p, &s, t, 0, 64), MTHPCTL_REASON_NONE);
	for (i = 0; i < 10; i++) {
		t += 1000;
		assert_int_equal(feed(&auto_p, &s, t, 0, 0), MTHPCTL_REASON_NONE);
	}
	/* staying small for 11 windows makes it small again */
	t += 1000;
	assert_int_equal(feed(&auto_p, &s, t, 0, 0), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.usage_peak < 16 * MB);

	/* decay is by elapsed windows: after 8 windows without a sample the
	 * peak is gone */
	memset(&s, 0, sizeof(s));
	feed(&auto_p, &s, 1000, 0, 1024);
	assert_int_equal(feed(&auto_p, &s, 1500, 0, 0), MTHPCTL_REASON_NONE);
	assert_true(s.usage_peak == 1024 * MB);
	assert_int_equal(feed(&auto_p, &s, 9500, 0, 0), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.usage_peak == 0);
	assert_true(mthpctl_decay_peak(800, 3000, 0) == 0);
	assert_true(mthpctl_decay_peak(800, 3000, 1000) == 500);
}

static void sample_interval(void **state)
{
	struct mthpctl_state s = {};

	/* faster sampling while small or unsampled: growth is seen early */
	assert_true(mthpctl_sample_interval(&auto_p, &s) ==
		    S / MTHPCTL_LOW_USAGE_SAMPLES_PER_WINDOW);
	feed(&auto_p, &s, 1000, 0, 1);
	assert_true(mthpctl_sample_interval(&auto_p, &s) ==
		    S / MTHPCTL_LOW_USAGE_SAMPLES_PER_WINDOW);
	feed(&auto_p, &s, 1062, 0, 64);
	assert_true(mthpctl_sample_interval(&auto_p, &s) == S / MTHPCTL_SAMPLES_PER_WINDOW);
	/* a half-window sample measures the same rate as a whole one */
	feed(&auto_p, &s, 1562, 50, 64);
	assert_true(s.stall_rate_ns == 100 * MS && s.pressure);
}

/* A small cgroup under pressure: its small processes get 4 KiB (low
 * usage), a large process the pressure's rung; once the cgroup is not
 * small, every process gets the rung. */
static void small_cgroup_under_pressure(void **state)
{
	struct mthpctl_state s = {};
	__u32 r;

	feed(&auto_p, &s, 1000, 0, 8);
	assert_int_equal(feed(&auto_p, &s, 2000, 500, 8), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.pressure);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	assert_true(fault_large(&auto_p, &s, &r) == 0x4);	/* rung 2: 16K */
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	/* khugepaged: the small cgroup's 4 KiB */
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	assert_int_equal(feed(&auto_p, &s, 3000, 1000, 72), MTHPCTL_REASON_PRESSURE);
	assert_true(s.rung == 0);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	assert_true(fault_large(&auto_p, &s, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
}

/* While the cgroup is small, only a small process gets 4 KiB: a process
 * that holds MTHPCTL_SMALL_PROC_BYTES gets the cgroup's answer as if it
 * were not small (the rung under pressure), and the sparse rule after it;
 * khugepaged keeps the small cgroup's memory at 4 KiB, but for the
 * collapse auto asks for a process that grew past the limit
 * (mthpctl_grown()), which follows that page fault's rules. */
static void small_process_rule(void **state)
{
	const struct mthpctl_vma_info small_proc = { .vma_bytes = 8 * MB,
						     .mm_anon_bytes = 1536 * 1024 };
	const struct mthpctl_vma_info big_proc = { .vma_bytes = 8 * MB,
						   .mm_anon_bytes = MTHPCTL_SMALL_PROC_BYTES };
	const struct mthpctl_vma_info big_sparse = { .vma_bytes = 512 * MB,
						     .mm_anon_bytes = 8 * MB };
	const struct mthpctl_vma_info big_asked = { .vma_bytes = 8 * MB,
						    .mm_anon_bytes = MTHPCTL_SMALL_PROC_BYTES,
						    .collapse_asked = 1 };
	const struct mthpctl_vma_info sparse_asked = { .vma_bytes = 512 * MB,
						       .mm_anon_bytes = 8 * MB,
						       .collapse_asked = 1 };
	const struct mthpctl_vma_info small_asked = { .vma_bytes = 8 * MB,
						      .mm_anon_bytes = 1536 * 1024,
						      .collapse_asked = 1 };
	struct mthpctl_state s = {};
	__u32 r;

	assert_int_equal(feed(&auto_p, &s, 1000, 0, 8), MTHPCTL_REASON_LOW_USAGE);
	assert_true(mthpctl_small_limit(&s) == MTHPCTL_SMALL_PROC_BYTES);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &small_proc, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &big_proc, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &big_sparse, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_SPARSE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &small_proc, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &big_proc, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_SMAPS, &big_proc, &r) == 0);
	/* the collapse auto asked for follows the page fault's rules */
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &big_asked, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &sparse_asked, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_SPARSE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &small_asked, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	/* the first faults past the limit ask for a collapse, none before
	 * and none well after it */
	assert_false(mthpctl_grown(small_proc.mm_anon_bytes, mthpctl_small_limit(&s)));
	assert_true(mthpctl_grown(big_proc.mm_anon_bytes, mthpctl_small_limit(&s)));
	assert_true(mthpctl_grown(MTHPCTL_SMALL_PROC_BYTES + MTHPCTL_GROWN_WINDOW - 4096,
				  mthpctl_small_limit(&s)));
	assert_false(mthpctl_grown(MTHPCTL_SMALL_PROC_BYTES + MTHPCTL_GROWN_WINDOW,
				   mthpctl_small_limit(&s)));
	assert_false(mthpctl_grown(big_sparse.mm_anon_bytes, mthpctl_small_limit(&s)));
	/* small and under pressure: a large process gets the rung (16K) */
	assert_int_equal(feed(&auto_p, &s, 2000, 500, 8), MTHPCTL_REASON_LOW_USAGE);
	assert_true(s.pressure);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &big_proc, &r) == 0x4);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	assert_true(fault_of(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &small_proc, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_LOW_USAGE);
	/* not small any more: no per-process limit */
	feed(&auto_p, &s, 3000, 500, 64);
	assert_true(mthpctl_small_limit(&s) == 0);
	assert_int_equal(mthpctl_fault_narrow(&small_proc, mthpctl_small_limit(&s)),
			 MTHPCTL_REASON_NONE);
	assert_false(mthpctl_grown(big_proc.mm_anon_bytes, mthpctl_small_limit(&s)));
}

static void tva_rules(void **state)
{
	struct mthpctl_state s = {};
	__u32 r;

	feed(&auto_p, &s, 1000, 0, 64);
	feed(&auto_p, &s, 2000, 500, 64);	/* pressure: 16K */
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0x4);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &r) == 0x4);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_SMAPS, &r) == 0x4);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_OTHER, &r) == 0x4);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_FORCED_COLLAPSE, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	feed(&auto_p, &s, 3000, 500, 64);	/* quiet: pressure over */
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_KHUGEPAGED, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	assert_true(fault(&auto_p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
}

static void auto_with_cap(void **state)
{
	struct mthpctl_params p = auto_p;
	struct mthpctl_state s = {};
	__u32 r;

	p.max_order = 4;	/* 64K */
	feed(&p, &s, 1000, 0, 64);
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0x1c);
	assert_int_equal(r, MTHPCTL_REASON_CAP);
	assert_true(fault(&p, &s, MTHPCTL_TVA_FORCED_COLLAPSE, &r) == 0x1c);
	/* nothing above the cap offered: not a fallback */
	assert_true(mthpctl_orders(&p, &s, MTHPCTL_TVA_PAGEFAULT, 0x1c, &small_proc_vma, &r) & 0x1c);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
}

static void fixed_and_never(void **state)
{
	struct mthpctl_params p = auto_p;
	struct mthpctl_state s = {};	/* never sampled: irrelevant for fixed */
	__u32 r;

	p.policy = MTHPCTL_POLICY_FIXED;
	p.max_order = 9;
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	p.max_order = 2;
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0x4);
	assert_int_equal(r, MTHPCTL_REASON_CAP);
	assert_true(fault(&p, &s, MTHPCTL_TVA_FORCED_COLLAPSE, &r) == 0x4);
	p.max_order = 0;
	assert_true(fault(&p, &s, MTHPCTL_TVA_KHUGEPAGED, &r) == 0);
	p.policy = MTHPCTL_POLICY_NEVER;
	p.max_order = MTHPCTL_NO_CAP;
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_CAP);
	assert_true(fault(&p, &s, MTHPCTL_TVA_FORCED_COLLAPSE, &r) == 0);
	/* nothing offered: nothing fell back */
	mthpctl_orders(&p, &s, MTHPCTL_TVA_PAGEFAULT, 0, NULL, &r);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
}

/* Feed one sample with a headroom (bytes to the nearest limit). */
static void feed_headroom(const struct mthpctl_params *p, struct mthpctl_state *s,
			  __u64 t_ms, __u64 stall_ms, __u64 usage_mb, __u64 headroom)
{
	struct mthpctl_sample x = {
		.now_ns = t_ms * MS, .stall_ns = stall_ms * MS, .usage = usage_mb * MB,
		.headroom = headroom, .fill_rest = MTHPCTL_NO_LIMIT,
		.flags = MTHPCTL_SAMPLE_STALL | MTHPCTL_SAMPLE_USAGE,
	};

	mthpctl_update(p, s, &x);
}

/* simple: 4 KiB while near the limit (headroom below 1/MTHPCTL_NEAR_DIV
 * of usage plus headroom) or stalled, every size otherwise; no history
 * (the next sample far from the limit and without stall gives every size
 * back at once), no low-usage or sparse rule, MADV_COLLAPSE not refused. */
static void simple_rule(void **state)
{
	const struct mthpctl_vma_info sparse = { .vma_bytes = 64 * MB, .mm_anon_bytes = 1 * MB };
	/* at 64 MiB used: the largest headroom that is near the limit */
	const __u64 near = 64 * MB / (MTHPCTL_NEAR_DIV - 1) - 4096;
	struct mthpctl_params p = auto_p;
	struct mthpctl_state s = {};
	__u32 r;

	p.policy = MTHPCTL_POLICY_SIMPLE;
	/* not sampled yet: no evidence of pressure, every size */
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	/* a small cgroup (1 MiB) and a sparse mapping: still every size */
	feed(&p, &s, 1000, 0, 1);
	feed(&p, &s, 2000, 0, 1);
	assert_true((ALL_ANON & mthpctl_orders(&p, &s, MTHPCTL_TVA_PAGEFAULT, ALL_ANON,
					       &sparse, &r)) == ALL_ANON);
	assert_true(fault(&p, &s, MTHPCTL_TVA_KHUGEPAGED, &r) == ALL_ANON);
	/* stall at the threshold (100 ms in a 1 s window) without a limit
	 * near: 4 KiB; just below it: every size again at once */
	feed(&p, &s, 3000, 100, 64);
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	feed(&p, &s, 4000, 199, 64);
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
	/* near the limit without stall: 4 KiB, for every type but
	 * MADV_COLLAPSE */
	feed_headroom(&p, &s, 5000, 199, 64, near);
	assert_true(mthpctl_near_limit(s.flags, s.usage, s.headroom));
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
	assert_true(fault(&p, &s, MTHPCTL_TVA_KHUGEPAGED, &r) == 0);
	assert_true(fault(&p, &s, MTHPCTL_TVA_FORCED_COLLAPSE, &r) == ALL_ANON);
	/* two pages more of headroom: every size again at once (auto would
	 * hold a rung) */
	feed_headroom(&p, &s, 6000, 199, 64, near + 2 * 4096);
	assert_false(mthpctl_near_limit(s.flags, s.usage, s.headroom));
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == ALL_ANON);
	assert_int_equal(r, MTHPCTL_REASON_NONE);
	/* no limit, or usage not known: never near */
	assert_false(mthpctl_near_limit(MTHPCTL_SAMPLE_USAGE, 64 * MB, MTHPCTL_NO_LIMIT));
	assert_false(mthpctl_near_limit(MTHPCTL_SAMPLE_STALL, 64 * MB, 0));
	/* --max-size caps it when free; near the limit 4 KiB still */
	p.max_order = 4;
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0x1c);
	assert_int_equal(r, MTHPCTL_REASON_CAP);
	feed_headroom(&p, &s, 7000, 199, 64, 0);
	assert_true(fault(&p, &s, MTHPCTL_TVA_PAGEFAULT, &r) == 0);
	assert_int_equal(r, MTHPCTL_REASON_PRESSURE);
}

/* mthpctl_orders() written in one piece, without the split into the
 * cgroup-wide answer and the per-call rules: the reference the split must
 * match. */
static __u64 ref_orders(const struct mthpctl_params *p, const struct mthpctl_state *s,
			__u32 tva, __u64 orders, const struct mthpctl_vma_info *vma,
			__u32 *reason)
{
	__u64 allow, cap = mthpctl_cap_mask(p->max_order);
	__u32 why = MTHPCTL_REASON_CAP;

	switch (p->policy) {
	case MTHPCTL_POLICY_NEVER:
		allow = 1;
		break;
	case MTHPCTL_POLICY_FIXED:
		allow = cap;
		break;
	default:
		allow = cap;
		if (tva != MTHPCTL_TVA_FORCED_COLLAPSE) {
			__u32 r = mthpctl_restriction(s);
			int small_cg = r == MTHPCTL_REASON_LOW_USAGE ||
				       r == MTHPCTL_REASON_NO_SAMPLE;

			/* a small cgroup's other calls: 4 KiB, but for the
			 * collapse auto asked for: that page fault's rules */
			if (small_cg && tva != MTHPCTL_TVA_PAGEFAULT &&
			    !(vma && vma->collapse_asked && vma->dense)) {
				if (!vma || !vma->collapse_asked || vma->mm_anon_bytes < 2 * MB) {
					allow = 1;
					why = r;
					break;
				}
				if (vma->vma_bytes >= 16 * MB &&
				    vma->mm_anon_bytes < vma->vma_bytes / 32) {
					allow = 1;
					why = MTHPCTL_REASON_SPARSE;
					break;
				}
			}
			/* a small cgroup's page faults: first what it would
			 * get if it were not small */
			if (small_cg)
				r = s->pressure ? MTHPCTL_REASON_PRESSURE : MTHPCTL_REASON_NONE;
			if (r == MTHPCTL_REASON_PRESSURE) {
				allow = mthpctl_cap_mask(s->rung < p->max_order ?
							 s->rung : p->max_order);
				why = r;
			} else if (r != MTHPCTL_REASON_NONE) {
				allow = 1;
				why = r;
			}
			/* then the rules of the call, if large folios are left */
			if (tva == MTHPCTL_TVA_PAGEFAULT && (orders & allow & ~1ULL) &&
			    !(vma && vma->dense)) {
				if (small_cg && (!vma || vma->mm_anon_bytes < 2 * MB)) {
					allow = 1;
					why = MTHPCTL_REASON_LOW_USAGE;
				} else if (vma && vma->vma_bytes >= 16 * MB &&
					   vma->mm_anon_bytes < vma->vma_bytes / 32) {
					allow = 1;
					why = MTHPCTL_REASON_SPARSE;
				}
			}
		}
		break;
	}
	*reason = (orders & ~allow) ? why : MTHPCTL_REASON_NONE;
	return allow;
}

/*
 * The BPF fast path answers page faults from a memo of
 * mthpctl_auto_allow() plus the per-call rules (mthpctl_fault_narrow():
 * small process while the cgroup is small, sparse mapping); mthpctl_orders() is built from
 * the same parts. Both must give the answer and reason of the reference for
 * every state, cap, type, offer and mapping.
 */
static void memo_composition(void **state)
{
	static const __u32 caps[] = { MTHPCTL_NO_CAP, 9, 4, 2, 0 };
	static const __u64 offers[] = { ALL_ANON, 0x1c, 0x200, 1, 0, ~0ULL };
	const struct mthpctl_vma_info sparse = { .vma_bytes = 64 * MB, .mm_anon_bytes = 1 * MB };
	const struct mthpctl_vma_info dense = { .vma_bytes = 64 * MB, .mm_anon_bytes = 8 * MB };
	const struct mthpctl_vma_info edge = { .vma_bytes = 64 * MB,
					       .mm_anon_bytes = MTHPCTL_SMALL_PROC_BYTES };
	const struct mthpctl_vma_info tiny = { .vma_bytes = 1 * MB, .mm_anon_bytes = 1 * MB };
	const struct mthpctl_vma_info filled = { .vma_bytes = 64 * MB, .mm_anon_bytes = 1 * MB,
						 .dense = 1 };
	/* a VMA without an mm: vma_info() reads 0 anonymous bytes */
	const struct mthpctl_vma_info no_mm = { .vma_bytes = 64 * MB, .mm_anon_bytes = 0 };
	/* the collapse auto asked for (khugepaged's requests only, in the
	 * BPF program) */
	const struct mthpctl_vma_info sparse_asked = { .vma_bytes = 64 * MB,
						       .mm_anon_bytes = 1 * MB, .collapse_asked = 1 };
	const struct mthpctl_vma_info dense_asked = { .vma_bytes = 64 * MB,
						      .mm_anon_bytes = 8 * MB, .collapse_asked = 1 };
	const struct mthpctl_vma_info edge_asked = { .vma_bytes = 64 * MB,
						     .mm_anon_bytes = MTHPCTL_SMALL_PROC_BYTES,
						     .collapse_asked = 1 };
	const struct mthpctl_vma_info *vmas[] = { NULL, &sparse, &dense, &edge, &tiny, &no_mm,
						  &filled, &sparse_asked, &dense_asked, &edge_asked };
	struct mthpctl_state states[10];
	__u32 c, i, tva, o, v, pol;
	int n = 0;

	memset(states, 0, sizeof(states));
	states[n++].last_sample_ns = 0;				/* no sample */
	states[n].last_sample_ns = 1;				/* nothing restricted */
	n++;
	states[n].last_sample_ns = 1;				/* small */
	states[n++].low_usage = 1;
	states[n].last_sample_ns = 1;				/* small, pressure */
	states[n].low_usage = 1;
	states[n].pressure = 1;
	states[n++].rung = 3;
	states[n].last_sample_ns = 1;				/* small, rung 0 */
	states[n].low_usage = 1;
	states[n++].pressure = 1;
	for (i = 0; i < 5; i++) {				/* pressure at rungs */
		static const __u32 rungs[] = { 0, 2, 3, 6, 9 };

		states[n].last_sample_ns = 1;
		states[n].pressure = 1;
		states[n++].rung = rungs[i];
	}
	for (pol = MTHPCTL_POLICY_AUTO; pol <= MTHPCTL_POLICY_NEVER; pol++)
	for (c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct mthpctl_params p = auto_p;

		p.policy = pol;
		p.max_order = caps[c];
		for (i = 0; i < (__u32)n; i++)
		for (tva = 0; tva < MTHPCTL_NR_TVA; tva++)
		for (o = 0; o < sizeof(offers) / sizeof(offers[0]); o++)
		for (v = 0; v < sizeof(vmas) / sizeof(vmas[0]); v++) {
			__u32 r_ref, r_new, why, top;
			__u64 word, serial = 0x123456789ULL + i;
			__u32 gen = (c + 1) * MTHPCTL_MEMO_GEN_STEP;
			__u64 a_ref, a_new, a_memo;

			/* only the inputs the BPF program passes */
			if ((vmas[v] != NULL) != bpf_passes_vma(&p, tva))
				continue;
			a_ref = ref_orders(&p, &states[i], tva, offers[o], vmas[v], &r_ref);
			a_new = mthpctl_orders(&p, &states[i], tva, offers[o], vmas[v], &r_new);
			assert_true(a_new == a_ref);
			assert_int_equal(r_new, r_ref);
			if (pol != MTHPCTL_POLICY_AUTO || tva != MTHPCTL_TVA_PAGEFAULT)
				continue;
			/* the fast path (bpf/mthp.bpf.c: choose_orders()),
			 * through the memo word */
			top = mthpctl_auto_top(&p, &states[i], &why);
			word = mthpctl_auto_memo(&p, &states[i], mthpctl_memo_tag(serial, gen));
			/* the word answers this cgroup at this generation only */
			assert_true(mthpctl_memo_hit(word, mthpctl_memo_tag(serial, gen)));
			assert_false(mthpctl_memo_hit(word, mthpctl_memo_tag(serial + 1, gen)));
			assert_false(mthpctl_memo_hit(word, mthpctl_memo_tag(serial,
									     gen + MTHPCTL_MEMO_GEN_STEP)));
			/* and decodes to the state's answer */
			assert_true(mthpctl_memo_allow(word) == mthpctl_cap_mask(top));
			assert_int_equal(mthpctl_memo_why(word), why);
			assert_true(mthpctl_memo_small(word) == mthpctl_small_limit(&states[i]));
			a_memo = mthpctl_memo_allow(word);
			assert_true(a_memo == mthpctl_auto_allow(&p, &states[i], &why));
			if (mthpctl_sparse_candidate(tva, offers[o], a_memo)) {
				__u32 r = mthpctl_fault_narrow(vmas[v], mthpctl_memo_small(word));

				if (r != MTHPCTL_REASON_NONE) {
					a_memo = 1;
					why = r;
				}
			}
			assert_true(a_memo == a_ref);
			assert_int_equal((offers[o] & ~a_memo) ? why : MTHPCTL_REASON_NONE, r_ref);
		}
	}
}

/*
 * The memo word hits only its own tag: another cgroup (serial's low 32
 * bits), another generation of the CPU (its 22 bits above the step); a
 * word from before the first fill (0) hits no cgroup after a bump.
 */
static void memo_word_tags(void **state)
{
	__u64 tag = mthpctl_memo_tag(0xabcdef12345ULL, 7 * MTHPCTL_MEMO_GEN_STEP);
	__u64 w = mthpctl_memo_word(tag, 9, MTHPCTL_REASON_PRESSURE, 0);
	__u32 o;

	assert_true(mthpctl_memo_hit(w, tag));
	assert_false(mthpctl_memo_hit(w, mthpctl_memo_tag(0xabcdef12346ULL,
							  7 * MTHPCTL_MEMO_GEN_STEP)));
	assert_false(mthpctl_memo_hit(w, mthpctl_memo_tag(0xabcdef12345ULL,
							  8 * MTHPCTL_MEMO_GEN_STEP)));
	/* the top bit of the generation and of the key count */
	assert_false(mthpctl_memo_hit(w, tag ^ (1ULL << 31)));
	assert_false(mthpctl_memo_hit(w, tag ^ (1ULL << 63)));
	/* serial numbers 2^32 apart share a key (documented) */
	assert_true(mthpctl_memo_hit(w, mthpctl_memo_tag(0xabcdef12345ULL + (1ULL << 32),
							 7 * MTHPCTL_MEMO_GEN_STEP)));
	assert_false(mthpctl_memo_hit(0, mthpctl_memo_tag(0, MTHPCTL_MEMO_GEN_STEP)));
	assert_int_equal(mthpctl_memo_why(w), MTHPCTL_REASON_PRESSURE);
	for (o = 0; o <= MTHPCTL_NO_CAP + 2; o++)
		assert_true(mthpctl_memo_allow(mthpctl_memo_word(tag, o, 0, 0)) ==
			    mthpctl_cap_mask(o));
	/* the small bit: not part of the tag, not of the reason or answer */
	w = mthpctl_memo_word(tag, 9, MTHPCTL_REASON_SPARSE, MTHPCTL_SMALL_PROC_BYTES);
	assert_true(mthpctl_memo_hit(w, tag));
	assert_int_equal(mthpctl_memo_why(w), MTHPCTL_REASON_SPARSE);
	assert_true(mthpctl_memo_allow(w) == mthpctl_cap_mask(9));
	assert_true(mthpctl_memo_small(w) == MTHPCTL_SMALL_PROC_BYTES);
}

/* mthpctl_fault_reason() (the fast path's counter row): why when an order
 * above the answer's top was offered, for every answer the memo can hold
 * and offers of one or two orders, the anonymous sizes and PUD. */
static void fault_reason_test(void **state)
{
	static const __u64 offers[] = { 0, 1, ALL_ANON, 0x1c, 0x200, 1ULL << 18,
					ALL_ANON | (1ULL << 18), 1ULL << 62 };
	const __u32 why = MTHPCTL_REASON_PRESSURE;
	__u32 top, i, j;

	for (top = 0; top <= MTHPCTL_NO_CAP; top++) {
		__u64 allow = mthpctl_cap_mask(top);

		for (i = 0; i < sizeof(offers) / sizeof(offers[0]); i++)
			assert_int_equal(mthpctl_fault_reason(offers[i], allow, why),
					 top < 63 && offers[i] >> (top + 1) ? why :
					 MTHPCTL_REASON_NONE);
		for (i = 0; i < 63; i++)
			for (j = i; j < 63; j++) {
				__u64 offer = (1ULL << i) | (1ULL << j);

				assert_int_equal(mthpctl_fault_reason(offer, allow, why),
						 j > top ? why : MTHPCTL_REASON_NONE);
			}
	}
}

static void unknown_rates(void **state)
{
	struct mthpctl_state s = {};
	struct mthpctl_sample x = { .now_ns = 2 * S, .usage = 64 * MB, .headroom = MTHPCTL_NO_LIMIT,
				    .fill_rest = MTHPCTL_NO_LIMIT, .flags = MTHPCTL_SAMPLE_USAGE };

	feed(&auto_p, &s, 1000, 0, 64);
	feed(&auto_p, &s, 2000, 500, 64);	/* pressure */
	/* time did not advance: state kept */
	assert_int_equal(feed(&auto_p, &s, 2000, 900, 64), MTHPCTL_REASON_PRESSURE);
	assert_int_equal(s.nr_samples, 2);
	/* PSI disappears (psi=0): no evidence of pressure */
	x.now_ns = 3 * S;
	assert_int_equal(mthpctl_update(&auto_p, &s, &x), MTHPCTL_REASON_NONE);
	/* next sample has PSI again but no valid previous stall: no rate yet */
	assert_int_equal(feed(&auto_p, &s, 4000, 5000, 64), MTHPCTL_REASON_NONE);
	/* stall counter going backwards (reset): no rate */
	assert_int_equal(feed(&auto_p, &s, 5000, 10, 64), MTHPCTL_REASON_NONE);
	/* no memcg: usage rule off */
	memset(&s, 0, sizeof(s));
	x.flags = MTHPCTL_SAMPLE_STALL;
	x.usage = 0;
	assert_int_equal(mthpctl_update(&auto_p, &s, &x), MTHPCTL_REASON_NONE);
	/* min_usage 0 disables the rule */
	{
		struct mthpctl_params p = auto_p;

		p.min_usage = 0;
		memset(&s, 0, sizeof(s));
		assert_int_equal(feed(&p, &s, 1000, 0, 0), MTHPCTL_REASON_NONE);
	}
}

static void rate_scaling(void **state)
{
	assert_true(mthpctl_scale_rate(100, 1000, 1000) == 100);
	assert_true(mthpctl_scale_rate(0, 1000, 1000) == 0);
	assert_true(mthpctl_scale_rate(5, 0, 1000) == ~0ULL);
	assert_true(mthpctl_scale_rate(5, 10, 0) == 0);
	/* 10 hours of stall over 20 hours, 60 s window: no overflow (the
	 * halving costs precision far below a microsecond) */
	{
		__u64 r = mthpctl_scale_rate(36000 * S, 72000 * S, 60 * S);

		assert_true(r > 30 * S - 1000 && r < 30 * S + 1000);
	}
	/* huge values keep the ratio approximately */
	{
		__u64 r = mthpctl_scale_rate(~0ULL / 2, ~0ULL, 1000 * S);

		assert_true(r > 499 * S && r < 501 * S);
	}
	assert_true(mthpctl_cap_mask(0) == 1);
	assert_true(mthpctl_cap_mask(9) == 0x3ff);
	assert_true(mthpctl_cap_mask(62) == 0x7fffffffffffffffULL);
	assert_true(mthpctl_cap_mask(MTHPCTL_NO_CAP) == ~0ULL);
}

int run_policy_tests(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(no_sample_is_small), cmocka_unit_test(first_sample_usage_rule),
		cmocka_unit_test(pressure_threshold), cmocka_unit_test(pressure_zones),
		cmocka_unit_test(size_ladder), cmocka_unit_test(at_the_limit),
		cmocka_unit_test(filling_towards_the_limit),
		cmocka_unit_test(filling_a_mapping),
		cmocka_unit_test(ladder_top_and_cap),
		cmocka_unit_test(usage_hysteresis), cmocka_unit_test(growth_rule),
		cmocka_unit_test(sparse_mapping), cmocka_unit_test(fill_order),
		cmocka_unit_test(fill_remapped),
		cmocka_unit_test(fill_overrides_rules), cmocka_unit_test(fill_strided_outgrown), cmocka_unit_test(usage_recent_peak),
		cmocka_unit_test(sample_interval), cmocka_unit_test(small_cgroup_under_pressure),
		cmocka_unit_test(small_process_rule),
		cmocka_unit_test(tva_rules), cmocka_unit_test(auto_with_cap),
		cmocka_unit_test(fixed_and_never), cmocka_unit_test(simple_rule),
		cmocka_unit_test(memo_composition),
		cmocka_unit_test(memo_word_tags), cmocka_unit_test(fault_reason_test),
		cmocka_unit_test(unknown_rates),
		cmocka_unit_test(rate_scaling),
	};
	return cmocka_run_group_tests_name("policy", t, NULL, NULL);
}
