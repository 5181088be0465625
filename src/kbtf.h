/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The running kernel's BTF without libbpf's parser: mthpctl needs a few
 * names and two member offsets, and parsing and validating all of it costs
 * ~7 ms natively, ~10x that under emulation, once per run. The types are
 * walked once, comparing the names of structs and functions only. Pure (no
 * libbpf): src/bpfutil.c maps or reads the file, tests/fuzz/fuzz_btf.c
 * feeds it anything.
 */
#ifndef MTHPCTL_KBTF_H
#define MTHPCTL_KBTF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/btf.h>
#include <linux/types.h>

struct kbtf {
	const char *data;		/* 4-byte aligned */
	size_t size;
	const struct btf_header *h;
};

/* Check the header: magic, sections inside size, the type section 4-byte
 * aligned, the string section ending in a NUL. 0 or -EINVAL. */
int kbtf_init(struct kbtf *b, const void *data, size_t size);

struct kbtf_want {
	const char *name;
	__u32 kind;			/* BTF_KIND_STRUCT or BTF_KIND_FUNC */
	const struct btf_type *found;	/* with its members inside the data */
	__u32 id;			/* the found type's BTF id */
};

/* One walk over all types; fills want[i].found. 0 or -EINVAL (a type of
 * unknown kind, or one running past the type section). */
int kbtf_find(const struct kbtf *b, struct kbtf_want *want, int n);

/* Byte offset of a member of a struct found by kbtf_find, or -ENOENT (t
 * NULL or not a struct). */
int kbtf_member_off(const struct kbtf *b, const struct btf_type *t, const char *member);

/* What mthpctl looks for: the series' struct_ops and kfuncs, bpf_wq, and
 * the member offsets attach and status need. */
struct kbtf_features {
	bool mthp_ops;		/* bpf_mthp_ops and its struct_ops value type */
	bool psi_kfunc;		/* bpf_cgroup_psi_stall */
	bool memcg_kfuncs;	/* bpf_get_mem_cgroup */
	bool wq;		/* bpf_wq_start */
	int ops_data_off;	/* of data in bpf_struct_ops_bpf_mthp_ops, or -ENOENT */
	int ops_fn_off;		/* of choose_orders in bpf_mthp_ops, or -ENOENT */
	__u32 ops_type_id;	/* BTF id of bpf_mthp_ops (BPF_PROG_QUERY); 0: none */
};
/* 0, or -EINVAL (f: nothing found) when the walk fails. */
int kbtf_features(const struct kbtf *b, struct kbtf_features *f);

/*
 * The features, kept for the rest of the boot (mthpctl_probe_kernel() puts
 * them in a file under /run): the kernel's BTF cannot change before the
 * next boot, and the walk takes tens of ms under TCG, most of a status or
 * an attach that shares. A record is KBTF_CACHE_SIZE bytes, tagged with a
 * key that names the BTF file walked: the boot id and the file's device,
 * inode and size (a BTF file bind-mounted over it is another file).
 */
#define KBTF_CACHE_SIZE		112
#define KBTF_CACHE_KEY_MAX	88	/* with its NUL */
void kbtf_cache_put(const struct kbtf_features *f, const char *key,
		    unsigned char rec[KBTF_CACHE_SIZE]);
/* 0 and *f, or -EINVAL: not a record for key (another boot or file), or
 * damaged. */
int kbtf_cache_get(const void *rec, size_t len, const char *key, struct kbtf_features *f);

#endif
