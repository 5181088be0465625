// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The JSON writer's strings (src/json.c): cgroup paths, file names and
 * kernel text, any bytes. Whatever the input, the output is one JSON
 * string a strict parser accepts (RFC 8259: escapes, no raw control
 * character, UTF-8 only); input that is already clean UTF-8 comes out
 * unchanged. The UTF-8 check here decodes code points, not the writer's
 * byte ranges, so the two are not the same mistake.
 */
#include <stdbool.h>

#include "json.h"
#include "fuzz.h"

/* Decode one code point at p (n bytes left); its length, or 0 if ill-formed. */
static size_t decode(const unsigned char *p, size_t n)
{
	static const unsigned int min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	unsigned int cp;
	size_t len, i;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static bool hex4(const unsigned char *p, size_t n)
{
	size_t i;

	if (n < 4)
		return false;
	for (i = 0; i < 4; i++)
		if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
			return false;
	return true;
}

/* out[0..n) is one JSON string; *clean: it holds no escape */
static void check_string(const unsigned char *out, size_t n, bool *clean)
{
	size_t i = 1, l;

	*clean = true;
	fuzz_assert(n >= 2 && out[0] == '"' && out[n - 1] == '"');
	n--;
	while (i < n) {
		fuzz_assert(out[i] >= 0x20 && out[i] != '"');
		if (out[i] == '\\') {
			*clean = false;
			fuzz_assert(i + 1 < n);
			if (out[i + 1] == 'u') {
				fuzz_assert(hex4(out + i + 2, n - i - 2));
				i += 6;
			} else {
				fuzz_assert(strchr("\"\\/bfnrt", out[i + 1]) && out[i + 1]);
				i += 2;
			}
			continue;
		}
		l = decode(out + i, n - i);
		fuzz_assert(l);
		i += l;
	}
	fuzz_assert(i == n);
}

/* s needs no escape: well-formed UTF-8 without control characters, '"', '\' */
static bool plain(const unsigned char *s, size_t n)
{
	size_t i = 0, l;

	while (i < n) {
		if (s[i] < 0x20 || s[i] == '"' || s[i] == '\\')
			return false;
		l = decode(s + i, n - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), *out = NULL;
	size_t len = 0, n = strlen(s);
	FILE *f = open_memstream(&out, &len);
	struct jw w;
	bool clean;

	if (!f)
		abort();
	jw_init(&w, f, false);
	jw_str(&w, s);
	fclose(f);
	check_string((const unsigned char *)out, len, &clean);
	if (plain((const unsigned char *)s, n))
		fuzz_assert(clean && len == n + 2 && !memcmp(out + 1, s, n));
	free(out);
	free(s);
	return 0;
}
