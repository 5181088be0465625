// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A policy's options (strings as typed) into its parameters, with the
 * refusal of a bad value as one line naming the fix. Pure: attach calls it
 * with its command line, apply with each section of its configuration,
 * bench with the words of its --policy (mthpctl_policy_spec_words()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mthpctl.h"
#include "parse.h"

/* auto, fixed, never, simple, or a unique prefix of one */
static int pick_policy(const char *name, __u32 *policy)
{
#define POLICY_NAME(id, text)	text,
#define POLICY_ID(id, text)	id,
	static const char *const names[] = { MTHPCTL_POLICIES(POLICY_NAME) };
	static const __u32 ids[] = { MTHPCTL_POLICIES(POLICY_ID) };
#undef POLICY_NAME
#undef POLICY_ID
	int i, n = 0;

	for (i = 0; i < MTHPCTL_NR_POLICIES; i++)
		if (!strncmp(names[i], name, strlen(name)) && *name) {
			*policy = ids[i];
			n++;
		}
	return n == 1 ? 0 : -EINVAL;
}

/* attach's options of a built-in policy, as bench's --policy words give them
 * (--policy too, as attach's parser read it there): the spec's options
 * (field), then the switches (flag) */
static const struct {
	const char *name;
	int field;		/* enum mthpctl_spec_field; or MTHPCTL_SPEC_NONE */
	unsigned int flag;	/* a switch: the MTHPCTL_ATTACH_* flag */
} word_opts[] = {
#define WORD_OPT(id, member, name, key, arg, help)	{ name, id, 0 },
	MTHPCTL_SPEC_OPTIONS(WORD_OPT)
#undef WORD_OPT
#define WORD_SWITCH(flag, name, help)			{ name, MTHPCTL_SPEC_NONE, flag },
	MTHPCTL_ATTACH_SWITCHES(WORD_SWITCH)
#undef WORD_SWITCH
};
#define NR_WORD_OPTS (int)(sizeof(word_opts) / sizeof(word_opts[0]))

/* The option whose name (or a unique prefix of it) is the n bytes at name:
 * its index, or -1. */
static int word_opt(const char *name, size_t n)
{
	int i, found = -1;

	for (i = 0; i < NR_WORD_OPTS; i++) {
		if (strncmp(word_opts[i].name, name, n))
			continue;
		if (strlen(word_opts[i].name) == n)
			return i;
		found = found == -1 ? i : -2;
	}
	return found < 0 ? -1 : found;
}

int mthpctl_policy_spec_words(char *const words[], int nw, struct mthpctl_policy_spec *s,
			      unsigned int *flags, char *err, size_t len)
{
	int i, k;

	memset(s, 0, sizeof(*s));
	*flags = 0;
	if (nw < 1 || words[0][0] == '-') {
		snprintf(err, len, "a policy is NAME [attach options], e.g. \"auto\"");
		return MTHPCTL_EXIT_USAGE;
	}
	s->policy = words[0];
	for (i = 1; i < nw; i++) {
		const char *w = words[i], *eq, *value;

		if (strncmp(w, "--", 2) || !w[2]) {
			snprintf(err, len, "unexpected argument '%s'", w);
			return MTHPCTL_EXIT_USAGE;
		}
		eq = strchr(w + 2, '=');
		k = word_opt(w + 2, eq ? (size_t)(eq - w - 2) : strlen(w + 2));
		if (k < 0) {
			snprintf(err, len, "unrecognized option or missing argument: '%s'", w);
			return MTHPCTL_EXIT_USAGE;
		}
		if (word_opts[k].flag) {
			if (eq) {
				snprintf(err, len, "--%s takes no value: '%s'", word_opts[k].name, w);
				return MTHPCTL_EXIT_USAGE;
			}
			*flags |= word_opts[k].flag;
			continue;
		}
		if (eq) {
			value = eq + 1;
		} else if (i + 1 < nw) {
			value = words[++i];
		} else {
			snprintf(err, len, "unrecognized option or missing argument: '%s'", w);
			return MTHPCTL_EXIT_USAGE;
		}
		*mthpctl_spec_option(s, word_opts[k].field) = value;
	}
	return 0;
}

__attribute__((format(printf, 5, 6)))
static int refuse(char *err, size_t len, enum mthpctl_spec_field *field,
		  enum mthpctl_spec_field which, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	if (field)
		*field = which;
	return MTHPCTL_EXIT_USAGE;
}

int mthpctl_policy_build(const struct mthpctl_policy_spec *s, __u32 top_order, __u64 page_size,
			 const char *o, struct mthpctl_params *p, char *err, size_t len,
			 enum mthpctl_spec_field *field)
{
	char desc[32];
	__u64 v;
	int order;

	*p = (struct mthpctl_params)MTHPCTL_PARAMS_DEFAULTS;
	p->top_order = top_order;

	if (s->policy && pick_policy(s->policy, &p->policy))
		return refuse(err, len, field, MTHPCTL_SPEC_POLICY,
			      "unknown policy '%s' (use auto, fixed, never or simple)", s->policy);
	if (!mthpctl_policy_sampled(p->policy) && (s->threshold || s->window || s->min_usage))
		return refuse(err, len, field,
			      s->threshold ? MTHPCTL_SPEC_THRESHOLD :
			      s->window ? MTHPCTL_SPEC_WINDOW : MTHPCTL_SPEC_MIN_USAGE,
			      "%sthreshold and %swindow apply to %spolicy auto and simple, "
			      "%smin-usage to auto only", o, o, o, o);
	if (p->policy == MTHPCTL_POLICY_SIMPLE && s->min_usage)
		return refuse(err, len, field, MTHPCTL_SPEC_MIN_USAGE,
			      "%smin-usage applies to %spolicy auto only (simple has no low-usage rule)",
			      o, o);
	if (p->policy == MTHPCTL_POLICY_NEVER && s->max_size)
		return refuse(err, len, field, MTHPCTL_SPEC_MAX_SIZE,
			      "%smax-size does not apply to %spolicy never (use fixed)", o, o);
	if (p->policy == MTHPCTL_POLICY_FIXED && !s->max_size)
		return refuse(err, len, field, MTHPCTL_SPEC_POLICY,
			      "%spolicy fixed needs %smax-size SIZE (e.g. 64K)", o, o);
	if (s->window) {
		if (mthpctl_parse_duration(s->window, &v) || v < 10000000ULL || v > 60000000000ULL)
			return refuse(err, len, field, MTHPCTL_SPEC_WINDOW,
				      "bad %swindow '%s' (a duration from 10ms to 60s, e.g. 1s)",
				      o, s->window);
		p->window_ns = v;
	}
	if (s->threshold) {
		if (mthpctl_parse_duration(s->threshold, &v) || !v)
			return refuse(err, len, field, MTHPCTL_SPEC_THRESHOLD,
				      "bad %sthreshold '%s' (a duration above 0, e.g. 100ms)",
				      o, s->threshold);
		p->threshold_ns = v;
	}
	if (p->threshold_ns > p->window_ns)
		return refuse(err, len, field, s->threshold ? MTHPCTL_SPEC_THRESHOLD : MTHPCTL_SPEC_WINDOW,
			      "%sthreshold must not exceed %swindow (stall per window)", o, o);
	if (s->min_usage) {
		if (mthpctl_parse_size(s->min_usage, &v))
			return refuse(err, len, field, MTHPCTL_SPEC_MIN_USAGE,
				      "bad %smin-usage '%s' (a size, e.g. 16M; 0 turns the rule off)",
				      o, s->min_usage);
		p->min_usage = v;
	}
	if (s->max_size) {
		order = -EINVAL;
		if (!mthpctl_parse_size(s->max_size, &v))
			order = mthpctl_size_to_order(v, page_size);
		if (order < 0)
			return refuse(err, len, field, MTHPCTL_SPEC_MAX_SIZE,
				      "bad %smax-size '%s' (a power of two from 4K, e.g. 64K or 2M)",
				      o, s->max_size);
		/* no anonymous folio is larger than a PMD: a larger cap would
		 * read as a limit but limit nothing */
		if ((__u32)order > p->top_order)
			return refuse(err, len, field, MTHPCTL_SPEC_MAX_SIZE,
				      "bad %smax-size '%s': above %s, the largest THP size of "
				      "this kernel (hpage_pmd_size); leave it out for no cap",
				      o, s->max_size,
				      mthpctl_format_size(page_size << p->top_order, desc, sizeof(desc)));
		p->max_order = order;
	}
	if (field)
		*field = MTHPCTL_SPEC_NONE;
	return 0;
}

bool mthpctl_params_equal(const struct mthpctl_params *a, const struct mthpctl_params *b)
{
#define EQUAL_PARAM(type, field, dflt)	&& a->field == b->field
	return 1 MTHPCTL_PARAMS(EQUAL_PARAM);
#undef EQUAL_PARAM
}
