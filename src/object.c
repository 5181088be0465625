// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* attach --object, the pure part: see object.h. */
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>

#include "mthp_ops.h"
#include "object.h"

/* "a, b, c" of the bpf_mthp_ops maps, for messages. */
static void names(const struct mthpctl_ops_map *m, size_t n, char *out, size_t len)
{
	size_t i, used = 0;
	int k;

	out[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		if (strcmp(m[i].type, MTHPCTL_OPS_TYPE))
			continue;
		k = snprintf(out + used, len - used, "%s%s", used ? ", " : "", m[i].name);
		if (k < 0)
			break;
		used += (size_t)k;
	}
}

int mthpctl_pick_ops(const struct mthpctl_ops_map *m, size_t n, const char *want,
		     const char *file, char *err, size_t len)
{
	size_t i, nr = 0;
	int found = -1;
	char list[512];

	for (i = 0; i < n; i++) {
		bool ours = !strcmp(m[i].type, MTHPCTL_OPS_TYPE);

		if (want ? !strcmp(m[i].name, want) : ours) {
			found = (int)i;
			nr += ours;
		}
	}
	names(m, n, list, sizeof(list));
	if (want && found < 0) {
		if (list[0])
			snprintf(err, len, "%s has no struct_ops map named '%s' (its bpf_mthp_ops maps: %s; "
				 "name one of them with --ops)", file, want, list);
		else
			snprintf(err, len, "%s has no struct_ops map named '%s', nor any of struct "
				 "bpf_mthp_ops (declare one: see mthp_ops.h)", file, want);
		return -1;
	}
	if (want && strcmp(m[found].type, MTHPCTL_OPS_TYPE)) {
		snprintf(err, len, "map '%s' of %s is a struct %s, not a struct bpf_mthp_ops "
			 "(name a bpf_mthp_ops map with --ops%s%s)", want, file, m[found].type,
			 list[0] ? ": " : "", list);
		return -1;
	}
	if (!want && !nr) {
		snprintf(err, len, "%s has no struct_ops map of struct bpf_mthp_ops (declare one in "
			 "SEC(\".struct_ops.link\"): see mthp_ops.h)", file);
		return -1;
	}
	if (!want && nr > 1) {
		snprintf(err, len, "%s has %zu bpf_mthp_ops maps (%s): name the one to attach with --ops",
			 file, nr, list);
		return -1;
	}
	if (!m[found].link) {
		/* a plain SEC(".struct_ops") map registers globally: this
		 * kernel attaches bpf_mthp_ops to cgroups through links only */
		snprintf(err, len, "map '%s' of %s is in SEC(\".struct_ops\"); a policy is linked to a "
			 "cgroup: put it in SEC(\".struct_ops.link\")", m[found].name, file);
		return -1;
	}
	return found;
}

/* The name that marks struct mthpctl_totals in an object's BTF. */
#define TOTALS_TYPE	"mthpctl_totals"

bool mthpctl_stats_convention(const struct mthpctl_map_desc *d)
{
	/* by type name, not only by size: a map that happens to be called
	 * "totals" must not be read as counters it does not hold */
	return d->name && !strcmp(d->name, MTHP_OPS_STATS_MAP_NAME) &&
	       d->type == BPF_MAP_TYPE_PERCPU_ARRAY &&
	       d->key_size == sizeof(__u32) && d->max_entries >= 1 &&
	       d->value_size >= sizeof(struct mthpctl_totals) &&
	       ((d->value_type && !strcmp(d->value_type, TOTALS_TYPE)) ||
		(d->first_type && !strcmp(d->first_type, TOTALS_TYPE)));
}

__u64 mthpctl_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	__u64 h = 0xcbf29ce484222325ULL, w;
	size_t i;

	for (i = 0; i < n; i += sizeof(w)) {
		w = 0;
		memcpy(&w, b + i, n - i < sizeof(w) ? n - i : sizeof(w));
		h = (h ^ w) * 0x100000001b3ULL;
	}
	return h ^ n;
}

int mthpctl_object_info_fill(struct mthpctl_object_info *info, const char *file,
			     const char *ops, __u64 hash, __u64 size, bool stats)
{
	memset(info, 0, sizeof(*info));
	if (strlen(file) >= sizeof(info->file) || strlen(ops) >= sizeof(info->ops))
		return -1;
	info->magic = MTHPCTL_OBJECT_MAGIC;
	info->flags = stats ? MTHPCTL_OBJECT_STATS : 0;
	info->hash = hash;
	info->size = size;
	strcpy(info->ops, ops);
	strcpy(info->file, file);
	return 0;
}

bool mthpctl_object_info_valid(const struct mthpctl_object_info *info)
{
	return info->magic == MTHPCTL_OBJECT_MAGIC && info->file[0] &&
	       memchr(info->file, '\0', sizeof(info->file)) &&
	       memchr(info->ops, '\0', sizeof(info->ops));
}

long mthpctl_sec_var_find(const struct mthpctl_sec_var *v, size_t n, const char *name,
			  __u32 size, __u32 value_size)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!v[i].name || strcmp(v[i].name, name))
			continue;
		if (v[i].size != size || v[i].offset > value_size || size > value_size - v[i].offset)
			return -1;
		return v[i].offset;
	}
	return -1;
}

void mthpctl_object_id(char out[MTHPCTL_OBJECT_ID_LEN], __u64 hash)
{
	snprintf(out, MTHPCTL_OBJECT_ID_LEN, "%016llx", (unsigned long long)hash);
}
