// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl apply: the files it reads and writes. The configuration
 * (mthpctl.conf(5): the main file and the directory, parsed whole by conf.c
 * so that a bad file changes nothing) and the state file, the record of what
 * apply attached (/run/mthpctl/applied, mthpctl-apply(8)).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply.h"
#include "mthpctl.h"
#include "sysfs.h"

char *apply_read_all(const char *path)
{
	char *buf = NULL;
	size_t cap = 0;
	int failed;
	ssize_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	/* up to the first NUL: a text file has none */
	n = getdelim(&buf, &cap, '\0', f);
	failed = ferror(f);
	fclose(f);
	if (n < 0) {
		free(buf);
		/* an empty file */
		return failed ? (errno = EIO, NULL) : strdup("");
	}
	return buf;
}

/* --- the configuration ---------------------------------------------------- */

static int add_file(struct apply_config *c, const char *path)
{
	char err[4400], *text, **nf;
	int ret;

	text = apply_read_all(path);
	if (!text)
		return mthpctl_error(MTHPCTL_EXIT_CONFIG, "cannot read %s: %s", path, strerror(errno));
	ret = mthpctl_conf_parse(&c->conf, path, text, mthpctl_pmd_order(), mthpctl_page_size(),
				 err, sizeof(err));
	free(text);
	if (ret)
		return mthpctl_error(ret, "%s (nothing changed)", err);
	nf = realloc(c->files, (c->nfiles + 1) * sizeof(*nf));
	if (!nf || !(nf[c->nfiles] = strdup(path)))
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
	c->files = nf;
	c->nfiles++;
	return 0;
}

void apply_config_free(struct apply_config *c)
{
	size_t i;

	mthpctl_conf_free(&c->conf);
	for (i = 0; i < c->nfiles; i++)
		free(c->files[i]);
	free(c->files);
}

int apply_read_config(const char *only, struct apply_config *c)
{
	char path[4400], **names = NULL, **nn;
	size_t n = 0, k, i;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	if (only)
		return add_file(c, only);
	if (access(MTHPCTL_CONF_FILE, F_OK) == 0) {
		ret = add_file(c, MTHPCTL_CONF_FILE);
		if (ret)
			return ret;
	}
	d = opendir(MTHPCTL_CONF_DIR);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			ret = mthpctl_error(MTHPCTL_EXIT_FAIL, "out of memory");
			break;
		}
		names = nn;
		n++;
	}
	closedir(d);
	k = ret ? 0 : mthpctl_conf_dir_order(names, n);
	for (i = 0; !ret && i < k; i++) {
		snprintf(path, sizeof(path), "%s/%s", MTHPCTL_CONF_DIR, names[i]);
		ret = add_file(c, path);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* --- the state file ------------------------------------------------------- */

int apply_lock_state(void)
{
	int fd;

	if (mkdir(MTHPCTL_STATE_DIR, 0755) && errno != EEXIST)
		return -errno;
	fd = open(MTHPCTL_STATE_DIR "/apply.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* applies run one at a time (units starting together each run
	 * apply --unit), so that none loses another's record */
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return -errno;
	}
	return fd;
}

int apply_write_state(const struct mthpctl_applied *r, size_t n)
{
	char line[4400];
	size_t i;
	FILE *f;

	f = fopen(MTHPCTL_STATE_FILE ".tmp", "we");
	if (!f)
		return -errno;
	fprintf(f, "# mthpctl apply: the policies it attached (mthpctl-apply(8)); "
		"cgroup_id link_id private policy max_order top_order window_ns threshold_ns min_usage target\n");
	for (i = 0; i < n; i++)
		if (!mthpctl_applied_format(&r[i], line, sizeof(line)))
			fputs(line, f);
	if (fclose(f) || rename(MTHPCTL_STATE_FILE ".tmp", MTHPCTL_STATE_FILE))
		return unlink(MTHPCTL_STATE_FILE ".tmp"), -errno;
	return 0;
}
