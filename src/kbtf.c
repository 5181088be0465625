// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include "kbtf.h"

int kbtf_init(struct kbtf *b, const void *data, size_t size)
{
	const struct btf_header *h = data;
	__u64 types, strs;

	memset(b, 0, sizeof(*b));
	if (size < sizeof(*h) || (unsigned long)data % 4)
		return -EINVAL;
	if (h->magic != BTF_MAGIC || h->hdr_len < sizeof(*h))
		return -EINVAL;
	types = (__u64)h->hdr_len + h->type_off;
	strs = (__u64)h->hdr_len + h->str_off;
	if (types + h->type_len > size || strs + h->str_len > size || types % 4 ||
	    !h->str_len || ((const char *)data)[strs + h->str_len - 1])
		return -EINVAL;
	b->data = data;
	b->size = size;
	b->h = h;
	return 0;
}

/* The string section ends in a NUL (kbtf_init): every name is a C string. */
static const char *kbtf_str(const struct kbtf *b, __u32 off)
{
	if (off >= b->h->str_len)
		return "";
	return b->data + b->h->hdr_len + b->h->str_off + off;
}

/* Bytes that follow struct btf_type for a type of this kind; -1: unknown. */
static long kbtf_extra(const struct btf_type *t)
{
	__u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: return 4;
	case BTF_KIND_ARRAY: return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(struct btf_var);
	case BTF_KIND_DATASEC: return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG: return sizeof(struct btf_decl_tag);
	case BTF_KIND_ENUM64: return (long)vlen * sizeof(struct btf_enum64);
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
		return 0;
	default: return -1;
	}
}

int kbtf_find(const struct kbtf *b, struct kbtf_want *want, int n)
{
	const char *p = b->data + b->h->hdr_len + b->h->type_off;
	size_t left_bytes = b->h->type_len;
	int i, left = n;
	__u32 id = 1;		/* vmlinux BTF: type ids count from 1 */

	for (; left_bytes >= sizeof(struct btf_type) && left; id++) {
		const struct btf_type *t = (const void *)p;
		__u32 kind = BTF_INFO_KIND(t->info);
		long extra = kbtf_extra(t);

		if (extra < 0 || (size_t)extra > left_bytes - sizeof(*t))
			return -EINVAL;
		if ((kind == BTF_KIND_STRUCT || kind == BTF_KIND_FUNC) && t->name_off) {
			const char *name = kbtf_str(b, t->name_off);

			for (i = 0; i < n; i++)
				if (!want[i].found && want[i].kind == kind &&
				    name[0] == want[i].name[0] && !strcmp(name, want[i].name)) {
					want[i].found = t;
					want[i].id = id;
					left--;
				}
		}
		p += sizeof(*t) + extra;
		left_bytes -= sizeof(*t) + extra;
	}
	return 0;
}

int kbtf_member_off(const struct kbtf *b, const struct btf_type *t, const char *member)
{
	const struct btf_member *m;
	__u32 i, off;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT)
		return -ENOENT;		/* only a struct's vlen counts members */
	m = (const void *)(t + 1);
	for (i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		if (strcmp(kbtf_str(b, m->name_off), member))
			continue;
		off = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		return off / 8;
	}
	return -ENOENT;
}

int kbtf_features(const struct kbtf *b, struct kbtf_features *f)
{
	struct kbtf_want w[] = {
		{ "bpf_mthp_ops", BTF_KIND_STRUCT },
		{ "bpf_struct_ops_bpf_mthp_ops", BTF_KIND_STRUCT },
		{ "bpf_cgroup_psi_stall", BTF_KIND_FUNC },
		{ "bpf_get_mem_cgroup", BTF_KIND_FUNC },
		{ "bpf_wq_start", BTF_KIND_FUNC },
	};

	memset(f, 0, sizeof(*f));
	f->ops_data_off = f->ops_fn_off = -ENOENT;
	if (kbtf_find(b, w, sizeof(w) / sizeof(w[0])))
		return -EINVAL;
	f->mthp_ops = w[0].found && w[1].found;
	f->psi_kfunc = w[2].found;
	f->memcg_kfuncs = w[3].found;
	f->wq = w[4].found;
	f->ops_data_off = kbtf_member_off(b, w[1].found, "data");
	f->ops_fn_off = kbtf_member_off(b, w[0].found, "choose_orders");
	f->ops_type_id = w[0].found ? w[0].id : 0;
	return 0;
}

/* Layout of a record: magic, key (NUL padded), feature bits, offsets. */
#define KBTF_CACHE_MAGIC	"mthpkbc2"
enum { CACHE_ID = 8, CACHE_BITS = CACHE_ID + KBTF_CACHE_KEY_MAX, CACHE_DATA_OFF = CACHE_BITS + 4,
       CACHE_FN_OFF = CACHE_DATA_OFF + 4, CACHE_TYPE_ID = CACHE_FN_OFF + 4,
       CACHE_END = CACHE_TYPE_ID + 4 };
_Static_assert(CACHE_END <= KBTF_CACHE_SIZE, "record too small");

void kbtf_cache_put(const struct kbtf_features *f, const char *key,
		    unsigned char rec[KBTF_CACHE_SIZE])
{
	__u32 bits = f->mthp_ops | f->psi_kfunc << 1 | f->memcg_kfuncs << 2 | f->wq << 3;
	__s32 data_off = f->ops_data_off, fn_off = f->ops_fn_off;

	memset(rec, 0, KBTF_CACHE_SIZE);
	memcpy(rec, KBTF_CACHE_MAGIC, 8);
	strncpy((char *)rec + CACHE_ID, key, KBTF_CACHE_KEY_MAX - 1);
	memcpy(rec + CACHE_BITS, &bits, 4);
	memcpy(rec + CACHE_DATA_OFF, &data_off, 4);
	memcpy(rec + CACHE_FN_OFF, &fn_off, 4);
	memcpy(rec + CACHE_TYPE_ID, &f->ops_type_id, 4);
}

/* An offset kbtf_member_off() can give for a struct_ops member. */
static bool cache_off_ok(__s32 off)
{
	return off == -ENOENT || (off >= 0 && off < 65536);
}

int kbtf_cache_get(const void *rec, size_t len, const char *key, struct kbtf_features *f)
{
	const unsigned char *r = rec;
	char id[KBTF_CACHE_KEY_MAX] = "";
	__s32 data_off, fn_off;
	__u32 bits, type_id;

	if (len != KBTF_CACHE_SIZE || memcmp(r, KBTF_CACHE_MAGIC, 8) || !key[0] ||
	    strlen(key) >= KBTF_CACHE_KEY_MAX)
		return -EINVAL;
	strncpy(id, key, KBTF_CACHE_KEY_MAX - 1);
	if (memcmp(r + CACHE_ID, id, KBTF_CACHE_KEY_MAX))
		return -EINVAL;
	memcpy(&bits, r + CACHE_BITS, 4);
	memcpy(&data_off, r + CACHE_DATA_OFF, 4);
	memcpy(&fn_off, r + CACHE_FN_OFF, 4);
	memcpy(&type_id, r + CACHE_TYPE_ID, 4);
	/* what a probe can give: bpf_mthp_ops comes with its type id */
	if (bits & ~0xfU || !cache_off_ok(data_off) || !cache_off_ok(fn_off) ||
	    ((bits & 1) && !type_id))
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->mthp_ops = bits & 1;
	f->psi_kfunc = bits >> 1 & 1;
	f->memcg_kfuncs = bits >> 2 & 1;
	f->wq = bits >> 3 & 1;
	f->ops_data_off = data_off;
	f->ops_fn_off = fn_off;
	f->ops_type_id = type_id;
	return 0;
}
