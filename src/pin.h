/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bpffs pin layout: <root>/cg-<cgroup id>/{link,conf,cgstate,totals,sampler,pending,object,prog}
 *   link     the struct_ops link attaching the policy to the cgroup
 *   prog     its choose_orders program (pins of an older mthpctl lack
 *            it: status then finds the program through the kernel's BTF)
 *   conf     the policy's .rodata map (policy name and parameters)
 *   cgstate  per-cgroup state (cgroup local storage; key: a cgroup dir fd)
 *   totals   per-policy counters (per-CPU array)
 *   sampler  the array holding the sampler's bpf_wq (must stay referenced)
 *   pending  the queue of cgroup ids waiting for a sample
 * A policy of the user's (attach --object) has only
 *   link     as above
 *   object   where it came from (struct mthpctl_object_info, object.h)
 *   totals   its counters, if its object follows mthp_ops.h's convention
 * While --replace runs, cg-<id>_new exists briefly.
 */
#ifndef MTHPCTL_PIN_H
#define MTHPCTL_PIN_H

#include <stddef.h>
#include <linux/types.h>

#define MTHPCTL_BPFFS		"/sys/fs/bpf"
#define MTHPCTL_PIN_ROOT	MTHPCTL_BPFFS "/mthpctl"
/* Room for MTHPCTL_PIN_ROOT "/cg-<id>" and its NUL, whatever the id. */
#define MTHPCTL_PIN_DIR_LEN	sizeof(MTHPCTL_PIN_ROOT "/cg-18446744073709551615")

extern const char *const mthpctl_pin_objs[];	/* NULL-terminated */

/* <root>/cg-<id><suffix>; suffix may be NULL. 0 or -ENAMETOOLONG. */
int mthpctl_pin_dir(const char *root, __u64 id, const char *suffix,
		    char *out, size_t len);
/* <dir>/<obj>. 0 or -ENAMETOOLONG/-EINVAL (unknown obj). */
int mthpctl_pin_path(const char *dir, const char *obj, char *out, size_t len);
/* "cg-<id>" (canonical decimal, id > 0) -> 0 and *id; else -EINVAL. */
int mthpctl_pin_parse(const char *name, __u64 *id);
/* "cg-<id>_<anything>": a leftover of an interrupted operation. The
 * separator is not a dot: bpffs refuses names with dots (EPERM). */
int mthpctl_pin_is_leftover(const char *name);

#endif
