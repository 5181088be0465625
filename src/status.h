/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What `mthpctl status` gathers (status.c, status_hook.c), shared with its
 * renderers: plain text (status_plain.c), JSON (status_json.c) and the
 * Prometheus text exposition (status_prometheus.c).
 */
#ifndef MTHPCTL_STATUS_H
#define MTHPCTL_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cgroup.h"
#include "mthp_stats.h"
#include "mthpctl.h"
#include "object.h"
#include "pin.h"
#include "sysfs.h"

/* Map ids of the policies in effect for a cgroup that status keeps. */
#define MTHPCTL_EFFECTIVE_SHOWN	16

/* The kernel, the global THP settings and the counters of each size. */
struct status_env {
	struct mthpctl_kernel k;
	bool psi, memcg, bpffs, root;
	char cg2[4096];
	struct mthpctl_hp_size *hp;
	int nr_hp;
	bool hp_counters;	/* hp[] has the counters (not with --cgroup) */
	char thp_enabled[16], thp_defrag[16];
	struct mthpctl_host_sizes host;	/* hp[] by setting, once */
	int bpf_stats;		/* kernel.bpf_stats_enabled; -1 unknown */
	__u64 object_hash;	/* the built-in policy's object this mthpctl attaches */
};

/* The pinned objects of one policy. */
struct status_policy {
	__u64 id;
	char dir[MTHPCTL_PIN_DIR_LEN];	/* a node has thousands: no PATH_MAX */
	const char *cgroup;	/* from the cgroup table; NULL: removed */
	bool link_ok, attached, have_params, have_entry, have_totals;
	/* a policy of the user's (attach --object): where it came from; its
	 * counters (have_totals) only if it follows mthp_ops.h's convention */
	bool have_object;
	struct mthpctl_object_info *object;	/* 4 KiB: only where have_object */
	/* the object the cgroup runs (object.h): the built-in policy's
	 * object_hash of its .rodata, or the record's hash of the user's */
	bool have_object_hash;
	__u64 object_hash;
	struct mthpctl_link link;
	struct mthpctl_params params;
	struct mthpctl_cg entry;	/* the state shown: see gather_cgroup() */
	const char *entry_of;	/* the cgroup whose state it is (a path) */
	struct mthpctl_totals totals;
	__u32 totals_map_id;
	int cgstate_fd;		/* kept open for the subtree count */
	bool cgstate_borrowed;	/* another policy's (one object): not closed */
	long cg_state, cg_subtree;	/* cgroups holding state / in the subtree; -1 unknown */
	/* the subtree's processes, and those no policy can help (THP
	 * disabled by prctl); have_thp_off: counted */
	bool have_thp_off;
	struct mthpctl_thp_off thp_off;
	bool live_psi, live_usage;
	struct mthpctl_psi psi;
	__u64 usage;
	__u32 prog_id;		/* choose_orders; 0: not found */
	__u64 run_cnt, run_time_ns;
	__u32 ops_type_id;	/* its struct_ops type (BPF_PROG_QUERY); 0: not known */
	/* bpf_mthp_ops in effect for the cgroup (BPF_PROG_QUERY), in call
	 * order: ours and those of other attachers here and above */
	int nr_effective;	/* -1: not known; may exceed the ids kept */
	/* attached cgroups linked to the same policy object (struct_ops map
	 * link.map_id), this one included: its counters are their sum */
	int object_cgroups;
	__u32 object_links;	/* the kernel's count of its links; 0: unknown */
	__u32 effective[MTHPCTL_EFFECTIVE_SHOWN];
};

/* The kernel part of env (BTF probe if probe, PSI, mounts, bpf_stats),
 * without the THP settings: status gathers it first, version alone. */
void status_gather_kernel(struct status_env *e, bool probe);
/* It as status prints it: the "kernel" object, the lines under "kernel:". */
void status_kernel_json(struct jw *w, const struct status_env *e);
void status_kernel_plain(const struct status_env *e);

/* status_pins.c: the policies pinned under the pin root (only: that
 * cgroup id's alone, 0: all), their pins read (link; the object's
 * parameters, totals, program and cgstate_fd once per object). Returns
 * how many, in *out; free them with status_policies_free(). */
size_t status_gather_pin_dirs(__u64 only, struct status_policy **out);
void status_policies_free(struct status_policy *pol, size_t n);

/* status_hook.c: the choose_orders program (prog_id, run_cnt,
 * run_time_ns, ops_type_id) of each policy whose pins have none, through
 * the kernel's BTF: e's probe, or one of its own into *own when e has none
 * (status of one). Returns the kernel facts used, for
 * status_gather_effective(). */
const struct mthpctl_kernel *status_gather_programs(const struct status_env *e,
						    struct status_policy *pol, size_t n,
						    struct mthpctl_kernel *own);
/* The id, run statistics and struct_ops type of the choose_orders
 * program open as fd; false if it is no struct_ops program. */
bool status_prog_read(int fd, struct status_policy *p);
/* The bpf_mthp_ops in effect for the policy's cgroup, open as cg_fd
 * (nr_effective, effective), by its program's struct_ops type or k's. */
void status_gather_effective(const struct mthpctl_kernel *k, struct status_policy *p, int cg_fd);

/* Sizes above 4K the policy allows page faults now (bit N: order N), and
 * why not more; only meaningful when status_knows_allowed(). */
__u64 status_allowed_mask(const struct status_env *e, const struct status_policy *p, __u32 *reason);
/* What the policy changes for a process that never calls madvise(): the
 * sizes it grants beyond the host default (left at "madvise"), and the
 * sizes at "always" it takes away now. Only when status_knows_allowed(). */
void status_host_diff(const struct status_env *e, const struct status_policy *p,
		      __u64 *granted, __u64 *taken);
/* Does status know what the policy allows (auto needs its cgroup's state)? */
bool status_knows_allowed(const struct status_policy *p);

/* The renderers: the gathered env and the n policies of pol on stdout. */
/* status (--format=text); cgroup: --cgroup's path or NULL */
void status_print_plain(const struct status_env *e, const struct status_policy *pol, size_t n,
			const char *cgroup);
/* status -j (--format=json) */
void status_print_json(const struct status_env *e, const struct status_policy *pol, size_t n);
/* status --format=prometheus; 0, or -ENOMEM with nothing printed */
int status_print_prometheus(const struct status_env *e, const struct status_policy *pol, size_t n);

#endif
