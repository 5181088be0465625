// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl status (--format=text): what status.c gathered, as plain text. */
#include <stdio.h>
#include <string.h>

#include "mthp_stats.h"
#include "mthpctl.h"
#include "parse.h"
#include "pin.h"
#include "status.h"
#include "sysfs.h"

static const char *yesno(bool b) { return b ? "yes" : "no"; }

void status_kernel_plain(const struct status_env *e)
{
	if (!e->k.probed) {
		printf("  bpf_mthp_ops:       not probed for one cgroup (mthpctl version probes the kernel)\n");
	} else {
		printf("  bpf_mthp_ops:       %s%s\n", yesno(e->k.feat.mthp_ops),
		       e->k.feat.mthp_ops ? "" : e->k.btf ? " (apply kernel/)" : " (no BTF)");
		printf("  kfuncs:             psi %s, memcg %s, bpf_wq %s, collapse %s\n",
		       yesno(e->k.feat.psi_kfunc), yesno(e->k.feat.memcg_kfuncs), yesno(e->k.feat.wq),
		       yesno(e->k.feat.collapse_kfunc));
	}
	printf("  PSI:                %s\n", e->psi ? "on" : "off (boot without psi=0, CONFIG_PSI=y)");
	printf("  cgroup2:            %s (memory controller: %s)\n",
	       e->cg2[0] ? e->cg2 : "not mounted", yesno(e->memcg));
	printf("  bpffs:              %s\n", e->bpffs ? "mounted" : "not mounted");
	printf("  bpf_stats:          %s\n", e->bpf_stats > 0 ? "on (hook cost shown per policy)" :
	       e->bpf_stats == 0 ? "off (sysctl kernel.bpf_stats_enabled=1 to see the hook's cost)" :
	       "unknown");
}

static void print_env_plain(const struct status_env *e)
{
	int i;
	size_t j;

	printf("kernel:\n");
	status_kernel_plain(e);
	printf("global THP settings (%s): enabled %s, defrag %s\n", MTHPCTL_THP_DIR,
	       e->thp_enabled[0] ? e->thp_enabled : "-", e->thp_defrag[0] ? e->thp_defrag : "-");
	if (e->nr_hp && e->hp_counters)
		printf("  %-8s %-8s %16s %19s\n", "size", "enabled", "anon_fault_alloc",
		       "anon_fault_fallback");
	else if (e->nr_hp)
		printf("  %-8s %s\n", "size", "enabled");
	for (i = 0; i < e->nr_hp; i++) {
		char sz[32], a[24] = "-", f[24] = "-";

		for (j = 0; j < e->hp[i].nr_stats; j++) {
			if (!strcmp(e->hp[i].stats[j].name, "anon_fault_alloc"))
				snprintf(a, sizeof(a), "%llu", (unsigned long long)e->hp[i].stats[j].value);
			if (!strcmp(e->hp[i].stats[j].name, "anon_fault_fallback"))
				snprintf(f, sizeof(f), "%llu", (unsigned long long)e->hp[i].stats[j].value);
		}
		mthpctl_format_size(e->hp[i].size_kb << 10, sz, sizeof(sz));
		if (e->hp_counters)
			printf("  %-8s %-8s %16s %19s\n", sz,
			       e->hp[i].has_enabled ? e->hp[i].enabled : "-", a, f);
		else
			printf("  %-8s %s\n", sz, e->hp[i].has_enabled ? e->hp[i].enabled : "-");
	}
}

/* What a page fault may get: "4K 64K 2M", or "4K only". */
static char *sizes_str(__u64 mask, char *buf, size_t len)
{
	char rest[512];

	if (!mask)
		snprintf(buf, len, "4K only");
	else
		snprintf(buf, len, "4K %s", mthpctl_size_list(mask, "", rest, sizeof(rest)));
	return buf;
}

static void counters_plain(const char *what, const struct mthpctl_counters *c)
{
	__u32 r, t;
	bool any = false;

	printf("    %-14s", what);
	for (t = 0; t < MTHPCTL_NR_TVA; t++)
		printf(" %s %llu", mthpctl_tva_name(t), (unsigned long long)c->calls[t]);
	printf("\n    %-14s", "fell back:");
	for (r = 1; r < MTHPCTL_NR_REASON; r++)
		for (t = 0; t < MTHPCTL_NR_TVA; t++)
			if (c->fallbacks[r][t]) {
				printf(" %s/%s %llu", mthpctl_reason_name(r), mthpctl_tva_name(t),
				       (unsigned long long)c->fallbacks[r][t]);
				any = true;
			}
	printf("%s\n", any ? "" : " none");
}

/* The lines of any policy: its link and pins, what else is in effect. */
static void print_link_plain(const struct status_policy *p)
{
	if (p->link_ok)
		printf("    link:          id %u, %s\n", p->link.id,
		       p->attached ? "attached" : "detached (cgroup removed; run detach --all)");
	else
		printf("    link:          missing (run detach --all)\n");
	printf("    pin:           %s\n", p->dir);
	if (p->object_cgroups > 1)
		printf("    object:        struct_ops map id %u, shared by %d cgroups (equal parameters; "
		       "its counters are their sum)\n", p->link.map_id, p->object_cgroups);
	if (p->nr_effective > 1)
		printf("    in effect:     %d bpf_mthp_ops policies here and above, all must allow a size\n",
		       p->nr_effective);
}

static void print_hook_cost_plain(const struct status_env *e, const struct status_policy *p)
{
	if (e->bpf_stats > 0 && p->prog_id && p->run_cnt)
		printf("    hook cost:     %.0f ns per call over %llu calls (bpf_stats, prog id %u)\n",
		       (double)p->run_time_ns / p->run_cnt, (unsigned long long)p->run_cnt, p->prog_id);
	else if (e->bpf_stats > 0 && p->prog_id)
		printf("    hook cost:     no calls since bpf_stats was turned on (prog id %u)\n", p->prog_id);
	else if (e->bpf_stats > 0)
		printf("    hook cost:     - (its choose_orders program was not found)\n");
	else
		printf("    hook cost:     - (sysctl kernel.bpf_stats_enabled=1 to measure)\n");
}

/* The processes no policy can help, if there are any. */
static void print_thp_off_plain(const struct status_policy *p)
{
	const struct mthpctl_thp_off *t = &p->thp_off;

	if (p->have_thp_off && t->disabled)
		printf("    THP disabled:  %u of %u processes, by prctl (%s, pid %d%s): 4 KiB pages "
		       "whatever the policy allows (redis: disable-thp no)\n",
		       t->disabled, t->procs, t->name[0] ? t->name : "?", t->pid,
		       t->disabled > 1 ? ", ..." : "");
}

/* A policy of the user's (attach --object): what status knows of it. */
static void print_object_plain(const struct status_env *e, const struct status_policy *p)
{
	printf("    policy:        object %s (ops %s)\n", p->object->file, p->object->ops);
	print_link_plain(p);
	if (p->have_totals)
		counters_plain("decisions:", &p->totals.cnt);
	else
		printf("    counters:      unknown (the object has no \"totals\" map of mthp_ops.h's "
		       "convention)\n");
	print_thp_off_plain(p);
	print_hook_cost_plain(e, p);
}

static void print_policy_plain(const struct status_env *e, const struct status_policy *p)
{
	const struct mthpctl_state *s = &p->entry.state;
	char desc[256], sizes[512], a[32], b[32];
	__u32 reason = MTHPCTL_REASON_NONE;
	__u64 mask = 0;

	if (status_knows_allowed(p))
		mask = status_allowed_mask(e, p, &reason);
	printf("  %s (cgroup id %llu)\n", p->cgroup ? p->cgroup : "(cgroup removed)",
	       (unsigned long long)p->id);
	if (p->have_object) {
		print_object_plain(e, p);
		return;
	}
	printf("    policy:        %s\n", p->have_params ?
	       mthpctl_params_str(&p->params, desc, sizeof(desc)) : "(unreadable pins)");
	if (p->have_object_hash) {
		char id[MTHPCTL_OBJECT_ID_LEN];

		mthpctl_object_id(id, p->object_hash);
		printf("    object hash:   %s (%s)\n", id, p->object_hash == e->object_hash ?
		       "this mthpctl's" : "another build's: attach --replace loads this one's");
	}
	print_link_plain(p);
	if (p->have_entry && p->entry_of != p->cgroup)
		printf("    state of:      %s (the subtree's largest; none of its own)\n",
		       p->entry_of);
	if (status_knows_allowed(p))
		printf("    allows now:    %s%s%s%s\n", sizes_str(mask, sizes, sizeof(sizes)),
		       reason ? " (" : "", reason ? mthpctl_reason_name(reason) : "", reason ? ")" : "");
	else
		printf("    allows now:    4K only (no-sample: no THP decision yet)\n");
	if (status_knows_allowed(p)) {
		__u64 granted, taken;

		status_host_diff(e, p, &granted, &taken);
		printf("    grants:        %s\n", mthpctl_size_list(granted, "none beyond the host default",
							  sizes, sizeof(sizes)));
		printf("    takes away:    %s\n", mthpctl_size_list(taken, "none of the host default",
							  sizes, sizeof(sizes)));
	}
	if (p->have_entry && (s->flags & MTHPCTL_SAMPLE_STALL))
		printf("    memory stall:  %s per %s (policy)",
		       mthpctl_format_duration(s->stall_rate_ns / 1000000 * 1000000, a, sizeof(a)),
		       mthpctl_format_duration(p->params.window_ns, b, sizeof(b)));
	else
		printf("    memory stall:  - (policy)");
	if (p->live_psi)
		printf(", full avg10 %u.%02u%% (memory.pressure)\n", p->psi.full.avg10 / 100,
		       p->psi.full.avg10 % 100);
	else
		printf("\n");
	if (p->have_entry && (s->flags & MTHPCTL_SAMPLE_USAGE))
		printf("    anon+shmem:    %s (policy)", mthpctl_format_size(s->usage & ~1023ULL, a, sizeof(a)));
	else
		printf("    anon+shmem:    - (policy)");
	if (p->live_usage)
		printf(", %s (memory.stat)\n", mthpctl_format_size(p->usage & ~1023ULL, b, sizeof(b)));
	else
		printf("\n");
	if (p->have_entry && s->headroom != MTHPCTL_NO_LIMIT)
		printf("    headroom:      %s to the nearest memory.high/max%s\n",
		       mthpctl_format_size(s->headroom & ~1023ULL, a, sizeof(a)),
		       mthpctl_tight(s->flags, s->usage, s->headroom) ? " (at the limit)" : "");
	if (p->have_totals)
		counters_plain("decisions:", &p->totals.cnt);
	if (p->have_entry && s->pressure)
		printf("    size ladder:   at %s%s, %llu steps down, %llu up\n",
		       mthpctl_format_size(mthpctl_page_size() << s->rung, a, sizeof(a)),
		       s->probe_from != MTHPCTL_NO_PROBE ? " (trial)" : "",
		       (unsigned long long)s->steps_down, (unsigned long long)s->steps_up);
	print_thp_off_plain(p);
	print_hook_cost_plain(e, p);
	printf("    cgroups:       ");
	if (p->cg_state >= 0)
		printf("%ld of %ld in the subtree with state now, ", p->cg_state, p->cg_subtree);
	printf("%llu given state since attach\n",
	       (unsigned long long)(p->have_totals ? p->totals.entries_created : 0));
}

void status_print_plain(const struct status_env *e, const struct status_policy *pol, size_t n,
			const char *cgroup)
{
	size_t i;

	print_env_plain(e);
	printf("policies:\n");
	if (!n && !e->root)
		printf("  (run as root to read %s)\n", MTHPCTL_PIN_ROOT);
	else if (!n)
		printf("  none%s%s\n", cgroup ? " attached to " : "", cgroup ? cgroup : "");
	for (i = 0; i < n; i++)
		print_policy_plain(e, &pol[i]);
}
