// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <math.h>
#include <string.h>

#include "json.h"

void jw_init(struct jw *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
	w->first[0] = true;
}

void jw_init_value_of(struct jw *sub, FILE *f, const struct jw *w)
{
	jw_init(sub, f, w->pretty);
	sub->depth = w->depth;
	sub->after_key = true;	/* no separator: the key is w's */
}

static void indent(struct jw *w)
{
	int i;

	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* Separator and indentation before a key or a value. */
static void before_value(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (w->depth > 0)
		indent(w);
}

static void open_container(struct jw *w, char c)
{
	before_value(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_container(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		indent(w);
	fputc(c, w->f);
	if (w->depth == 0)
		fputc('\n', w->f);
}

void jw_obj_open(struct jw *w) { open_container(w, '{'); }
void jw_obj_close(struct jw *w) { close_container(w, '}'); }
void jw_arr_open(struct jw *w) { open_container(w, '['); }
void jw_arr_close(struct jw *w) { close_container(w, ']'); }

/*
 * The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if it is not one.
 * The tail bytes are checked before they are looked past, so a NUL ends
 * the string as it should.
 */
static int utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;	/* a tail byte, an overlong lead (c0, c1) or f5..ff */
	/* the second byte's range rules out overlongs, surrogates, > U+10FFFF */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/*
 * Strings come from the system (cgroup paths, file names, kernel text) and
 * need not be UTF-8, which JSON requires: a byte that starts no
 * well-formed sequence is written as U+FFFD, one per byte as Go's
 * encoding/json does, so that a strict parser still reads the output.
 */
static void write_string(struct jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run;
	int n = 0;

	fputc('"', w->f);
	while (*p) {
		/* what needs no escape, in one write: status -j writes some
		 * hundred keys per policy, of a node's thousands of policies */
		for (run = p; *p >= 0x20 && *p != '"' && *p != '\\' && (n = utf8_len(p)); p += n)
			;
		if (p > run)
			fwrite(run, 1, p - run, w->f);
		if (!*p)
			break;
		switch (*p) {
		case '"': fputs("\\\"", w->f); break;
		case '\\': fputs("\\\\", w->f); break;
		case '\b': fputs("\\b", w->f); break;
		case '\f': fputs("\\f", w->f); break;
		case '\n': fputs("\\n", w->f); break;
		case '\r': fputs("\\r", w->f); break;
		case '\t': fputs("\\t", w->f); break;
		default:
			if (*p < 0x20)
				fprintf(w->f, "\\u%04x", *p);
			else	/* a byte that starts no well-formed sequence */
				fputs("\\ufffd", w->f);
			break;
		}
		p++;
	}
	fputc('"', w->f);
}

void jw_key(struct jw *w, const char *key)
{
	before_value(w);
	write_string(w, key);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	before_value(w);
	write_string(w, s);
}

void jw_u64(struct jw *w, __u64 v)
{
	before_value(w);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_s64(struct jw *w, __s64 v)
{
	before_value(w);
	fprintf(w->f, "%lld", (long long)v);
}

void jw_double(struct jw *w, double v)
{
	before_value(w);
	if (isfinite(v))
		fprintf(w->f, "%.6g", v);
	else
		fputs("null", w->f);
}

void jw_raw(struct jw *w, const char *json, size_t len)
{
	before_value(w);
	fwrite(json, 1, len, w->f);
}

void jw_bool(struct jw *w, bool v)
{
	before_value(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	before_value(w);
	fputs("null", w->f);
}

void jw_kstr(struct jw *w, const char *k, const char *v) { jw_key(w, k); jw_str(w, v); }
void jw_ku64(struct jw *w, const char *k, __u64 v) { jw_key(w, k); jw_u64(w, v); }
void jw_ks64(struct jw *w, const char *k, __s64 v) { jw_key(w, k); jw_s64(w, v); }
void jw_kbool(struct jw *w, const char *k, bool v) { jw_key(w, k); jw_bool(w, v); }
void jw_kdouble(struct jw *w, const char *k, double v) { jw_key(w, k); jw_double(w, v); }
