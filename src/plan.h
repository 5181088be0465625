/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What mthpctl apply changes, computed without touching the system from
 * three lists: what the configuration wants, what is attached (the pins),
 * and what apply attached earlier (its state file, /run/mthpctl/applied).
 */
#ifndef MTHPCTL_PLAN_H
#define MTHPCTL_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cgroup.h"
#include "mthpctl.h"

#define MTHPCTL_STATE_DIR	"/run/mthpctl"
#define MTHPCTL_STATE_FILE	MTHPCTL_STATE_DIR "/applied"

/* A target of the configuration, resolved to its cgroup. */
struct mthpctl_want {
	const char *target;	/* section name: path or unit */
	const char *cgroup;	/* its cgroup directory; NULL: unit not running */
	__u64 cgroup_id;	/* 0: unit not running */
	struct mthpctl_params params;
	bool private_obj;
};

/* A policy attached now (a pin directory whose link is attached). */
struct mthpctl_attached {
	__u64 cgroup_id;
	__u32 link_id;
	bool have_params;	/* conf pin readable */
	struct mthpctl_params params;
};

/* A policy apply attached earlier: a line of the state file. */
struct mthpctl_applied {
	__u64 cgroup_id;
	__u32 link_id;
	bool private_obj;
	struct mthpctl_params params;
	char target[4096];
};

enum mthpctl_action_kind {
	MTHPCTL_ACT_ATTACH,	/* nothing attached: attach */
	MTHPCTL_ACT_REPLACE,	/* other parameters attached: replace */
	MTHPCTL_ACT_DETACH,	/* apply attached it, the file no longer names it */
	MTHPCTL_ACT_KEEP,	/* as wanted already */
	MTHPCTL_ACT_SKIP,	/* a unit that is not running: nothing to attach to */
	MTHPCTL_ACT_LEAVE,	/* not named any more, but changed by hand since: left alone */
	MTHPCTL_ACT_FORGET,	/* apply's record of a policy that is gone (cgroup removed) */
};

struct mthpctl_action {
	enum mthpctl_action_kind kind;
	int want;		/* index into wants, or -1 */
	int have;		/* index into haves, or -1 */
	int applied;		/* index into applied records, or -1 */
};

/*
 * The plan: one action per want, then one per applied record no want
 * covers. With partial (apply --unit), applied records of targets not
 * among the wants are outside the plan (neither detached nor forgotten).
 * Returns the number of actions written to out (room for nw + na), and in
 * *changes how many change the kernel (attach, replace, detach).
 */
size_t mthpctl_plan(const struct mthpctl_want *w, size_t nw,
		    const struct mthpctl_attached *h, size_t nh,
		    const struct mthpctl_applied *a, size_t na, bool partial,
		    struct mthpctl_action *out, size_t *changes);
const char *mthpctl_action_name(enum mthpctl_action_kind k);

/* The state file: parse its text (lines that do not parse are skipped
 * and counted in *bad). Returns the records (malloc'd) and their number. */
size_t mthpctl_applied_parse(const char *text, struct mthpctl_applied **out, size_t *bad);
/* One line of it, "\n" included. */
int mthpctl_applied_format(const struct mthpctl_applied *a, char *buf, size_t len);

/* The drop-in apply writes for a unit target (see mthpctl-apply(8)): the
 * unit runs `mthpctl apply --unit` before its processes start, each time
 * its cgroup is created anew. sbin: where mthpctl is. */
int mthpctl_dropin_text(const char *mthpctl_path, char *buf, size_t len);

/* Can the policy give a page fault a folio larger than 4 KiB? */
bool mthpctl_params_grant_large(const struct mthpctl_params *p);
/* systemd's MemoryTHP= of a unit is a prctl its processes get at each exec
 * ("disable": PR_SET_THP_DISABLE, "madvise": PR_THP_DISABLE_EXCEPT_ADVISED),
 * a hard limit no policy crosses. A unit at "disable" whose section grants
 * large folios gets the warning apply prints in buf (one line, no prefix):
 * 1; no conflict (any other value, "" when systemd has no such setting, or
 * a policy that grants nothing): 0, buf ""; -ENAMETOOLONG. */
int mthpctl_memory_thp_warning(const char *unit, const char *memory_thp, const struct mthpctl_params *p,
			       char *buf, size_t len);
/* The processes of cgroup t counts with THP disabled by prctl refuse what a
 * policy grants (a hard limit, as MemoryTHP=disable). If there are any and
 * the policy p grants large folios (p NULL: a policy of the user's, which
 * may), the warning attach and apply print in buf (one line, no prefix): 1;
 * none: 0, buf ""; -ENAMETOOLONG. */
int mthpctl_thp_off_warning(const char *cgroup, const struct mthpctl_thp_off *t,
			    const struct mthpctl_params *p, char *buf, size_t len);

#endif
