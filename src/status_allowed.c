// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl status: what a policy allows now, from the state status gathered
 * (the decision of mthp_policy.h on the policy's pinned state), for the
 * renderers.
 */
#include "mthpctl.h"
#include "parse.h"
#include "status.h"
#include "sysfs.h"

/*
 * Sizes the policy allows now for anonymous page faults, among the sizes
 * anonymous memory can use: those at "always", and those at "madvise",
 * which a policy grants (a size at "never" no policy can have).
 */
__u64 status_allowed_mask(const struct status_env *e, const struct status_policy *p, __u32 *reason)
{
	__u64 offered = e->host.always | e->host.madvise;

	return offered & mthpctl_orders(&p->params, &p->entry.state, MTHPCTL_TVA_PAGEFAULT,
					offered, NULL, reason);
}

void status_host_diff(const struct status_env *e, const struct status_policy *p,
		      __u64 *granted, __u64 *taken)
{
	__u32 reason;
	__u64 allowed = status_allowed_mask(e, p, &reason);

	*granted = allowed & e->host.madvise;
	*taken = e->host.always & ~allowed;
}

/* Does status know what the policy allows (auto and simple need their
 * cgroup's state)? */
bool status_knows_allowed(const struct status_policy *p)
{
	return p->have_params && (p->have_entry || !mthpctl_policy_sampled(p->params.policy));
}
