/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl apply's configuration (mthpctl.conf(5)), parsed without touching
 * the system: one section per target, named by its cgroup path or its
 * systemd unit, holding attach's options as keys.
 *
 *   [/sys/fs/cgroup/batch]         [redis.service]
 *   policy = fixed                 threshold = 50ms
 *   max-size = 64K                 private = yes
 */
#ifndef MTHPCTL_CONF_H
#define MTHPCTL_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "mthpctl.h"

#define MTHPCTL_CONF_FILE	"/etc/mthpctl/policies.conf"
#define MTHPCTL_CONF_DIR	"/etc/mthpctl/policies.d"
/* A section's keys: the policy's options, then private. */
#define MTHPCTL_CONF_NR_KEYS	(MTHPCTL_NR_SPEC + 1)

struct mthpctl_conf_entry {
	char *target;		/* the section name: a path, or a unit name */
	bool is_unit;
	char *file;		/* where the section starts */
	int line;
	struct mthpctl_policy_spec spec;	/* strings owned by the entry */
	/* line of each key: the spec fields (enum mthpctl_spec_field), then
	 * private; 0: absent */
	int key_line[MTHPCTL_CONF_NR_KEYS];
	bool private_obj;
	struct mthpctl_params params;
};

struct mthpctl_conf {
	struct mthpctl_conf_entry *e;
	size_t n, cap;
	/* the entries by target, hashed (conf.c): a node's configuration
	 * names thousands of cgroups, and comparing each section with every
	 * one before it is quadratic (10,000 sections: 5e7 strcmp()s) */
	size_t *slots;		/* an entry's index + 1, or 0: free */
	size_t nr_slots, nr_hashed;
};

/*
 * Parse one file's text into c (entries are appended: call it once per
 * file, in order). Parameters are built for a kernel of PMD order
 * top_order and this page size. 0, or MTHPCTL_EXIT_CONFIG with
 * "FILE:LINE: message" in err (c then holds what came before the file).
 */
int mthpctl_conf_parse(struct mthpctl_conf *c, const char *file, const char *text,
		       __u32 top_order, __u64 page_size, char *err, size_t len);
void mthpctl_conf_free(struct mthpctl_conf *c);

/* Is name a systemd unit that has a cgroup (service, slice, scope, socket,
 * mount, swap; not a template)? 0, or -EINVAL with the reason in why. */
int mthpctl_unit_name_check(const char *name, const char **why);

/* The files of a configuration directory's listing, in the order apply
 * reads them: names ending in ".conf", not hidden, sorted by strcmp. The
 * names are moved to the front of names[]; returns how many. */
size_t mthpctl_conf_dir_order(char **names, size_t n);

#endif
