// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "parse.h"

/* Leading decimal digits of s into *v; returns the rest, NULL on error. */
static const char *parse_digits(const char *s, __u64 *v, int *err)
{
	__u64 n = 0;
	const char *p = s;

	*err = -EINVAL;
	if (!s || *s < '0' || *s > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = *p - '0';

		if (n > (~0ULL - d) / 10) {
			*err = -ERANGE;
			return NULL;
		}
		n = n * 10 + d;
	}
	*v = n;
	*err = 0;
	return p;
}

static int mul_check(__u64 v, __u64 m, __u64 *out)
{
	if (m && v > ~0ULL / m)
		return -ERANGE;
	*out = v * m;
	return 0;
}

struct unit {
	const char *name;
	__u64 mult;
};

/*
 * "N[.F]UNIT" -> N * mult + F * mult (exactly). A decimal fraction is
 * accepted when it comes to a whole number of the base unit (1.5s, 1.5G,
 * 0.5K; not 1.3B or 1.5ns): rounding would store a value the user did not
 * write. At most 9 fraction digits.
 */
static int parse_scaled(const char *s, const struct unit *u, size_t n, bool nocase,
			__u64 *out)
{
	__u64 v, frac = 0, scale = 1, whole, part;
	unsigned __int128 wide;
	const char *rest;
	int err;
	size_t i;

	rest = parse_digits(s, &v, &err);
	if (!rest)
		return err;
	if (*rest == '.') {
		const char *f = ++rest;

		for (; *rest >= '0' && *rest <= '9'; rest++) {
			if (rest - f >= 9)
				return -EINVAL;
			frac = frac * 10 + (__u64)(*rest - '0');
			scale *= 10;
		}
		if (rest == f)
			return -EINVAL;		/* "1." */
	}
	for (i = 0; i < n; i++) {
		if (nocase ? strcasecmp(rest, u[i].name) : strcmp(rest, u[i].name))
			continue;
		/* frac < 10^9 and mult < 2^41: the product fits 128 bits, and
		 * may exceed 64 while the value does not (0.999999999min) */
		err = mul_check(v, u[i].mult, &whole);
		if (err)
			return err;
		wide = (unsigned __int128)frac * u[i].mult;
		if (wide % scale)
			return -EINVAL;		/* not a whole byte or ns */
		part = (__u64)(wide / scale);	/* < mult */
		if (whole > ~0ULL - part)
			return -ERANGE;
		*out = whole + part;
		return 0;
	}
	return -EINVAL;
}

int mthpctl_parse_size(const char *s, __u64 *bytes)
{
	static const struct unit units[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1ULL << 10 }, { "KB", 1ULL << 10 }, { "KiB", 1ULL << 10 },
		{ "M", 1ULL << 20 }, { "MB", 1ULL << 20 }, { "MiB", 1ULL << 20 },
		{ "G", 1ULL << 30 }, { "GB", 1ULL << 30 }, { "GiB", 1ULL << 30 },
		{ "T", 1ULL << 40 }, { "TB", 1ULL << 40 }, { "TiB", 1ULL << 40 },
	};

	return parse_scaled(s, units, sizeof(units) / sizeof(units[0]), true, bytes);
}

int mthpctl_parse_duration(const char *s, __u64 *ns)
{
	static const struct unit units[] = {
		{ "ns", 1ULL }, { "us", 1000ULL }, { "ms", 1000000ULL },
		{ "s", 1000000000ULL }, { "min", 60000000000ULL },
	};

	return parse_scaled(s, units, sizeof(units) / sizeof(units[0]), false, ns);
}

char *mthpctl_format_size(__u64 bytes, char *buf, size_t len)
{
	static const char sfx[] = "KMGT";
	int i, best = -1;

	for (i = 0; i < 4 && bytes; i++)
		if (!(bytes & ((1ULL << (10 * (i + 1))) - 1)))
			best = i;
	if (best < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c",
			 (unsigned long long)(bytes >> (10 * (best + 1))), sfx[best]);
	return buf;
}

char *mthpctl_format_duration(__u64 ns, char *buf, size_t len)
{
	static const struct { const char *u; __u64 mult; } units[] = {
		{ "min", 60000000000ULL }, { "s", 1000000000ULL },
		{ "ms", 1000000ULL }, { "us", 1000ULL },
	};
	size_t i;

	for (i = 0; ns && i < sizeof(units) / sizeof(units[0]); i++)
		if (!(ns % units[i].mult)) {
			snprintf(buf, len, "%llu%s",
				 (unsigned long long)(ns / units[i].mult), units[i].u);
			return buf;
		}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

int mthpctl_size_to_order(__u64 size, __u64 page_size)
{
	int order;

	if (!page_size || size < page_size || size % page_size)
		return -EINVAL;
	for (order = 0; order < 63; order++)
		if ((page_size << order) == size)
			return order;
		else if ((page_size << order) > size || (page_size << order) == 0)
			break;
	return -EINVAL;
}
