// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The configuration of mthpctl apply (mthpctl.conf(5)): an INI file of
 * sections named by their target. Home-made rather than Debian's libinih:
 * that one is built with a 200-byte line limit (a longer line is split, and
 * a cgroup path can be 4095 bytes) and without line numbers in its
 * callback, while every refusal here names its file and line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "object.h"

#define TARGET_MAX	4095	/* PATH_MAX less the NUL */

/* The keys: the spec's options (MTHPCTL_SPEC_OPTIONS), then private. */
#define KEY_PRIVATE	MTHPCTL_NR_SPEC
#define NR_KEYS		MTHPCTL_CONF_NR_KEYS
_Static_assert(NR_KEYS == 6, "a key added: name it in set_key()'s refusal");

static void entry_free(struct mthpctl_conf_entry *e)
{
	int i;

	for (i = 0; i < KEY_PRIVATE; i++)
		free((char *)*mthpctl_spec_option(&e->spec, i));
	free(e->target);
	free(e->file);
	memset(e, 0, sizeof(*e));
}

void mthpctl_conf_free(struct mthpctl_conf *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		entry_free(&c->e[i]);
	free(c->e);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

/* The slot of target in c's table: its entry's, or the free one where it
 * would go. The table has a free slot (at most half of them are used). */
static size_t target_slot(const struct mthpctl_conf *c, const char *target)
{
	__u64 h = mthpctl_hash_bytes(target, strlen(target));
	/* a multiplicative hash: its high half carries every byte, its low
	 * bits only the words' low bits */
	size_t mask = c->nr_slots - 1, i = (h ^ (h >> 32)) & mask;

	while (c->slots[i] && strcmp(c->e[c->slots[i] - 1].target, target))
		i = (i + 1) & mask;
	return i;
}

/* Make c's table hold its n entries, with room for one more: built anew
 * when it has to grow, or when a failed file took entries away. 0 or
 * -ENOMEM. */
static int index_targets(struct mthpctl_conf *c)
{
	size_t nr = c->nr_slots, i;

	if (c->slots && c->nr_hashed == c->n && 2 * (c->n + 1) <= nr)
		return 0;
	while (nr < 2 * (c->n + 1))
		nr = nr ? 2 * nr : 64;
	free(c->slots);
	c->slots = calloc(nr, sizeof(*c->slots));
	c->nr_slots = c->slots ? nr : 0;
	c->nr_hashed = 0;
	if (!c->slots)
		return -ENOMEM;
	for (i = 0; i < c->n; i++)
		c->slots[target_slot(c, c->e[i].target)] = i + 1;
	c->nr_hashed = c->n;
	return 0;
}

int mthpctl_unit_name_check(const char *name, const char **why)
{
	static const char *const types[] = { ".service", ".slice", ".scope", ".socket", ".mount", ".swap" };
	const char *dot = strrchr(name, '.'), *p;
	size_t i, len = strlen(name);

	*why = NULL;
	if (!len || len > 255)
		*why = "a unit name has 1 to 255 characters";
	for (p = name; !*why && *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr(":-_.\\@", *p))
			*why = "a unit name has only letters, digits and :-_.\\@ (a cgroup path starts with /)";
	for (i = 0; !*why && dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(dot, types[i]))
			break;
	if (!*why && (!dot || dot == name || i == sizeof(types) / sizeof(types[0])))
		*why = "not a unit with a cgroup (.service, .slice, .scope, .socket, .mount or .swap; "
		       "a cgroup path starts with /)";
	if (!*why && dot[-1] == '@')
		*why = "a template has no cgroup: name an instance (e.g. getty@tty1.service)";
	return *why ? -EINVAL : 0;
}

static int check_path(const char *path, const char **why)
{
	const char *p;

	*why = NULL;
	if (strlen(path) > TARGET_MAX)
		*why = "the path is longer than PATH_MAX";
	/* a path is compared as written: "..", "." or "//" would let one
	 * cgroup have two names in the file */
	for (p = path; !*why && (p = strchr(p, '/')); p++)
		if (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || !p[2])) ||
		    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || !p[3])))
			*why = "write the path without '.', '..' or '//'";
	if (!*why && path[1] && path[strlen(path) - 1] == '/')
		*why = "write the path without a trailing '/'";
	return *why ? -EINVAL : 0;
}

/* Parser state of one file. */
struct parse {
	struct mthpctl_conf *c;
	const char *file;
	int line;
	struct mthpctl_conf_entry *cur;	/* the open section */
	__u32 top_order;
	__u64 page_size;
	char *err;
	size_t len;
};

__attribute__((format(printf, 3, 4)))
static int fail_at(struct parse *ps, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->len, "%s:%d: %s", ps->file, line, msg);
	return MTHPCTL_EXIT_CONFIG;
}

/* The section is complete: its options into parameters. */
static int close_section(struct parse *ps)
{
	struct mthpctl_conf_entry *e = ps->cur;
	enum mthpctl_spec_field field;
	char msg[512];
	int line;

	ps->cur = NULL;
	if (!e || !mthpctl_policy_build(&e->spec, ps->top_order, ps->page_size, "", &e->params,
					 msg, sizeof(msg), &field))
		return 0;
	line = field != MTHPCTL_SPEC_NONE && e->key_line[field] ? e->key_line[field] : e->line;
	return fail_at(ps, line, "[%s]: %s", e->target, msg);
}

static int open_section(struct parse *ps, char *name)
{
	struct mthpctl_conf_entry *e, *ne;
	const char *why;
	size_t slot;

	if (!*name)
		return fail_at(ps, ps->line, "empty section name (use [/cgroup/path] or [name.service])");
	if (name[0] == '/' ? check_path(name, &why) : mthpctl_unit_name_check(name, &why))
		return fail_at(ps, ps->line, "[%s]: %s", name, why);
	if (index_targets(ps->c))
		return fail_at(ps, ps->line, "out of memory");
	slot = target_slot(ps->c, name);
	if (ps->c->slots[slot]) {
		e = &ps->c->e[ps->c->slots[slot] - 1];
		return fail_at(ps, ps->line, "[%s] is named already at %s:%d (one section per target)",
			       name, e->file, e->line);
	}
	if (ps->c->n == ps->c->cap) {
		size_t cap = ps->c->cap ? 2 * ps->c->cap : 16;

		ne = realloc(ps->c->e, cap * sizeof(*ne));
		if (!ne)
			return fail_at(ps, ps->line, "out of memory");
		ps->c->e = ne;
		ps->c->cap = cap;
	}
	e = &ps->c->e[ps->c->n];
	memset(e, 0, sizeof(*e));
	e->target = strdup(name);
	e->file = strdup(ps->file);
	if (!e->target || !e->file) {
		entry_free(e);
		return fail_at(ps, ps->line, "out of memory");
	}
	e->is_unit = name[0] != '/';
	e->line = ps->line;
	ps->c->slots[slot] = ++ps->c->n;
	ps->c->nr_hashed++;
	ps->cur = e;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i]))
			return *out = true, 0;
		if (!strcasecmp(v, no[i]))
			return *out = false, 0;
	}
	return -EINVAL;
}

static int set_key(struct parse *ps, const char *key, const char *val)
{
	struct mthpctl_conf_entry *e = ps->cur;
	const char **f;
	int k;

	for (k = 0; k < NR_KEYS; k++)
		if (!strcmp(key, k == KEY_PRIVATE ? "private" : mthpctl_spec_option_name(k)))
			break;
	if (k == NR_KEYS)
		return fail_at(ps, ps->line, "unknown key '%s' (use policy, threshold, window, "
			       "min-usage, max-size or private)", key);
	if (!e)
		return fail_at(ps, ps->line, "'%s' before any section (start one with "
			       "[/cgroup/path] or [name.service])", key);
	if (e->key_line[k])
		return fail_at(ps, ps->line, "[%s]: '%s' is set already at line %d",
			       e->target, key, e->key_line[k]);
	if (!*val)
		return fail_at(ps, ps->line, "[%s]: '%s' has no value", e->target, key);
	e->key_line[k] = ps->line;
	if (k == KEY_PRIVATE) {
		if (parse_bool(val, &e->private_obj))
			return fail_at(ps, ps->line, "[%s]: bad private '%s' (yes or no)", e->target, val);
		return 0;
	}
	f = mthpctl_spec_option(&e->spec, k);
	*f = strdup(val);
	return *f ? 0 : fail_at(ps, ps->line, "out of memory");
}

static char *trim(char *s, char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*end = '\0';
	return s;
}

static int parse_line(struct parse *ps, char *s)
{
	char *eq, *close;
	int ret;

	s = trim(s, s + strlen(s));
	if (!*s || *s == '#' || *s == ';')
		return 0;
	if (*s == '[') {
		close = strrchr(s, ']');
		if (!close || close[1])
			return fail_at(ps, ps->line, "a section line is [TARGET] with nothing after the ']'");
		ret = close_section(ps);
		return ret ? ret : open_section(ps, trim(s + 1, close));
	}
	eq = strchr(s, '=');
	if (!eq)
		return fail_at(ps, ps->line, "expected 'key = value', a [section] or a # comment");
	*eq = '\0';
	return set_key(ps, trim(s, eq), trim(eq + 1, eq + 1 + strlen(eq + 1)));
}

int mthpctl_conf_parse(struct mthpctl_conf *c, const char *file, const char *text,
		       __u32 top_order, __u64 page_size, char *err, size_t len)
{
	struct parse ps = { .c = c, .file = file, .top_order = top_order,
			    .page_size = page_size, .err = err, .len = len };
	size_t n0 = c->n;
	char *copy, *s, *nl;
	int ret = 0;

	copy = strdup(text);
	if (!copy)
		return fail_at(&ps, 0, "out of memory");
	for (s = copy; !ret && s; s = nl) {
		nl = strchr(s, '\n');
		if (nl)
			*nl++ = '\0';
		ps.line++;
		ret = parse_line(&ps, s);
	}
	if (!ret)
		ret = close_section(&ps);
	free(copy);
	if (ret) {
		while (c->n > n0)
			entry_free(&c->e[--c->n]);
	}
	return ret;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t mthpctl_conf_dir_order(char **names, size_t n)
{
	size_t i, k = 0, l;
	char *t;

	for (i = 0; i < n; i++) {
		l = strlen(names[i]);
		if (names[i][0] == '.' || l <= 5 || strcmp(names[i] + l - 5, ".conf"))
			continue;
		t = names[k];
		names[k++] = names[i];
		names[i] = t;
	}
	qsort(names, k, sizeof(*names), cmp_name);
	return k;
}
