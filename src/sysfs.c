// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "sysfs.h"

__u64 mthpctl_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (__u64)ps : 4096;
}

static int parse_u64(const char *s, const char **end, __u64 *v)
{
	__u64 n = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (~0ULL - (*p - '0')) / 10)
			return -ERANGE;
		n = n * 10 + (*p - '0');
	}
	*v = n;
	*end = p;
	return 0;
}

/* "12.34" -> 1234 */
static int parse_centi(const char *s, const char **end, __u32 *v)
{
	__u64 ip, fp = 0;
	const char *p;

	if (parse_u64(s, &p, &ip) || ip > 100000)
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9')
			return -EINVAL;
		fp = (p[0] - '0') * 10 + (p[1] - '0');
		p += 2;
	}
	*v = ip * 100 + fp;
	*end = p;
	return 0;
}

static int parse_psi_line(const char *p, struct mthpctl_psi_line *l)
{
	static const char *const keys[] = { "avg10=", "avg60=", "avg300=", "total=" };
	__u32 *avgs[] = { &l->avg10, &l->avg60, &l->avg300 };
	int i;

	for (i = 0; i < 4; i++) {
		size_t n = strlen(keys[i]);

		if (*p != ' ')
			return -EINVAL;
		p++;
		if (strncmp(p, keys[i], n))
			return -EINVAL;
		p += n;
		if (i < 3 ? parse_centi(p, &p, avgs[i]) : parse_u64(p, &p, &l->total_us))
			return -EINVAL;
	}
	if (*p && *p != '\n')
		return -EINVAL;
	l->present = true;
	return 0;
}

int mthpctl_parse_psi(const char *buf, struct mthpctl_psi *psi)
{
	const char *line = buf;

	memset(psi, 0, sizeof(*psi));
	while (line && *line) {
		struct mthpctl_psi_line *l = NULL;

		if (!strncmp(line, "some", 4))
			l = &psi->some;
		else if (!strncmp(line, "full", 4))
			l = &psi->full;
		if (!l || parse_psi_line(line + 4, l))
			return -EINVAL;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return psi->some.present || psi->full.present ? 0 : -EINVAL;
}

int mthpctl_stat_get(const char *buf, const char *key, __u64 *val)
{
	size_t n = strlen(key);
	const char *line = buf;

	while (line && *line) {
		const char *end;

		if (!strncmp(line, key, n) && line[n] == ' ' &&
		    !parse_u64(line + n + 1, &end, val) &&
		    (*end == '\n' || *end == '\0'))
			return 0;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

const char *mthpctl_size_setting(const char *enabled, const char *top)
{
	return strcmp(enabled, "inherit") ? enabled : top;
}

bool mthpctl_size_usable(const char *enabled, const char *top)
{
	enabled = mthpctl_size_setting(enabled, top);
	return !strcmp(enabled, "always") || !strcmp(enabled, "madvise");
}

int mthpctl_parse_bracketed(const char *buf, char *out, size_t len)
{
	const char *a = strchr(buf, '['), *b;

	if (!a)
		return -EINVAL;
	b = strchr(a, ']');
	if (!b || b == a + 1 || (size_t)(b - a - 1) >= len)
		return -EINVAL;
	memcpy(out, a + 1, b - a - 1);
	out[b - a - 1] = '\0';
	return 0;
}

const char *mthpctl_status_field(const char *status, const char *key)
{
	size_t n = strlen(key);
	const char *line = status;

	while (line && *line) {
		if (!strncmp(line, key, n) && line[n] == ':') {
			line += n + 1;
			while (*line == ' ' || *line == '\t')
				line++;
			return line;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

long mthpctl_read_file(const char *path, char *buf, size_t len)
{
	return mthpctl_read_file_at(AT_FDCWD, path, buf, len);
}

long mthpctl_read_file_at(int dir_fd, const char *path, char *buf, size_t len)
{
	size_t off = 0;
	int fd;

	if (!len)
		return -EINVAL;
	fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < len - 1) {
		ssize_t r = read(fd, buf + off, len - 1 - off);

		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			return -e;
		}
		if (!r)
			break;
		off += r;
	}
	close(fd);
	buf[off] = '\0';
	return off;
}

int mthpctl_parse_hp_dirname(const char *name, __u64 *size_kb)
{
	const char *p;

	if (strncmp(name, "hugepages-", 10))
		return -EINVAL;
	if (parse_u64(name + 10, &p, size_kb) || strcmp(p, "kB") || !*size_kb)
		return -EINVAL;
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	const struct mthpctl_hp_size *x = a, *y = b;

	return x->size_kb < y->size_kb ? -1 : x->size_kb > y->size_kb;
}

static int cmp_counter(const void *a, const void *b)
{
	return strcmp(((const struct mthpctl_counter *)a)->name,
		      ((const struct mthpctl_counter *)b)->name);
}

static void read_stats(const char *dir, struct mthpctl_hp_size *hp)
{
	char path[512], buf[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/stats", dir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && hp->nr_stats < sizeof(hp->stats) / sizeof(hp->stats[0])) {
		struct mthpctl_counter *c = &hp->stats[hp->nr_stats];
		const char *end;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(c->name))
			continue;
		snprintf(path, sizeof(path), "%s/stats/%s", dir, de->d_name);
		if (mthpctl_read_file(path, buf, sizeof(buf)) <= 0 ||
		    parse_u64(buf, &end, &c->value))
			continue;
		strcpy(c->name, de->d_name);
		hp->nr_stats++;
	}
	closedir(d);
	qsort(hp->stats, hp->nr_stats, sizeof(hp->stats[0]), cmp_counter);
}

/* The named stats of the size in DIR (read_stats() reads them all). */
static void read_named_stats(const char *dir, struct mthpctl_hp_size *hp,
			     const char *const *stats, size_t nr_stats)
{
	char path[600], buf[64];
	size_t i;

	for (i = 0; i < nr_stats && i < sizeof(hp->stats) / sizeof(hp->stats[0]); i++) {
		snprintf(path, sizeof(path), "%s/stats/%s", dir, stats[i]);
		if (mthpctl_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		snprintf(hp->stats[hp->nr_stats].name, sizeof(hp->stats[0].name), "%s", stats[i]);
		hp->stats[hp->nr_stats++].value = strtoull(buf, NULL, 10);
	}
}

/* The hugepages-<N>kB directories of BASE, sorted by size, each with its
 * "enabled" and its stats: all of them (ALL), or the NR_STATS named. */
static int scan_sizes(const char *base, bool all, const char *const *stats, size_t nr_stats,
		      struct mthpctl_hp_size **out)
{
	struct mthpctl_hp_size *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	d = opendir(base);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char dir[512], path[600], buf[128];
		struct mthpctl_hp_size *hp;
		__u64 kb;

		if (mthpctl_parse_hp_dirname(de->d_name, &kb))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		hp = &v[n++];
		memset(hp, 0, sizeof(*hp));
		hp->size_kb = kb;
		snprintf(dir, sizeof(dir), "%s/%s", base, de->d_name);
		snprintf(path, sizeof(path), "%s/enabled", dir);
		if (mthpctl_read_file(path, buf, sizeof(buf)) > 0 &&
		    !mthpctl_parse_bracketed(buf, hp->enabled, sizeof(hp->enabled)))
			hp->has_enabled = true;
		if (all)
			read_stats(dir, hp);
		else
			read_named_stats(dir, hp, stats, nr_stats);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_size);
	*out = v;
	return (int)n;
}

int mthpctl_scan_hugepages(const char *base, struct mthpctl_hp_size **out)
{
	return scan_sizes(base, true, NULL, 0, out);
}

int mthpctl_scan_hugepages_some(struct mthpctl_hp_size **out, const char *const *stats,
				size_t nr_stats)
{
	return scan_sizes(MTHPCTL_THP_DIR, false, stats, nr_stats, out);
}

void mthpctl_host_sizes_of(const struct mthpctl_hp_size *hp, int n, const char *top,
			   struct mthpctl_host_sizes *h)
{
	__u64 ps = mthpctl_page_size();
	const char *setting;
	int i, order;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < n; i++) {
		if (!hp[i].has_enabled)
			continue;
		order = mthpctl_size_to_order(hp[i].size_kb << 10, ps);
		if (order <= 0 || order >= 64)
			continue;
		setting = mthpctl_size_setting(hp[i].enabled, top);
		if (!strcmp(setting, "always"))
			h->always |= 1ULL << order;
		else if (!strcmp(setting, "madvise"))
			h->madvise |= 1ULL << order;
		else if (!strcmp(setting, "never"))
			h->never |= 1ULL << order;
	}
}

int mthpctl_read_host_sizes(struct mthpctl_host_sizes *h)
{
	struct mthpctl_hp_size *hp;
	char buf[128], top[16] = "";
	int n;

	memset(h, 0, sizeof(*h));
	if (mthpctl_read_file(MTHPCTL_THP_DIR "/enabled", buf, sizeof(buf)) > 0)
		mthpctl_parse_bracketed(buf, top, sizeof(top));
	n = mthpctl_scan_hugepages_some(&hp, NULL, 0);
	if (n < 0)
		return n;
	mthpctl_host_sizes_of(hp, n, top, h);
	free(hp);
	return 0;
}
