// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * For tests/vm/run.sh (t_object): a valid BPF object with no bpf_mthp_ops
 * map, which attach --object must refuse before it changes anything.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");
