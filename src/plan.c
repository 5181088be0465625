// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl apply's plan and state file, pure (see plan.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* The index of the element of arr (n of them, size bytes each) whose
 * cgroup id (a __u64 at offset off) is id, or -1. */
static int find_id(const void *arr, size_t n, size_t size, size_t off, __u64 id)
{
	const char *p = arr;
	size_t i;

	for (i = 0; i < n; i++, p += size)
		if (*(const __u64 *)(p + off) == id)
			return i;
	return -1;
}
#define find_have(h, nh, id)	\
	find_id(h, nh, sizeof(*(h)), offsetof(struct mthpctl_attached, cgroup_id), id)
#define find_applied(a, na, id)	find_id(a, na, sizeof(*(a)), offsetof(struct mthpctl_applied, cgroup_id), id)

static bool wanted_target(const struct mthpctl_want *w, size_t nw, const char *target)
{
	size_t i;

	for (i = 0; i < nw; i++)
		if (!strcmp(w[i].target, target))
			return true;
	return false;
}

static bool wanted_id(const struct mthpctl_want *w, size_t nw, __u64 id)
{
	size_t i;

	for (i = 0; i < nw; i++)
		if (w[i].cgroup_id && w[i].cgroup_id == id)
			return true;
	return false;
}

size_t mthpctl_plan(const struct mthpctl_want *w, size_t nw,
		    const struct mthpctl_attached *h, size_t nh,
		    const struct mthpctl_applied *a, size_t na, bool partial,
		    struct mthpctl_action *out, size_t *changes)
{
	size_t i, n = 0;

	*changes = 0;
	for (i = 0; i < nw; i++) {
		struct mthpctl_action *act = &out[n++];

		act->want = i;
		act->have = w[i].cgroup_id ? find_have(h, nh, w[i].cgroup_id) : -1;
		act->applied = w[i].cgroup_id ? find_applied(a, na, w[i].cgroup_id) : -1;
		if (!w[i].cgroup_id)
			act->kind = MTHPCTL_ACT_SKIP;
		else if (act->have < 0)
			act->kind = MTHPCTL_ACT_ATTACH;
		/* the kernel's parameters decide; --private is known only
		 * from apply's own record (a hand-attached policy of equal
		 * parameters is taken over as it is) */
		else if (!h[act->have].have_params || !mthpctl_params_equal(&h[act->have].params, &w[i].params) ||
			 (act->applied >= 0 && a[act->applied].private_obj != w[i].private_obj))
			act->kind = MTHPCTL_ACT_REPLACE;
		else
			act->kind = MTHPCTL_ACT_KEEP;
		*changes += act->kind == MTHPCTL_ACT_ATTACH || act->kind == MTHPCTL_ACT_REPLACE;
	}
	for (i = 0; i < na; i++) {
		struct mthpctl_action *act;
		int hi;

		if (wanted_id(w, nw, a[i].cgroup_id))
			continue;
		if (partial && !wanted_target(w, nw, a[i].target))
			continue;
		hi = find_have(h, nh, a[i].cgroup_id);
		act = &out[n++];
		act->want = -1;
		act->have = hi;
		act->applied = i;
		if (hi < 0)
			act->kind = MTHPCTL_ACT_FORGET;
		/* attached anew (another link) or replaced by hand since:
		 * no longer apply's to take away */
		else if (h[hi].link_id != a[i].link_id || !h[hi].have_params ||
			 !mthpctl_params_equal(&h[hi].params, &a[i].params))
			act->kind = MTHPCTL_ACT_LEAVE;
		else
			/* not named any more, or its target's cgroup now is
			 * another one: apply's own, taken away */
			act->kind = MTHPCTL_ACT_DETACH;
		*changes += act->kind == MTHPCTL_ACT_DETACH;
	}
	return n;
}

const char *mthpctl_action_name(enum mthpctl_action_kind k)
{
	static const char *const names[] = {
		[MTHPCTL_ACT_ATTACH] = "attach", [MTHPCTL_ACT_REPLACE] = "replace",
		[MTHPCTL_ACT_DETACH] = "detach", [MTHPCTL_ACT_KEEP] = "keep",
		[MTHPCTL_ACT_SKIP] = "skip", [MTHPCTL_ACT_LEAVE] = "leave",
		[MTHPCTL_ACT_FORGET] = "forget",
	};
	return (unsigned int)k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

/*
 * A line: cgroup id, link id, private, the parameters (policy, max_order,
 * top_order, window_ns, threshold_ns, min_usage), then the target to the end
 * of the line (a path may hold spaces). Lines starting with # are comments.
 */
#define STATE_FMT	"%llu %u %u %u %u %u %llu %llu %llu %n"
_Static_assert(MTHPCTL_NR_PARAMS == 7, "a parameter added: give it a column of the state file");

int mthpctl_applied_format(const struct mthpctl_applied *a, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%llu %u %u %u %u %u %llu %llu %llu %s\n",
			 (unsigned long long)a->cgroup_id, a->link_id, a->private_obj,
			 a->params.policy, a->params.max_order, a->params.top_order,
			 (unsigned long long)a->params.window_ns,
			 (unsigned long long)a->params.threshold_ns,
			 (unsigned long long)a->params.min_usage, a->target);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static bool parse_record(const char *line, size_t len, struct mthpctl_applied *r)
{
	unsigned long long id, win, thr, mu;
	unsigned int link, priv, pol, maxo, topo;
	char buf[4400];
	int off = -1;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, STATE_FMT, &id, &link, &priv, &pol, &maxo, &topo, &win, &thr, &mu, &off) != 9 ||
	    off < 0 || !buf[off] || strlen(buf + off) >= sizeof(r->target) || !id || priv > 1)
		return false;
	memset(r, 0, sizeof(*r));
	r->cgroup_id = id;
	r->link_id = link;
	r->private_obj = priv;
	r->params.magic = MTHPCTL_PARAMS_MAGIC;
	r->params.policy = pol;
	r->params.max_order = maxo;
	r->params.top_order = topo;
	r->params.window_ns = win;
	r->params.threshold_ns = thr;
	r->params.min_usage = mu;
	strcpy(r->target, buf + off);
	return true;
}

size_t mthpctl_applied_parse(const char *text, struct mthpctl_applied **out, size_t *bad)
{
	struct mthpctl_applied *recs = NULL, *nr, r;
	const char *s = text, *nl;
	size_t n = 0, len;

	*bad = 0;
	for (; *s; s = nl + !!*nl) {
		nl = strchrnul(s, '\n');
		len = nl - s;
		if (!len || *s == '#')
			continue;
		if (!parse_record(s, len, &r)) {
			(*bad)++;
			continue;
		}
		nr = realloc(recs, (n + 1) * sizeof(*recs));
		if (!nr)
			break;
		recs = nr;
		recs[n++] = r;
	}
	*out = recs;
	return n;
}

int mthpctl_dropin_text(const char *mthpctl_path, char *buf, size_t len)
{
	/* "-": a policy that cannot be attached does not stop the unit;
	 * "+": as root whatever User= and the sandboxing say (attaching
	 * needs CAP_BPF and CAP_SYS_ADMIN); ExecStartPre: the cgroup
	 * exists already and no process of the unit has run yet; %n: the
	 * unit's own name */
	int n = snprintf(buf, len,
			 "# Written by mthpctl apply: the unit's cgroup is created anew at each\n"
			 "# start, and the policy of its section in /etc/mthpctl is attached to it\n"
			 "# before its processes run. Removed by mthpctl apply when the\n"
			 "# configuration no longer names the unit. See mthpctl-apply(8).\n"
			 "[Service]\n"
			 "ExecStartPre=-+%s apply --unit %%n\n", mthpctl_path);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool mthpctl_params_grant_large(const struct mthpctl_params *p)
{
	/* never, and a cap at one page, leave 4 KiB pages only */
	return p->policy != MTHPCTL_POLICY_NEVER && p->max_order != 0;
}

int mthpctl_memory_thp_warning(const char *unit, const char *memory_thp, const struct mthpctl_params *p,
			       char *buf, size_t len)
{
	int n;

	if (len)
		buf[0] = '\0';
	/* "madvise" keeps what a process advises (MADV_HUGEPAGE), where the
	 * policy still acts; "inherit", empty (not set, or a systemd without
	 * the setting): nothing taken away */
	if (!memory_thp || strcmp(memory_thp, "disable") || !mthpctl_params_grant_large(p))
		return 0;
	n = snprintf(buf, len,
		     "%s has MemoryTHP=disable, so its processes get 4 KiB pages whatever this section "
		     "grants: remove MemoryTHP= from the unit (systemctl edit %s), or set policy = never here",
		     unit, unit);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 1;
}

int mthpctl_thp_off_warning(const char *cgroup, const struct mthpctl_thp_off *t,
			    const struct mthpctl_params *p, char *buf, size_t len)
{
	int n;

	if (len)
		buf[0] = '\0';
	if (!t->disabled || (p && !mthpctl_params_grant_large(p)))
		return 0;
	n = snprintf(buf, len,
		     "%u of the %u processes in %s (%s, pid %d%s) have THP disabled by "
		     "prctl(PR_SET_THP_DISABLE) and get 4 KiB pages whatever the policy allows: "
		     "start them without it (redis: disable-thp no; systemd: no MemoryTHP=disable)",
		     t->disabled, t->procs, cgroup, t->name[0] ? t->name : "?", t->pid,
		     t->disabled > 1 ? ", ..." : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 1;
}
