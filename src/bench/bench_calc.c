// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: pure parsers and counters (redis-benchmark CSV, the
 * command-line lists, folio sizes from kpageflags, memory.stat), unit-tested
 * in tests/unit/test_bench.c; the statistics are in bench_stats.c.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench_calc.h"
#include "parse.h"
#include "sysfs.h"

#define CSV_MAX_FIELDS 16

/* Split one CSV line (fields optionally in double quotes, "" escapes a quote)
 * into fields, in place. Returns the count or -EINVAL. */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line, *o;

	for (;;) {
		if (n == max)
			return -EINVAL;
		if (*p == '"') {
			f[n++] = o = ++p;
			for (;;) {
				if (!*p)
					return -EINVAL;	/* unterminated */
				if (*p == '"' && p[1] == '"') {
					*o++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*o++ = *p++;
				}
			}
			if (*p && *p != ',')
				return -EINVAL;
			*o = '\0';
		} else {
			f[n++] = p;
			while (*p && *p != ',')
				p++;
		}
		if (!*p)
			return n;
		*p++ = '\0';
	}
}

/* A plain decimal number >= 0 ("42553.19"): strtod alone would also take
 * " 1", "+1", "inf" and "nan", which no measurement is. */
static int to_double(const char *s, double *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (*end || errno || !isfinite(*v))
		return -EINVAL;
	return 0;
}

/* A plain decimal number >= 0 at the start of s, *end after it. */
static int to_double_prefix(const char *s, double *v, char **end)
{
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtod(s, end);
	if (errno || !isfinite(*v))
		return -EINVAL;
	return 0;
}

enum { COL_TEST, COL_RPS, COL_AVG, COL_MIN, COL_P50, COL_P95, COL_P99, COL_MAX, NR_COLS };
static const char *const col_names[NR_COLS] = {
	"test", "rps", "avg_latency_ms", "min_latency_ms", "p50_latency_ms",
	"p95_latency_ms", "p99_latency_ms", "max_latency_ms",
};

int bench_parse_redis_csv(const char *buf, const char *test, struct bench_redis_row *row)
{
	int col[NR_COLS], i, j, n, ret = -ENOENT;
	bool header = false, any = false;
	char *copy, *line, *save = NULL;
	char *f[CSV_MAX_FIELDS];

	if (!buf)
		return -EINVAL;
	copy = strdup(buf);
	if (!copy)
		return -ENOMEM;
	/* legacy layout: "SET","123.45" */
	for (i = 0; i < NR_COLS; i++)
		col[i] = i < 2 ? i : -1;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line);
		double *dst[NR_COLS] = {
			NULL, &row->rps, &row->avg, &row->min, &row->p50,
			&row->p95, &row->p99, &row->max,
		};

		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (!len)
			continue;
		n = csv_split(line, f, CSV_MAX_FIELDS);
		if (n < 2) {
			ret = -EINVAL;
			break;
		}
		for (j = 0, header = false; !any && j < n; j++)
			header |= !strcmp(f[j], "test");
		if (header) {
			header = true;
			for (i = 0; i < NR_COLS; i++) {
				col[i] = -1;
				for (j = 0; j < n; j++)
					if (!strcmp(f[j], col_names[i]))
						col[i] = j;
			}
			any = true;
			if (col[COL_TEST] < 0 || col[COL_RPS] < 0) {
				ret = -EINVAL;
				break;
			}
			continue;
		}
		any = true;
		if (col[COL_TEST] >= n || col[COL_RPS] >= n) {
			ret = -EINVAL;
			break;
		}
		if (test && strcasecmp(f[col[COL_TEST]], test))
			continue;
		memset(row, 0, sizeof(*row));
		snprintf(row->test, sizeof(row->test), "%s", f[col[COL_TEST]]);
		ret = 0;
		for (i = COL_RPS; i < NR_COLS; i++) {
			*dst[i] = NAN;
			if (col[i] < 0)
				continue;
			if (col[i] >= n || to_double(f[col[i]], dst[i])) {
				ret = -EINVAL;
				break;
			}
		}
		break;
	}
	free(copy);
	return ret;
}

/*
 * Call item_fn for each item of a comma-separated list (no empty item):
 * 0, the first error item_fn returns, -EINVAL (an empty item) or -ENOMEM.
 */
static int each_item(const char *s, int (*item_fn)(const char *item, void *arg), void *arg)
{
	char *copy, *item, *save = NULL;
	int ret = 0;

	if (!s || !*s || s[strlen(s) - 1] == ',' || *s == ',' || strstr(s, ",,"))
		return -EINVAL;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (item = strtok_r(copy, ",", &save); item && !ret; item = strtok_r(NULL, ",", &save))
		ret = item_fn(item, arg);
	free(copy);
	return ret;
}

struct value_list {
	__u64 *out;
	int max, n;
	int (*parse_item)(const char *item, const __u64 *before, int n, __u64 *v);
};

static int value_item(const char *item, void *arg)
{
	struct value_list *l = arg;
	__u64 v;
	int ret;

	if (l->n == l->max)
		return -E2BIG;
	ret = l->parse_item(item, l->out, l->n, &v);
	if (!ret)
		l->out[l->n++] = v;
	return ret;
}

/*
 * A comma-separated list of values, each checked and converted by parse_item
 * (which sees the values before it): the count, or -EINVAL (an empty item,
 * a bad one), -E2BIG (more than max) or -ENOMEM.
 */
static int parse_list(const char *s, __u64 *out, int max,
		      int (*parse_item)(const char *item, const __u64 *before, int n, __u64 *v))
{
	struct value_list l = { .out = out, .max = max, .parse_item = parse_item };
	int ret = each_item(s, value_item, &l);

	return ret ? ret : l.n;
}

int bench_parse_count(const char *s, __u64 min, __u64 max, __u64 *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*end || errno || *v < min || *v > max)
		return -EINVAL;
	return 0;
}

int bench_parse_pct(const char *s, double *v)
{
	char *end;

	if (!s || to_double_prefix(s, v, &end))
		return -EINVAL;
	if (*end == '%')
		end++;
	if (*end || *v <= 0 || *v > 100)
		return -EINVAL;
	return 0;
}

/* "max" or a size above 0 */
static int parse_high(const char *item, const __u64 *before, int n, __u64 *v)
{
	(void)before;
	(void)n;
	if (!strcmp(item, "max")) {
		*v = BENCH_HIGH_MAX;
		return 0;
	}
	return mthpctl_parse_size(item, v) || !*v ? -EINVAL : 0;
}

int bench_parse_high_list(const char *s, __u64 *out, int max)
{
	return parse_list(s, out, max, parse_high);
}

/* "all" or a unique prefix of a mode name: its bits added to *mask */
static int mode_item(const char *item, void *mask)
{
	static const char *const names[BENCH_NR_MODES] = BENCH_MODE_NAMES;
	int i, hit = -1;

	if (!strcmp(item, "all")) {
		*(unsigned int *)mask |= (1u << BENCH_NR_MODES) - 1;
		return 0;
	}
	for (i = 0; i < BENCH_NR_MODES; i++)
		if (!strncmp(names[i], item, strlen(item)))
			hit = hit == -1 ? i : -2;
	if (hit < 0)
		return -EINVAL;
	*(unsigned int *)mask |= 1u << hit;
	return 0;
}

int bench_parse_modes(const char *s, unsigned int *mask)
{
	unsigned int m = 0;
	int ret = each_item(s, mode_item, &m);

	if (!ret)
		*mask = m;
	return ret;
}

int bench_parse_redis_info(const char *buf, const char *cmd, __u64 *calls, double *p99_ms)
{
	char key[96];
	const char *p, *line_end;
	char *end;

	*calls = 0;
	*p99_ms = NAN;
	if (!strstr(buf, "# Commandstats"))
		return -EINVAL;
	snprintf(key, sizeof(key), "\ncmdstat_%s:calls=", cmd);
	p = strstr(buf, key);
	if (!p)
		return 0;	/* not called yet */
	errno = 0;
	*calls = strtoull(p + strlen(key), &end, 10);
	if (errno || *end != ',')
		return -EINVAL;
	snprintf(key, sizeof(key), "\nlatency_percentiles_usec_%s:", cmd);
	p = strstr(buf, key);
	if (!p)
		return 0;	/* latency-tracking no */
	line_end = strchrnul(p + 1, '\n');
	p = strstr(p + strlen(key), "p99=");
	if (!p || p > line_end)
		return 0;	/* percentiles without p99 */
	if (to_double_prefix(p + strlen("p99="), p99_ms, &end))
		return -EINVAL;
	*p99_ms /= 1000;
	return 0;
}

int bench_parse_memaslap(const char *buf, double *tps, double *secs)
{
	const char *line = NULL, *p;
	char *end;

	/* the last such line: the closing one, after any -S interval lines */
	for (p = buf; (p = strstr(p, "Run time: ")); p++)
		line = p;
	if (!line)
		return -ENOENT;
	p = line + strlen("Run time: ");
	if (to_double_prefix(p, secs, &end) || *end != 's')
		return -EINVAL;
	p = strstr(end, " TPS: ");
	if (!p || p > strchrnul(line, '\n'))
		return -EINVAL;
	if (to_double_prefix(p + strlen(" TPS: "), tps, &end) || (*end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	return 0;
}

int bench_parse_object_words(char *const words[], int n, const char **file, const char **ops,
			     char *err, size_t len)
{
	static const char *const names[] = { "--object", "--ops" };
	const char **out[] = { file, ops };
	int i, k;

	*file = *ops = NULL;
	for (i = 0; i < n; i++) {
		const char *w = words[i], *value = NULL;
		size_t nl;

		for (k = 0; k < 2; k++) {
			nl = strlen(names[k]);
			if (!strcmp(w, names[k]) && i + 1 < n)
				value = words[++i];
			else if (!strncmp(w, names[k], nl) && w[nl] == '=')
				value = w + nl + 1;
			if (value)
				break;
		}
		if (!value || !*value || *out[k]) {
			snprintf(err, len, "--policy \"--object FILE [--ops NAME]\" takes those two "
				 "options once each: '%s' is %s", w,
				 k < 2 && *out[k] ? "given twice" : "not one of them or lacks its value");
			return -EINVAL;
		}
		*out[k] = value;
	}
	if (!*file) {
		snprintf(err, len, "--ops names a map of --object's file (add --object FILE)");
		return -EINVAL;
	}
	return 0;
}

int bench_split_words(char *s, char **words, int max)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			*s++ = '\0';
		if (!*s)
			return n;
		if (n == max)
			return -E2BIG;
		words[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
}

/* a power of two from 8K to 1G, not named before */
static int parse_cap_size(const char *item, const __u64 *before, int n, __u64 *v)
{
	int i;

	if (mthpctl_parse_size(item, v) || *v < 8192 || *v > (1ULL << 30) || (*v & (*v - 1)))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (before[i] == *v)
			return -EINVAL;
	return 0;
}

int bench_parse_size_list(const char *s, __u64 *out, int max)
{
	return parse_list(s, out, max, parse_cap_size);
}

/* --- folios --------------------------------------------------------- */

void bench_folios_init(struct bench_folios *f)
{
	memset(f, 0, sizeof(*f));
}

void bench_folios_flush(struct bench_folios *f)
{
	int o;

	if (!f->run)
		return;
	for (o = 0; o < BENCH_NR_ORDERS - 1 && (1ULL << o) < f->run; o++)
		;
	f->bytes[o] += f->run * 4096;
	f->run = 0;
}

void bench_folios_feed(struct bench_folios *f, bool present, __u64 pfn, __u64 kpf)
{
	bool tail = kpf & (1ULL << BENCH_KPF_COMPOUND_TAIL);

	if (!present || !(kpf & (1ULL << BENCH_KPF_ANON)) ||
	    (kpf & (1ULL << BENCH_KPF_ZERO_PAGE))) {
		bench_folios_flush(f);
		return;
	}
	/* a tail continues the folio only right after its previous page */
	if (!tail || !f->run || pfn != f->last_pfn + 1)
		bench_folios_flush(f);
	f->run++;
	f->last_pfn = pfn;
}

/* --- memory.stat ---------------------------------------------------- */

const char *const bench_ms_names[BENCH_NR_MS] = {
	"pswpout", "pswpin", "thp_swpout", "thp_swpout_fallback",
	"workingset_refault_anon", "pgmajfault",
};

void bench_memstat_parse(const char *buf, struct bench_memstat *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	for (i = 0; buf && i < BENCH_NR_MS; i++)
		m->have[i] = !mthpctl_stat_get(buf, bench_ms_names[i], &m->v[i]);
}

void bench_memstat_delta(const struct bench_memstat *a, const struct bench_memstat *b,
			 struct bench_memstat *d)
{
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < BENCH_NR_MS; i++) {
		d->have[i] = a->have[i] && b->have[i];
		if (d->have[i])
			d->v[i] = b->v[i] >= a->v[i] ? b->v[i] - a->v[i] : 0;
	}
}

bool bench_swap_attributed(__u64 large_pages, __u64 global_pswpout, __u64 cg_pswpout)
{
	__u64 diff = global_pswpout > cg_pswpout ? global_pswpout - cg_pswpout :
						   cg_pswpout - global_pswpout;
	__u64 tol = cg_pswpout / 100 > 16 ? cg_pswpout / 100 : 16;

	return diff <= tol && large_pages <= cg_pswpout + tol;
}

/* the line after line's end, or NULL at the end of the text */
static const char *next_line(const char *line)
{
	const char *nl = strchr(line, '\n');

	return nl ? nl + 1 : NULL;
}

int bench_parse_buddyinfo(const char *buf, unsigned int order, __u64 *blocks)
{
	const char *line;
	int zones = 0;

	*blocks = 0;
	for (line = buf; line && *line; line = next_line(line)) {
		const char *p = strstr(line, "zone");
		const char *eol = strchrnul(line, '\n');
		unsigned int o = 0;
		char *end;

		if (!p || p > eol)
			continue;
		p += strlen("zone");
		while (*p == ' ')
			p++;
		while (*p && *p != ' ' && p < eol)	/* the zone's name */
			p++;
		for (;; o++) {
			unsigned long long n;

			while (*p == ' ' || *p == '\t')
				p++;
			if (p >= eol)
				break;
			errno = 0;
			n = strtoull(p, &end, 10);
			if (end == p || errno || (*end != ' ' && *end != '\t' && *end != '\n' && *end))
				return -EINVAL;
			/* a free block of order o >= PMD order holds 2^(o - order) PMD blocks */
			if (o >= order && o - order < 64)
				*blocks += n << (o - order);
			p = end;
		}
		if (o <= order)
			return -EINVAL;	/* no column for this order at all */
		zones++;
	}
	return zones ? 0 : -EINVAL;
}

int bench_parse_meminfo_kb(const char *buf, const char *key, __u64 *kb)
{
	size_t n = strlen(key);
	const char *line;

	for (line = buf; line && *line; line = next_line(line)) {
		const char *p;
		char *end;

		if (strncmp(line, key, n) || line[n] != ':')
			continue;
		p = line + n + 1;
		while (*p == ' ')
			p++;
		errno = 0;
		*kb = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}
