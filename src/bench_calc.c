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

static int to_double(const char *s, double *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (*end || errno || isnan(*v) || *v < 0)
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

int bench_parse_high_list(const char *s, __u64 *out, int max)
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
		if (!strcmp(item, "max")) {
			v = BENCH_HIGH_MAX;
		} else if (mthpctl_parse_size(item, &v) || !v) {
			ret = -EINVAL;
			break;
		}
		out[n++] = v;
	}
	free(copy);
	return ret ? ret : n;
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
