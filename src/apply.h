/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mthpctl apply, in steps: the files it reads and writes (apply_config.c:
 * the configuration, the state file), what systemd adds (apply_systemd.c:
 * units' cgroups, the drop-ins), the plan (plan.c, pure), carrying it out
 * (apply.c) and the report (apply_report.c).
 */
#ifndef MTHPCTL_APPLY_H
#define MTHPCTL_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "conf.h"
#include "plan.h"

#define SYSTEMD_RUN_DIR		"/run/systemd/system"	/* sd_booted(3): systemd is PID 1 */
#define DROPIN_NAME		"50-mthpctl.conf"

struct apply_args {
	const char *config;
	const char *unit;
	bool dry_run;
};

struct apply_config {
	struct mthpctl_conf conf;
	char **files;
	size_t nfiles;
};

/* The drop-ins: one per .service target of the configuration (all of it:
 * apply --unit writes none), and none left for units it no longer names. */
struct apply_dropin {
	char unit[256];
	bool want, have, differs;
};

struct apply_run {
	struct apply_args *args;
	struct apply_config cfg;
	struct mthpctl_conf_entry **ent;	/* of each want */
	struct mthpctl_want *want;
	char (*cgpath)[4096];
	char (*warning)[512];	/* of each want: mthpctl_memory_thp_warning() */
	size_t nw;
	struct mthpctl_attached *have;
	size_t nh;
	struct mthpctl_applied *applied;
	size_t na;
	struct mthpctl_action *act;
	size_t nact, changes;
	bool *done;
	struct apply_dropin *dropins;
	size_t nd;
	char dropin_text[1024];
	char error[1024];
	int error_code;
};

/* apply_config.c */
/* The whole file as a string (malloc'd), or NULL with errno. */
char *apply_read_all(const char *path);
/* --config FILE, or the main file and the directory (either may be
 * absent), into c; an exit code (printed). */
int apply_read_config(const char *only, struct apply_config *c);
void apply_config_free(struct apply_config *c);
/* The lock of the state file: an fd, or -errno. */
int apply_lock_state(void);
/* Replace the state file by these records. 0 or -errno. */
int apply_write_state(const struct mthpctl_applied *r, size_t n);

/* apply_systemd.c */
/* Run argv (no shell, found in PATH), its stdout into out (cut to len);
 * its exit status, or -errno (-ENOENT: no such program). */
int apply_run_capture(char *const argv[], char *out, size_t len);
bool apply_systemd_running(void);
/* The unit's cgroup directory, through systemd ("": not running), and its
 * MemoryTHP= ("": not set, or a systemd without it). An exit code
 * (printed, with where in the configuration). */
int apply_unit_cgroup(const struct mthpctl_conf_entry *e, char *out, size_t len, char *memory_thp, size_t mlen);
/* The drop-ins the configuration c wants (text: their content) and those
 * on disk; how many, in *out (malloc'd). */
size_t apply_plan_dropins(const struct mthpctl_conf *c, const char *text, struct apply_dropin **out);
bool apply_dropin_changes(const struct apply_dropin *d);
/* Write and remove the drop-ins as planned, then have systemd read them.
 * An exit code (printed). */
int apply_sync_dropins(const struct apply_dropin *d, size_t n, const char *text);

/* apply_report.c: what apply did, or would do with --dry-run */
void apply_report_json(const struct apply_run *r);
void apply_report_plain(const struct apply_run *r);

#endif
