/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the headers mthpctl is built against may lack, in one place (the way
 * sched_ext's tools keep theirs in compat.h). The build uses the libc and
 * kernel UAPI headers of the build host and the UAPI headers that come with
 * the toolchain's libbpf (README.md, Requirements); the running kernel may
 * be newer than both. Each entry says who lacks it and since when it
 * exists. Constants are #ifndef-guarded so that headers which have them
 * win; the structs give private names to layouts the headers do not
 * describe yet.
 */
#ifndef MTHPCTL_COMPAT_H
#define MTHPCTL_COMPAT_H

#include <linux/types.h>

/* linux/capability.h before 5.8 (CAP_BPF came with 5.8). */
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Kernel-internal errno (include/linux/errno.h), in no libc header; BPF
 * syscalls may return it to user space for an operation a kernel lacks. */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

/* renameat2(2) flag: in glibc's <stdio.h> since 2.28, in linux/fs.h since
 * 3.15; older glibc lacks it. */
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* bpf_link_info.struct_ops as the kernel series (and upstream's cgroup
 * struct_ops) extend it with the cgroup id; the UAPI headers of libbpf 1.8
 * (kernel 7.3) have map_id only. Copied out of bpf_link_info.struct_ops. */
struct struct_ops_link_info {
	__u32 map_id;
	__u32 pad;
	__u64 cgroup_id;
};

/*
 * BPF_PROG_QUERY attributes with query.type_id, which the UAPI headers of
 * libbpf 1.8 (kernel 7.3) predate: the struct_ops type's BTF id takes the
 * place of the padding after prog_cnt, as in upstream's UAPI. Passed to the
 * bpf syscall directly (libbpf's bpf_prog_query_opts has no type_id).
 */
struct struct_ops_query_attr {
	__u32 target_fd;
	__u32 attach_type;
	__u32 query_flags;
	__u32 attach_flags;
	__aligned_u64 prog_ids;
	__u32 prog_cnt;
	__u32 type_id;
	__aligned_u64 prog_attach_flags;
	__aligned_u64 link_ids;
	__aligned_u64 link_attach_flags;
	__u64 revision;
};

#endif
