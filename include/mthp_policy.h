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

/* Policy identifiers (stored in the policy's read-only parameters). */
#define MTHPCTL_POLICY_AUTO	1
#define MTHPCTL_POLICY_FIXED	2
#define MTHPCTL_POLICY_NEVER	3

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
#define MTHPCTL_REASON_PRESSURE		1	/* memory-full stall over threshold */
#define MTHPCTL_REASON_LOW_USAGE	2	/* anon+shmem below the minimum */
#define MTHPCTL_REASON_NO_SAMPLE	3	/* not sampled yet */
#define MTHPCTL_REASON_CAP		4	/* fixed/never policy or --max-size */
#define MTHPCTL_NR_REASON		5

/* Sample validity flags. */
#define MTHPCTL_SAMPLE_STALL	(1U << 0)	/* stall_ns is valid (PSI on) */
#define MTHPCTL_SAMPLE_USAGE	(1U << 1)	/* usage is valid (memcg on) */

/* Largest order value meaning "no cap". */
#define MTHPCTL_NO_CAP		63

#define MTHPCTL_PARAMS_MAGIC	0x6d746870U	/* "mthp" */

/* Policy parameters, fixed at load time (BPF .rodata). */
struct mthpctl_params {
	__u32 magic;		/* MTHPCTL_PARAMS_MAGIC */
	__u32 policy;		/* MTHPCTL_POLICY_* */
	__u32 max_order;	/* never allow orders above; MTHPCTL_NO_CAP = none */
	__u32 pad;
	__u64 window_ns;	/* sampling window and stall-rate unit */
	__u64 threshold_ns;	/* memory-full stall per window meaning pressure */
	__u64 min_usage;	/* anon+shmem bytes below which 4 KiB only; 0 = off */
};

/* One sample taken by the sampler. */
struct mthpctl_sample {
	__u64 now_ns;
	__u64 stall_ns;		/* cumulative PSI memory "full" stall */
	__u64 usage;		/* anon + shmem bytes */
	__u32 flags;		/* MTHPCTL_SAMPLE_* */
	__u32 pad;
};

/* Per-cgroup decision state. Zero-initialised = never sampled. */
struct mthpctl_state {
	__u64 last_sample_ns;	/* 0: never sampled */
	__u64 last_stall_ns;
	__u64 usage;		/* last sampled anon+shmem bytes */
	__u64 stall_rate_ns;	/* last stall per window, ns */
	__u32 pressure;		/* 1 while over the stall threshold (hysteresis) */
	__u32 low_usage;	/* 1 while below the usage minimum (hysteresis) */
	__u32 flags;		/* flags of the last sample */
	__u32 nr_samples;
	__u64 usage_peak;	/* recent peak of usage, decaying (see below) */
};

/*
 * Hysteresis: pressure starts at a stall rate >= threshold and ends only
 * when the rate drops below threshold / MTHPCTL_STALL_EXIT_DIV; the low-usage
 * rule starts below min_usage and ends only at >= min_usage +
 * min_usage / MTHPCTL_USAGE_EXIT_DIV.
 */
#define MTHPCTL_STALL_EXIT_DIV	2
#define MTHPCTL_USAGE_EXIT_DIV	4

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
 * cgroup is restricted for low usage it samples faster still, so that a
 * cgroup growing past the minimum gets large folios soon after (samples are
 * cheap, and taken only while the cgroup faults).
 */
#define MTHPCTL_SAMPLES_PER_WINDOW		2
#define MTHPCTL_LOW_USAGE_SAMPLES_PER_WINDOW	8

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
	if (s->low_usage && !s->pressure)
		return p->window_ns / MTHPCTL_LOW_USAGE_SAMPLES_PER_WINDOW;
	return p->window_ns / MTHPCTL_SAMPLES_PER_WINDOW;
}

/*
 * stall * window / dt without overflowing 64 bits (precision may drop):
 * both factors are brought below 2^32 by halving them together with dt.
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

/* Is the cgroup restricted to 4 KiB (auto policy), and why. */
static inline __u32 mthpctl_restriction(const struct mthpctl_state *s)
{
	if (!s->last_sample_ns)
		return MTHPCTL_REASON_NO_SAMPLE;
	if (s->pressure)
		return MTHPCTL_REASON_PRESSURE;
	if (s->low_usage)
		return MTHPCTL_REASON_LOW_USAGE;
	return MTHPCTL_REASON_NONE;
}

/*
 * Feed one sample into the state (auto policy). Returns the restriction
 * reason after the update (MTHPCTL_REASON_NONE = all sizes allowed).
 */
static inline __u32 mthpctl_update(const struct mthpctl_params *p,
				   struct mthpctl_state *s,
				   const struct mthpctl_sample *x)
{
	__u64 dt, rate, exit_level;
	int rate_known = 0;

	if (s->last_sample_ns && x->now_ns <= s->last_sample_ns)
		return mthpctl_restriction(s);	/* time did not advance */

	if (s->last_sample_ns && (x->flags & MTHPCTL_SAMPLE_STALL) &&
	    (s->flags & MTHPCTL_SAMPLE_STALL) && x->stall_ns >= s->last_stall_ns) {
		dt = x->now_ns - s->last_sample_ns;
		rate = mthpctl_scale_rate(x->stall_ns - s->last_stall_ns, dt,
					  p->window_ns);
		rate_known = 1;
	}

	if (rate_known) {
		s->stall_rate_ns = rate;
		exit_level = p->threshold_ns / MTHPCTL_STALL_EXIT_DIV;
		if (s->pressure)
			s->pressure = rate >= exit_level && rate > 0;
		else
			s->pressure = rate >= p->threshold_ns;
	} else {
		/* first sample, PSI off or counter reset: no evidence */
		s->stall_rate_ns = 0;
		s->pressure = 0;
	}

	if ((x->flags & MTHPCTL_SAMPLE_USAGE) && p->min_usage) {
		if (s->last_sample_ns)
			s->usage_peak = mthpctl_decay_peak(s->usage_peak,
							   x->now_ns - s->last_sample_ns,
							   p->window_ns);
		if (x->usage > s->usage_peak)
			s->usage_peak = x->usage;
		if (s->low_usage && s->last_sample_ns)
			s->low_usage = s->usage_peak < p->min_usage +
				       p->min_usage / MTHPCTL_USAGE_EXIT_DIV;
		else
			s->low_usage = s->usage_peak < p->min_usage;
	} else {
		s->low_usage = 0;
		s->usage_peak = 0;
	}

	s->usage = (x->flags & MTHPCTL_SAMPLE_USAGE) ? x->usage : 0;
	s->last_stall_ns = x->stall_ns;
	s->last_sample_ns = x->now_ns ? x->now_ns : 1;
	s->flags = x->flags;
	s->nr_samples++;
	return mthpctl_restriction(s);
}

/*
 * The orders the policy allows for one call of the hook. The kernel does
 * orders &= result. *reason says why offered orders were removed
 * (MTHPCTL_REASON_NONE when none were).
 *
 * tva rules (auto): MADV_COLLAPSE is always allowed (the application asked
 * explicitly); khugepaged and page faults (and smaps' report) get 4 KiB only
 * while restricted. fixed/never cap every type, MADV_COLLAPSE included.
 */
static inline __u64 mthpctl_orders(const struct mthpctl_params *p,
				   const struct mthpctl_state *s,
				   __u32 tva, __u64 orders, __u32 *reason)
{
	__u64 allow, cap = mthpctl_cap_mask(p->max_order);
	__u32 why = MTHPCTL_REASON_CAP;

	switch (p->policy) {
	case MTHPCTL_POLICY_NEVER:
		allow = 1;	/* order 0 only */
		break;
	case MTHPCTL_POLICY_FIXED:
		allow = cap;
		break;
	default:		/* auto */
		allow = cap;
		if (tva != MTHPCTL_TVA_FORCED_COLLAPSE) {
			__u32 r = mthpctl_restriction(s);

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
