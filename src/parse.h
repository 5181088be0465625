/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Parsing and formatting of sizes and durations with units. */
#ifndef MTHPCTL_PARSE_H
#define MTHPCTL_PARSE_H

#include <stddef.h>
#include <linux/types.h>

/* "16M", "1.5G", "64KiB", "2MB", "4096": bytes (binary units, K=1024; a
 * decimal fraction that makes whole bytes). Returns 0, -EINVAL (empty,
 * junk, sign, unknown unit, a fraction of a byte) or -ERANGE. */
int mthpctl_parse_size(const char *s, __u64 *bytes);
/* "100ms", "1.5s", "500us", "250000ns", "2min": nanoseconds. A unit is
 * required; a decimal fraction must make whole ns. Returns 0, -EINVAL or
 * -ERANGE. */
int mthpctl_parse_duration(const char *s, __u64 *ns);
/* Largest exact unit: 16777216 -> "16M", 1536 -> "1536", 65536 -> "64K". */
char *mthpctl_format_size(__u64 bytes, char *buf, size_t len);
/* Largest exact unit: 100000000 -> "100ms", 1000000000 -> "1s". */
char *mthpctl_format_duration(__u64 ns, char *buf, size_t len);
/* size must be page_size << order: returns the order, or -EINVAL. */
int mthpctl_size_to_order(__u64 size, __u64 page_size);

#endif
