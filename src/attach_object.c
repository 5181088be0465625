// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * attach --object FILE [--ops NAME]: a policy object of the user's. Opened
 * with libbpf (nothing reaches the kernel until the map to attach is known
 * and the object checked), its one bpf_mthp_ops map loaded, the program in
 * its choose_orders slot stored in the map's value, and a record of where
 * it came from made for the "object" pin. attach.c links and pins it as it
 * does the built-in policy.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "mthp_ops.h"
#include "mthpctl.h"
#include "object.h"

/* The name of the type id of btf, typedefs and modifiers skipped ("" for
 * an anonymous type, NULL for none). */
static const char *type_name(const struct btf *btf, __u32 id)
{
	const struct btf_type *t;
	int r;

	if (!btf || !id)
		return NULL;
	r = btf__resolve_type(btf, id);
	t = btf__type_by_id(btf, r < 0 ? id : (__u32)r);
	return t ? btf__name_by_offset(btf, t->name_off) : NULL;
}

/* The object's struct_ops maps into m (at most max); how many. */
static size_t ops_maps(struct bpf_object *obj, struct mthpctl_ops_map *m, struct bpf_map **maps,
		       size_t max)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;
	const char *t;
	size_t n = 0;

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS || n == max)
			continue;
		t = type_name(btf, bpf_map__btf_value_type_id(map));
		m[n].name = bpf_map__name(map);
		m[n].type = t ? t : "";
		m[n].link = bpf_map__map_flags(map) & BPF_F_LINK;
		maps[n++] = map;
	}
	return n;
}

/* The object's "totals" map, if it follows the counters convention. */
static struct bpf_map *stats_map(struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map = bpf_object__find_map_by_name(obj, MTHP_OPS_STATS_MAP_NAME);
	struct mthpctl_map_desc d = {};
	const struct btf_type *t;
	__u32 vid;

	if (!map)
		return NULL;
	vid = bpf_map__btf_value_type_id(map);
	d.name = bpf_map__name(map);
	d.type = bpf_map__type(map);
	d.key_size = bpf_map__key_size(map);
	d.value_size = bpf_map__value_size(map);
	d.max_entries = bpf_map__max_entries(map);
	d.value_type = type_name(btf, vid);
	t = btf && vid ? btf__type_by_id(btf, btf__resolve_type(btf, vid)) : NULL;
	if (t && btf_is_struct(t) && btf_vlen(t))
		d.first_type = type_name(btf, btf_members(t)[0].type);
	return mthpctl_stats_convention(&d) ? map : NULL;
}

/* Hash and size of the file (mapped: a read of what libbpf read). */
static int file_hash(const char *path, __u64 *hash, __u64 *size)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	*hash = mthpctl_hash_bytes(p, st.st_size);
	*size = st.st_size;
	munmap(p, st.st_size);
	return 0;
}

int mthpctl_object_open(const char *file, const char *ops, struct mthpctl_user_obj *u,
			const struct mthpctl_err_sink *sink)
{
	struct mthpctl_ops_map m[32];
	struct bpf_map *maps[32];
	char err[1024], *real;
	__u64 hash = 0, size = 0;
	size_t n, i;
	int pick;

	memset(u, 0, sizeof(*u));
	u->info_fd = -1;
	real = realpath(file, NULL);
	if (!real || file_hash(real, &hash, &size)) {
		free(real);
		return mthpctl_fail(sink, MTHPCTL_EXIT_USAGE, "cannot read %s: %s (name a BPF object file, "
				    "e.g. one built with clang -target bpf)", file, strerror(errno));
	}
	u->obj = bpf_object__open_file(real, NULL);
	if (!u->obj) {
		char why[128];

		/* libbpf's own codes (not an ELF file, ...) are above errno's */
		libbpf_strerror(errno, why, sizeof(why));
		free(real);
		return mthpctl_fail(sink, MTHPCTL_EXIT_USAGE, "%s is not a BPF object libbpf can open: %s "
				    "(name a BPF object file, e.g. one built with clang -target bpf)",
				    file, why);
	}
	n = ops_maps(u->obj, m, maps, 32);
	pick = mthpctl_pick_ops(m, n, ops, file, err, sizeof(err));
	if (pick < 0) {
		free(real);
		return mthpctl_fail(sink, MTHPCTL_EXIT_USAGE, "%s", err);
	}
	/* only the map to attach is created, and with it only the programs
	 * it refers to (libbpf leaves the others unloaded) */
	for (i = 0; i < n; i++)
		bpf_map__set_autocreate(maps[i], (int)i == pick);
	u->ops = maps[pick];
	u->stats = stats_map(u->obj);
	if (mthpctl_object_info_fill(&u->info, real, m[pick].name, hash, size, u->stats)) {
		free(real);
		return mthpctl_fail(sink, MTHPCTL_EXIT_USAGE, "the path of %s is too long for its record "
				    "(at most %zu bytes: move it)", file, sizeof(u->info.file) - 1);
	}
	free(real);
	return 0;
}

/* The program in the map's choose_orders slot: libbpf keeps a struct
 * bpf_program pointer there in the map's initial value (the "shadow
 * type" a skeleton exposes), at the member's offset in the object's BTF. */
static struct bpf_program *choose_prog(struct mthpctl_user_obj *u)
{
	const struct btf *btf = bpf_object__btf(u->obj);
	const struct btf_member *mb;
	const struct btf_type *t;
	struct bpf_program *prog = NULL;
	size_t sz = 0;
	char *data;
	__u32 i;

	t = btf__type_by_id(btf, bpf_map__btf_value_type_id(u->ops));
	data = bpf_map__initial_value(u->ops, &sz);
	if (!t || !data || !btf_is_struct(t))
		return NULL;
	for (i = 0, mb = btf_members(t); i < btf_vlen(t); i++, mb++) {
		__u32 off = btf_member_bit_offset(t, i) / 8;

		if (strcmp(btf__name_by_offset(btf, mb->name_off), "choose_orders") ||
		    off + sizeof(prog) > sz)
			continue;
		memcpy(&prog, data + off, sizeof(prog));
	}
	return prog;
}

int mthpctl_object_load(const struct mthpctl_kernel *k, struct mthpctl_user_obj *u,
			const struct mthpctl_err_sink *sink)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_RDONLY_PROG);
	struct bpf_program *prog;
	__u32 zero = 0;
	int err;

	prog = choose_prog(u);
	if (!prog)
		return mthpctl_fail(sink, MTHPCTL_EXIT_USAGE, "map '%s' of %s has no choose_orders program "
				    "(set .choose_orders = (void *)your_prog: see mthp_ops.h)",
				    u->info.ops, u->info.file);
	err = bpf_object__load(u->obj);
	if (err)
		return mthpctl_load_error(sink, err, "loading the BPF object failed");
	mthpctl_timing("load");
	err = mthpctl_struct_ops_ready(k, bpf_map__fd(u->ops), bpf_map__value_size(u->ops),
				       bpf_program__fd(prog));
	if (err)
		return mthpctl_load_error(sink, err, "preparing the policy failed");
	/* the record, frozen: status trusts what it says of the pins */
	u->info_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mthpctl_object", sizeof(zero),
				    sizeof(u->info), 1, &mopts);
	if (u->info_fd < 0 || bpf_map_update_elem(u->info_fd, &zero, &u->info, 0) ||
	    bpf_map_freeze(u->info_fd))
		return mthpctl_load_error(sink, -errno, "recording the object failed");
	return 0;
}

int mthpctl_object_ops_fd(const struct mthpctl_user_obj *u)
{
	return bpf_map__fd(u->ops);
}

int mthpctl_object_stats_fd(const struct mthpctl_user_obj *u)
{
	return u->stats ? bpf_map__fd(u->stats) : -1;
}

void mthpctl_object_close(struct mthpctl_user_obj *u)
{
	if (u->info_fd >= 0)
		close(u->info_fd);
	u->info_fd = -1;
	bpf_object__close(u->obj);
	u->obj = NULL;
}
