// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pin.h"

const char *const mthpctl_pin_objs[] = { "link", "conf", "cgstate", "totals", "sampler", "pending", "object",
					   "prog", NULL };

int mthpctl_pin_dir(const char *root, __u64 id, const char *suffix,
		    char *out, size_t len)
{
	int n = snprintf(out, len, "%s/cg-%llu%s", root, (unsigned long long)id,
			 suffix ? suffix : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int mthpctl_pin_path(const char *dir, const char *obj, char *out, size_t len)
{
	int i, n;

	for (i = 0; mthpctl_pin_objs[i]; i++)
		if (!strcmp(obj, mthpctl_pin_objs[i]))
			break;
	if (!mthpctl_pin_objs[i])
		return -EINVAL;
	n = snprintf(out, len, "%s/%s", dir, obj);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Parse "cg-<canonical id>", return pointer past the digits or NULL. */
static const char *parse_id(const char *name, __u64 *id)
{
	const char *p;
	__u64 v = 0;

	if (strncmp(name, "cg-", 3))
		return NULL;
	p = name + 3;
	if (*p < '1' || *p > '9')	/* no empty, no leading zero, no 0 */
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (~0ULL - (*p - '0')) / 10)
			return NULL;
		v = v * 10 + (*p - '0');
	}
	*id = v;
	return p;
}

int mthpctl_pin_parse(const char *name, __u64 *id)
{
	const char *p = parse_id(name, id);

	return p && !*p ? 0 : -EINVAL;
}

int mthpctl_pin_is_leftover(const char *name)
{
	__u64 id;
	const char *p = parse_id(name, &id);

	return p && *p == '_' && p[1];
}
