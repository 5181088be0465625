/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * attach --object: a BPF object of the user's with a bpf_mthp_ops map.
 * object.c is the pure part (which map to attach, whether a map follows
 * the counters convention of mthp_ops.h, the record pinned as "object"),
 * unit-tested; attach_object.c opens and loads with libbpf.
 */
#ifndef MTHPCTL_OBJECT_H
#define MTHPCTL_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define MTHPCTL_OPS_TYPE	"bpf_mthp_ops"

/* A struct_ops map of an object, as libbpf's open found it. */
struct mthpctl_ops_map {
	const char *name;
	const char *type;	/* the name of its BTF value type */
	bool link;		/* in SEC(".struct_ops.link") (BPF_F_LINK) */
};

/*
 * The map of m[0..n) to attach: the one bpf_mthp_ops map, or the one named
 * want (may be NULL). Its index, or -1 with a one-line message naming the
 * fix in err (file: how the message names the object).
 */
int mthpctl_pick_ops(const struct mthpctl_ops_map *m, size_t n, const char *want,
		     const char *file, char *err, size_t len);

/* A map of an object, for the counters convention. */
struct mthpctl_map_desc {
	const char *name;
	__u32 type, key_size, value_size, max_entries;
	const char *value_type;		/* its BTF value type's name; NULL: none */
	const char *first_type;		/* that of its first member; NULL: none */
};

/* Does the map hold counters status can read (mthp_ops.h: a per-CPU array
 * "totals" whose value is, or starts with, struct mthpctl_totals)? */
bool mthpctl_stats_convention(const struct mthpctl_map_desc *d);

/* FNV-1a of n bytes, 8 at a time (a whole word per step: the objects are
 * tens of KB and hashed on every attach). */
__u64 mthpctl_hash_bytes(const void *b, size_t n);

/*
 * Which object a cgroup runs (status' "object_hash", mthpctl-nri's
 * upgrade): mthpctl_hash_bytes() of the object's file, or of the built-in
 * policy's ELF, which mthpctl stores in the policy's .rodata as the
 * variable object_hash. Another build's .rodata may lay its variables out
 * otherwise: status finds the variable by name in the map's BTF, whose
 * DATASEC lists each variable's name, offset and size.
 */
struct mthpctl_sec_var {
	const char *name;
	__u32 offset, size;
};
/* The offset of the variable name, size bytes, among v[0..n), inside a
 * map value of value_size bytes; -1 if there is none (or only one of
 * another size, or one that does not fit in the value). */
long mthpctl_sec_var_find(const struct mthpctl_sec_var *v, size_t n, const char *name,
			  __u32 size, __u32 value_size);
/* The hash as status and version print it: 16 hex digits, NUL-terminated. */
#define MTHPCTL_OBJECT_ID_LEN	17
void mthpctl_object_id(char out[MTHPCTL_OBJECT_ID_LEN], __u64 hash);

/*
 * What mthpctl pins as "object" beside the link of an object's policy: a
 * frozen one-entry array map. Its size is a page, the most status reads.
 */
#define MTHPCTL_OBJECT_MAGIC	0x6d6f626aU	/* "mobj" */
#define MTHPCTL_OBJECT_STATS	(1U << 0)	/* a "totals" pin is its counters */
struct mthpctl_object_info {
	__u32 magic;
	__u32 flags;		/* MTHPCTL_OBJECT_* */
	__u64 hash;		/* mthpctl_hash_bytes() of the file when loaded */
	__u64 size;		/* its size in bytes */
	char ops[64];		/* the struct_ops map attached */
	char file[4096 - 88];	/* the file, as an absolute path */
};

/* Fill info; -1 if a name does not fit (nothing is truncated). */
int mthpctl_object_info_fill(struct mthpctl_object_info *info, const char *file,
			     const char *ops, __u64 hash, __u64 size, bool stats);
/* A record of this layout (magic, strings terminated)? */
bool mthpctl_object_info_valid(const struct mthpctl_object_info *info);

/* attach_object.c: the user's object, opened (no kernel object made) and
 * then loaded. Each returns an exit code, its error to the sink (NULL:
 * printed). */
struct bpf_object;
struct bpf_map;
struct mthpctl_kernel;
struct mthpctl_err_sink;
struct mthpctl_user_obj {
	struct bpf_object *obj;
	struct bpf_map *ops;		/* the bpf_mthp_ops map to attach */
	struct bpf_map *stats;		/* its "totals" of the convention; NULL: none */
	int info_fd;			/* the record's map, once loaded; else -1 */
	struct mthpctl_object_info info;
};
/* Open file and pick its map (ops: --ops or NULL). Errors to sink. */
int mthpctl_object_open(const char *file, const char *ops, struct mthpctl_user_obj *u,
			const struct mthpctl_err_sink *sink);
/* Load it, its map's value set, and make the record's map. */
int mthpctl_object_load(const struct mthpctl_kernel *k, struct mthpctl_user_obj *u,
			const struct mthpctl_err_sink *sink);
int mthpctl_object_ops_fd(const struct mthpctl_user_obj *u);
int mthpctl_object_stats_fd(const struct mthpctl_user_obj *u);	/* -1: none */
void mthpctl_object_close(struct mthpctl_user_obj *u);		/* any state */

#endif
