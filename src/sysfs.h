/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Readers and parsers for PSI, memory.stat and THP sysfs files. */
#ifndef MTHPCTL_SYSFS_H
#define MTHPCTL_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

__u64 mthpctl_page_size(void);	/* sysconf(_SC_PAGESIZE), 4096 if unknown */

#define MTHPCTL_THP_DIR "/sys/kernel/mm/transparent_hugepage"

struct mthpctl_psi_line {
	bool present;
	__u32 avg10, avg60, avg300;	/* in hundredths of a percent */
	__u64 total_us;
};

struct mthpctl_psi {
	struct mthpctl_psi_line some, full;
};

/* Parse a PSI file ("some avg10=0.00 avg60=... total=N\nfull ..."). At least
 * one valid line is required. Returns 0 or -EINVAL. */
int mthpctl_parse_psi(const char *buf, struct mthpctl_psi *psi);

/* Value of "key value" line in a memory.stat style buffer. 0 or -ENOENT. */
int mthpctl_stat_get(const char *buf, const char *key, __u64 *val);

/* The [selected] word of "always [madvise] never". 0 or -EINVAL. */
int mthpctl_parse_bracketed(const char *buf, char *out, size_t len);

/*
 * Can a policy have anonymous folios of a size whose hugepages-<size>kB/
 * enabled is @enabled, under the top-level enabled @top? Yes unless the
 * size resolves to "never": "always" sizes it can keep or take away,
 * "madvise" ones (and "inherit" under "madvise") it can grant.
 */
bool mthpctl_size_usable(const char *enabled, const char *top);
/* A size's setting with "inherit" resolved to the top level's (TOP). */
const char *mthpctl_size_setting(const char *enabled, const char *top);

/* Read a whole (small) file into buf, NUL-terminated. Returns bytes or -errno. */
long mthpctl_read_file(const char *path, char *buf, size_t len);
/* The same, path relative to the directory dir_fd (openat(2)). */
long mthpctl_read_file_at(int dir_fd, const char *path, char *buf, size_t len);
/* The value after "KEY:" and blanks on a line of a /proc/PID/status text
 * (the rest of the text from there), or NULL. */
const char *mthpctl_status_field(const char *status, const char *key);

struct mthpctl_counter {
	char name[48];
	__u64 value;
};

struct mthpctl_hp_size {
	__u64 size_kb;
	bool has_enabled;		/* some directories lack "enabled" */
	char enabled[16];		/* always, inherit, madvise, never */
	size_t nr_stats;
	struct mthpctl_counter stats[32];	/* stats/<name>, sorted by name */
};

/* Scan base (e.g. MTHPCTL_THP_DIR) for hugepages-<N>kB directories, sorted by
 * size. *out is malloc'ed. Returns the count or -errno. */
int mthpctl_scan_hugepages(const char *base, struct mthpctl_hp_size **out);

/* The same, MTHPCTL_THP_DIR's, reading "enabled" and the NR_STATS named
 * STATS only (a few files per size instead of ~20). */
int mthpctl_scan_hugepages_some(struct mthpctl_hp_size **out, const char *const *stats,
				size_t nr_stats);

/* The anonymous fault sizes above the base page (bit N: order N) by their
 * setting, "inherit" resolved. A size at "always" a policy keeps or takes
 * away, one at "madvise" it may grant, one at "never" it cannot have. */
struct mthpctl_host_sizes {
	__u64 always, madvise, never;
};

/* Of N scanned sizes HP (mthpctl_scan_hugepages()) under the top level's
 * setting TOP; a directory without "enabled" (hugepages-8kB: shmem and
 * file folios only) is no anonymous size. */
void mthpctl_host_sizes_of(const struct mthpctl_hp_size *hp, int n, const char *top,
			   struct mthpctl_host_sizes *h);
/* The running host's, from MTHPCTL_THP_DIR. 0 or -errno (h zeroed). */
int mthpctl_read_host_sizes(struct mthpctl_host_sizes *h);

/* "hugepages-2048kB" -> 2048; -EINVAL when the name does not match. */
int mthpctl_parse_hp_dirname(const char *name, __u64 *size_kb);

#endif
