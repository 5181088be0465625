/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef MTHPCTL_H
#define MTHPCTL_H

#include <argp.h>
#include <stdbool.h>
#include <linux/types.h>

#include "json.h"
#include "needs.h"
#include "mthp_policy.h"

/* Exit codes, documented in mthpctl(8). */
enum {
	MTHPCTL_EXIT_OK = 0,
	MTHPCTL_EXIT_USAGE = 1,		/* bad command line or option value */
	MTHPCTL_EXIT_PERM = 2,		/* not root / missing capability */
	MTHPCTL_EXIT_UNSUPPORTED = 3,	/* kernel lacks bpf_mthp_ops / BTF */
	MTHPCTL_EXIT_CGROUP = 4,	/* cgroup path missing/invalid */
	MTHPCTL_EXIT_STATE = 5,		/* already attached / not attached */
	MTHPCTL_EXIT_BPFFS = 6,		/* bpffs not mounted */
	MTHPCTL_EXIT_FAIL = 7,		/* load/attach/pin failed otherwise */
	MTHPCTL_EXIT_CONFIG = 8,	/* apply: the configuration is refused */
};

struct mthpctl_global {
	bool json, pretty, verbose, version;
	struct jw jw;
	/* -V: what version prints (version.c), set by main() */
	int (*print_version)(void);
};
extern struct mthpctl_global g;
extern const struct argp mthpctl_global_argp;
extern const struct argp_child mthpctl_subcommand_children[];

/* Print a one-line error (text on stderr, {"error": ...} on stdout with -j);
 * returns code. */
int mthpctl_error(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Where attach, detach and their checks send an error: NULL prints it as
 * mthpctl_error() does; a sink keeps the message, unprinted, for a caller
 * that reports it inside its own output (bench's notes, apply's JSON).
 */
struct mthpctl_err_sink {
	char *msg;
	size_t len;
};
int mthpctl_fail(const struct mthpctl_err_sink *sink, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void mthpctl_json_begin(void);	/* jw on stdout with -p honoured */

/*
 * The options of a built-in policy, once: X(FIELD, member, name, key, arg,
 * help). struct mthpctl_policy_spec, enum mthpctl_spec_field, attach's
 * command-line options (key: its short option, or 0), apply's configuration
 * keys (conf.c) and bench's --policy words (mthpctl_policy_spec_words())
 * are generated from it.
 */
#define MTHPCTL_SPEC_OPTIONS(X)								\
	X(MTHPCTL_SPEC_POLICY, policy, "policy", 'P', "NAME",				\
	  "auto (default), fixed, never or simple")					\
	X(MTHPCTL_SPEC_THRESHOLD, threshold, "threshold", 0, "DURATION",		\
	  "auto, simple: memory-full stall per window meaning pressure (default 100ms)")	\
	X(MTHPCTL_SPEC_WINDOW, window, "window", 0, "DURATION",				\
	  "auto, simple: sampling window, 10ms..60s (default 1s)")			\
	X(MTHPCTL_SPEC_MIN_USAGE, min_usage, "min-usage", 0, "SIZE",			\
	  "auto: anon+shmem below which only 4K is used, 0 = off (default 16M)")	\
	X(MTHPCTL_SPEC_MAX_SIZE, max_size, "max-size", 0, "SIZE",			\
	  "largest folio size allowed (required for fixed, optional for auto and simple)")
#define MTHPCTL_SPEC_MEMBER(id, member, name, key, arg, help)	const char *member;
#define MTHPCTL_SPEC_ID(id, member, name, key, arg, help)	id,
/* A policy as its options give it (attach's command line, a section of
 * apply's configuration, bench's --policy): strings as typed, NULL when not
 * given. */
struct mthpctl_policy_spec {
	MTHPCTL_SPEC_OPTIONS(MTHPCTL_SPEC_MEMBER)
};
/* Which option mthpctl_policy_build() refused (MTHPCTL_SPEC_NONE: a
 * combination of them). */
enum mthpctl_spec_field {
	MTHPCTL_SPEC_NONE = -1,
	MTHPCTL_SPEC_OPTIONS(MTHPCTL_SPEC_ID)
	MTHPCTL_NR_SPEC
};
/* The option f of spec s, and its name ("max-size"). */
static inline const char **mthpctl_spec_option(struct mthpctl_policy_spec *s,
					       enum mthpctl_spec_field f)
{
#define MTHPCTL_SPEC_PTR(id, member, name, key, arg, help)	[id] = &s->member,
	const char **opt[] = { MTHPCTL_SPEC_OPTIONS(MTHPCTL_SPEC_PTR) };
#undef MTHPCTL_SPEC_PTR

	return opt[f];
}
static inline const char *mthpctl_spec_option_name(enum mthpctl_spec_field f)
{
#define MTHPCTL_SPEC_NAME(id, member, name, key, arg, help)	[id] = name,
	static const char *const names[] = { MTHPCTL_SPEC_OPTIONS(MTHPCTL_SPEC_NAME) };
#undef MTHPCTL_SPEC_NAME

	return names[f];
}
/* policy_spec.c, pure: validate a spec into parameters for a kernel whose
 * PMD order is top_order. On a refusal: MTHPCTL_EXIT_USAGE, the message in
 * err (option names written with opt_prefix: "--" for attach, "" for a
 * configuration file) and the option at fault in *field (may be NULL). */
int mthpctl_policy_build(const struct mthpctl_policy_spec *s, __u32 top_order, __u64 page_size,
			 const char *opt_prefix, struct mthpctl_params *p, char *err, size_t len,
			 enum mthpctl_spec_field *field);
/* A policy as words: its name, then the options attach takes for a
 * built-in policy (--threshold, --window, --min-usage, --max-size, each
 * with its value after '=' or as the next word, --private and --replace;
 * unique prefixes accepted, as attach's parser accepts them), as bench's
 * --policy "auto --threshold 50ms" gives it. The spec's strings point into
 * words; *flags: MTHPCTL_ATTACH_*. 0, or MTHPCTL_EXIT_USAGE with why in err.
 * Pure (policy_spec.c). */
int mthpctl_policy_spec_words(char *const words[], int nw, struct mthpctl_policy_spec *s,
			      unsigned int *flags, char *err, size_t len);
/* The same parameters (what attaching with either would load)? */
bool mthpctl_params_equal(const struct mthpctl_params *a, const struct mthpctl_params *b);

/* Parameters as text ("auto (window 1s, threshold 100ms, min-usage 16M)"). */
char *mthpctl_params_str(const struct mthpctl_params *p, char *buf, size_t len);
void mthpctl_params_json(struct jw *w, const struct mthpctl_params *p);
const char *mthpctl_policy_name(__u32 policy);
/* The sizes of an orders mask (bit N: order N, above the base page) as
 * "64K 2M", or NONE when it has none; as a JSON array of KiB under KEY. */
char *mthpctl_size_list(__u64 orders, const char *none, char *buf, size_t len);
void mthpctl_size_list_json(struct jw *w, const char *key, __u64 orders);
/* "thp_sizes_kb": {"always": [...], "madvise": [...], "never": [...]} */
struct mthpctl_host_sizes;
void mthpctl_host_sizes_json(struct jw *w, const struct mthpctl_host_sizes *h);
/* The sizes a policy with parameters P may grant on host H: those left at
 * "madvise", up to its cap (none for never). */
__u64 mthpctl_policy_grants(const struct mthpctl_host_sizes *h, const struct mthpctl_params *p);
const char *mthpctl_reason_name(__u32 reason);
const char *mthpctl_tva_name(__u32 tva);

/* bpfutil.c */
struct mthpctl_kernel {
	bool probed;		/* false: not looked at (the rest unknown) */
	bool btf;		/* /sys/kernel/btf/vmlinux loadable */
	struct mthpctl_features feat;	/* what it has (nothing without BTF) */
};
#define MTHPCTL_VMLINUX_BTF	"/sys/kernel/btf/vmlinux"
/* What the running kernel's BTF offers mthpctl (libbpf's BTF API). */
void mthpctl_probe_kernel(struct mthpctl_kernel *k);
/* 0, or MTHPCTL_EXIT_PERM / MTHPCTL_EXIT_BPFFS with why to sink */
int mthpctl_check_caps(const struct mthpctl_err_sink *sink);
int mthpctl_check_bpffs(const struct mthpctl_err_sink *sink);
void mthpctl_libbpf_setup(void);

/* attach.c: the hash of the built-in policy's BPF object (object.h), which
 * it stores in each policy's .rodata: which build a cgroup runs. */
__u64 mthpctl_builtin_object_hash(void);

struct mthpctl_link {
	__u32 id, type, map_id;
	__u64 cgroup_id;
};
int mthpctl_link_query(int fd, struct mthpctl_link *l);	/* 0 or -errno */
/* BPF_PROG_QUERY of the struct_ops of BTF type type_id attached to the
 * cgroup (effective: in effect there, in call order): up to *cnt map ids
 * into map_ids; *cnt becomes how many there are. 0 or -errno. */
int mthpctl_struct_ops_query(int cg_fd, __u32 type_id, bool effective, __u32 *map_ids,
			     __u32 *cnt);
struct bpf_map_info;
bool mthpctl_map_info(int fd, struct bpf_map_info *info);	/* false: no map */
/* A policy's per-CPU totals map (its "totals" pin), summed over CPUs. */
struct mthpctl_totals;
bool mthpctl_read_totals(int fd, struct mthpctl_totals *t, __u32 *map_id);
/* The BPF object pinned as obj in pin directory dir: an fd, or -errno. */
int mthpctl_pin_get(const char *dir, const char *obj);
/* Remove a pin directory and the objects mthpctl puts in it. 0 or -errno. */
int mthpctl_rm_pin_dir(const char *dir);
int mthpctl_ensure_pin_root(void);
/* Take the lock that serializes attach and detach (held until close or
 * exit; create: make the pin root first). An fd, or -errno (-ENOENT: no
 * pin root and !create). */
int mthpctl_lock_pins(bool create);
/* Store the struct_ops map value (program fd in choose_orders, at the offsets
 * mthpctl_probe_kernel() found). 0 or -errno. */
int mthpctl_struct_ops_ready(const struct mthpctl_kernel *k, int map_fd, __u32 value_size,
			     int prog_fd);

/* What the kernel keeps in the value of a struct_ops map: the id of the
 * program in its choose_orders slot (0: none, or the probe found no offsets
 * in k) and how many links the map has. 0 or -errno. */
int mthpctl_struct_ops_read(const struct mthpctl_kernel *k, int map_fd, __u32 *prog_id,
			    __u32 *links);

/* MTHPCTL_DEBUG_TIMING=1 in the environment: mthpctl_timing() prints, on
 * stderr, the milliseconds since the previous call (or since start).
 * MTHPCTL_DEBUG_KILL_AT=STEP: the process kills itself (SIGKILL) where
 * that step ends, for the crash tests. */
void mthpctl_timing(const char *step);
double mthpctl_now_ms(void);	/* CLOCK_MONOTONIC */

/* attach.c: attach (or with MTHPCTL_ATTACH_REPLACE replace) the policy of
 * parameters p to the cgroup directory; errors to sink (NULL: printed). An
 * exit code. */
#define MTHPCTL_ATTACH_REPLACE	(1U << 0)
#define MTHPCTL_ATTACH_PRIVATE	(1U << 1)	/* never share a policy object */
/* The flags as attach's switches (and bench's --policy words), once:
 * X(FLAG, name, help). */
#define MTHPCTL_ATTACH_SWITCHES(X)							\
	X(MTHPCTL_ATTACH_REPLACE, "replace",						\
	  "swap the policy of an attached cgroup atomically")				\
	X(MTHPCTL_ATTACH_PRIVATE, "private",						\
	  "load a policy object of its own (own counters) instead of sharing the one "	\
	  "of a cgroup attached with the same parameters")
struct mthpctl_attach_result {
	__u64 cgroup_id;
	__u32 link_id;
	__u32 ops_map_id;	/* the policy object's struct_ops map */
	bool replaced;
	bool shared;		/* linked to the object of another cgroup */
	__u64 shared_with;	/* that cgroup's id */
	char ops[64];		/* --object: the struct_ops map attached */
	char pin[4096];
};
/* bpfutil.c: a libbpf or kernel error of loading or attaching (-errno) as
 * the exit code and message of attach, what: the step that failed; to sink. */
int mthpctl_load_error(const struct mthpctl_err_sink *sink, int err, const char *what);
/* attach --object: FILE's bpf_mthp_ops map (ops: the map's name, or NULL
 * when FILE has one), loaded for this cgroup alone, never shared. */
int mthpctl_attach_object(const char *cgroup, const char *file, const char *ops, unsigned int flags,
			  struct mthpctl_attach_result *res, const struct mthpctl_err_sink *sink);
/* The PMD order of this kernel (hpage_pmd_size): the top of auto's ladder. */
__u32 mthpctl_pmd_order(void);
int mthpctl_attach(const char *cgroup, const struct mthpctl_params *p, unsigned int flags,
		   struct mthpctl_attach_result *res, const struct mthpctl_err_sink *sink);
/*
 * Many cgroups in one process (apply): a session makes the checks of the
 * machine (capabilities, bpffs, the kernel's BTF) once and keeps the
 * policy objects it loaded or found, so that a further cgroup with
 * parameters seen before costs a link and its pins, not a skeleton open
 * and a search through the pins. mthpctl_attach() is a session of one.
 */
struct mthpctl_attach_session;
struct mthpctl_attach_session *mthpctl_attach_session_new(void);	/* NULL: no memory */
void mthpctl_attach_session_free(struct mthpctl_attach_session *s);
int mthpctl_attach_in(struct mthpctl_attach_session *s, const char *cgroup,
		      const struct mthpctl_params *p, unsigned int flags,
		      struct mthpctl_attach_result *res, const struct mthpctl_err_sink *sink);

/* detach.c: detach the policy of the cgroup directory (*id: its cgroup
 * id), or of cgroup id (name: how messages call it); errors to sink (NULL:
 * printed). An exit code (MTHPCTL_EXIT_STATE: it has none). */
int mthpctl_detach(const char *cgroup, __u64 *id, const struct mthpctl_err_sink *sink);
int mthpctl_detach_id(__u64 id, const char *name, const struct mthpctl_err_sink *sink);

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_apply(int argc, char **argv);	/* apply.c */
int cmd_bench(int argc, char **argv);	/* bench.c */
int cmd_version(int argc, char **argv);
/* What version and -V print; an exit code (version.c). */
int mthpctl_print_version(void);

#endif
