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
 * Sizes the policy allows now for anonymous page faults, among the sizes in
 * sysfs that anonymous memory can use: a directory without "enabled" (e.g.
 * hugepages-8kB, for shmem/file folios only) is no anonymous fault size,
 * and a size at "never" no policy can have (the kernel keeps a policy's
 * answer only for sizes at "always" or "madvise").
 */
__u64 status_allowed_mask(const struct status_env *e, const struct status_policy *p, __u32 *reason)
{
	__u64 offered = 0, ps = mthpctl_page_size();
	int i, order;

	for (i = 0; i < e->nr_hp; i++) {
		if (!e->hp[i].has_enabled ||
		    !mthpctl_size_usable(e->hp[i].enabled, e->thp_enabled))
			continue;
		order = mthpctl_size_to_order(e->hp[i].size_kb << 10, ps);
		if (order > 0 && order < 64)
			offered |= 1ULL << order;
	}
	return offered & mthpctl_orders(&p->params, &p->entry.state, MTHPCTL_TVA_PAGEFAULT,
					offered, NULL, reason);
}

/* Does status know what the policy allows (auto and simple need their
 * cgroup's state)? */
bool status_knows_allowed(const struct status_policy *p)
{
	return p->have_params && (p->have_entry || !mthpctl_policy_sampled(p->params.policy));
}
