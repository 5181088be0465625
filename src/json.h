/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A small streaming JSON writer: compact or pretty (2-space indent). */
#ifndef MTHPCTL_JSON_H
#define MTHPCTL_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define JW_MAX_DEPTH 32

struct jw {
	FILE *f;
	bool pretty;
	int depth;
	bool first[JW_MAX_DEPTH];	/* no element written yet at this depth */
	bool after_key;
};

void jw_init(struct jw *w, FILE *f, bool pretty);
/* A writer into f for one value that w would write next (after its key):
 * the same depth and layout, so that its text fits where jw_raw() puts it. */
void jw_init_value_of(struct jw *sub, FILE *f, const struct jw *w);
/* A value already written as JSON text by such a writer. */
void jw_raw(struct jw *w, const char *json, size_t len);
void jw_obj_open(struct jw *w);
void jw_obj_close(struct jw *w);	/* at depth 0 also writes "\n" */
void jw_arr_open(struct jw *w);
void jw_arr_close(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s);	/* NULL writes null */
void jw_u64(struct jw *w, __u64 v);
void jw_s64(struct jw *w, __s64 v);
void jw_double(struct jw *w, double v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);

/* key + value shorthands */
void jw_kstr(struct jw *w, const char *k, const char *v);
void jw_ku64(struct jw *w, const char *k, __u64 v);
void jw_ks64(struct jw *w, const char *k, __s64 v);
void jw_kbool(struct jw *w, const char *k, bool v);
void jw_kdouble(struct jw *w, const char *k, double v);	/* not finite: null */

#endif
