// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl bench: pure helpers, unit-tested in tests/unit/test_bench.c. */
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(const double *v, size_t n)
{
	double *c, m;
	size_t i, k = 0;

	c = malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		return NAN;
	for (i = 0; i < n; i++)
		if (!isnan(v[i]))
			c[k++] = v[i];
	if (!k) {
		free(c);
		return NAN;
	}
	qsort(c, k, sizeof(*c), cmp_double);
	m = k % 2 ? c[k / 2] : (c[k / 2 - 1] + c[k / 2]) / 2;
	free(c);
	return m;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

__u64 bench_median_u64(const __u64 *v, size_t n)
{
	__u64 *c, m;

	if (!n)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		return 0;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_u64);
	/* even count: the lower middle (an observed value, no rounding) */
	m = c[(n - 1) / 2];
	free(c);
	return m;
}

double bench_pct(double x, double base)
{
	if (isnan(x) || isnan(base) || base == 0)
		return NAN;
	return (x - base) / base * 100.0;
}

double bench_oracle(double rps, double always, double never)
{
	double best;

	if (isnan(always) && isnan(never))
		return NAN;
	best = isnan(always) ? never : isnan(never) ? always : always > never ? always : never;
	if (isnan(rps) || best <= 0)
		return NAN;
	return rps / best;
}

/*
 * A comma-separated list of values, each checked and converted by parse_item
 * (which sees the values before it): the count, or -EINVAL (an empty item,
 * a bad one), -E2BIG (more than max) or -ENOMEM.
 */
static int parse_list(const char *s, __u64 *out, int max,
		      int (*parse_item)(const char *item, const __u64 *before, int n, __u64 *v))
{
	char *copy, *item, *save = NULL;
	int n = 0, ret = 0;
	__u64 v;

	if (!s || !*s || s[strlen(s) - 1] == ',' || *s == ',' || strstr(s, ",,"))
		return -EINVAL;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (n == max) {
			ret = -E2BIG;
			break;
		}
		ret = parse_item(item, out, n, &v);
		if (ret)
			break;
		out[n++] = v;
	}
	free(copy);
	return ret ? ret : n;
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

int bench_parse_modes(const char *s, unsigned int *mask)
{
	static const char *const names[BENCH_NR_MODES] = { "always", "never", "policy" };
	char *copy, *item, *save = NULL;
	unsigned int m = 0;
	int i, hit, ret = 0;

	if (!s || !*s || s[strlen(s) - 1] == ',' || *s == ',' || strstr(s, ",,"))
		return -EINVAL;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (!strcmp(item, "all")) {
			m |= (1u << BENCH_NR_MODES) - 1;
			continue;
		}
		hit = -1;
		for (i = 0; i < BENCH_NR_MODES; i++)
			if (!strncmp(names[i], item, strlen(item)))
				hit = hit == -1 ? i : -2;
		if (hit < 0) {
			ret = -EINVAL;
			break;
		}
		m |= 1u << hit;
	}
	free(copy);
	if (!ret)
		*mask = m;
	return ret;
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

/* --- spread --------------------------------------------------------- */

__u64 bench_prng_next(__u64 *state)
{
	__u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* median of a sorted array */
static double sorted_median(const double *c, size_t k)
{
	return k % 2 ? c[k / 2] : (c[k / 2 - 1] + c[k / 2]) / 2;
}

/* p-th percentile (0..1) of a sorted array, linear interpolation */
static double sorted_pct(const double *c, size_t k, double p)
{
	double x = p * (k - 1);
	size_t i = (size_t)x;

	if (i + 1 >= k)
		return c[k - 1];
	return c[i] + (x - i) * (c[i + 1] - c[i]);
}

void bench_spread(const double *v, size_t n, struct bench_spread *s)
{
	double *c, *boot, *tmp;
	__u64 seed = BENCH_BOOT_SEED;
	size_t i, j, k = 0;

	s->n = 0;
	s->median = s->min = s->max = s->lo = s->hi = NAN;
	c = malloc((n ? n : 1) * sizeof(*c));
	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	boot = malloc(BENCH_BOOT_RESAMPLES * sizeof(*boot));
	if (!c || !tmp || !boot)
		goto out;
	for (i = 0; i < n; i++)
		if (!isnan(v[i]))
			c[k++] = v[i];
	if (!k)
		goto out;
	qsort(c, k, sizeof(*c), cmp_double);
	s->n = k;
	s->median = sorted_median(c, k);
	s->min = c[0];
	s->max = c[k - 1];
	for (i = 0; i < BENCH_BOOT_RESAMPLES; i++) {
		for (j = 0; j < k; j++)
			tmp[j] = c[bench_prng_next(&seed) % k];
		qsort(tmp, k, sizeof(*tmp), cmp_double);
		boot[i] = sorted_median(tmp, k);
	}
	qsort(boot, BENCH_BOOT_RESAMPLES, sizeof(*boot), cmp_double);
	s->lo = sorted_pct(boot, BENCH_BOOT_RESAMPLES, 0.025);
	s->hi = sorted_pct(boot, BENCH_BOOT_RESAMPLES, 0.975);
out:
	free(c);
	free(tmp);
	free(boot);
}

void bench_ratio_spread(const double *num, const double *den, size_t n, struct bench_spread *s)
{
	double *r = malloc((n ? n : 1) * sizeof(*r));
	size_t i, k = 0;

	if (!r) {
		bench_spread(NULL, 0, s);
		return;
	}
	for (i = 0; i < n; i++)
		if (!isnan(num[i]) && !isnan(den[i]) && den[i] > 0)
			r[k++] = num[i] / den[i];
	bench_spread(r, k, s);
	free(r);
}

bool bench_spread_contains(const struct bench_spread *s, double x)
{
	if (!s->n || isnan(s->lo) || isnan(s->hi))
		return true;
	return s->lo <= x && x <= s->hi;
}

char *bench_spread_fmt(const struct bench_spread *s, const char *fmt, char *buf, size_t len)
{
	char a[32], b[32], c[32];

	if (!s->n) {
		snprintf(buf, len, "-");
		return buf;
	}
	snprintf(a, sizeof(a), fmt, s->median);
	if (s->n == 1) {
		snprintf(buf, len, "%s", a);
		return buf;
	}
	snprintf(b, sizeof(b), fmt, s->lo);
	snprintf(c, sizeof(c), fmt, s->hi);
	snprintf(buf, len, "%s [%s..%s]", a, b, c);
	return buf;
}

int bench_argmax(const double *v, size_t n)
{
	size_t i;
	int best = -1;

	for (i = 0; i < n; i++)
		if (!isnan(v[i]) && (best < 0 || v[i] > v[best]))
			best = i;
	return best;
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
