// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl apply's pure parts: the configuration, the policy builder it
 * shares with attach, the plan, the state file, the drop-in. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "conf.h"
#include "plan.h"

#define PAGE	4096ULL
#define TOP	9	/* 2M with 4K pages */

static char err[4400];

static int parse(struct mthpctl_conf *c, const char *text)
{
	err[0] = '\0';
	return mthpctl_conf_parse(c, "p.conf", text, TOP, PAGE, err, sizeof(err));
}

/* text must be refused with exactly this message; c keeps nothing of it */
static void refused(const char *text, const char *want)
{
	struct mthpctl_conf c = {};

	assert_int_equal(parse(&c, text), MTHPCTL_EXIT_CONFIG);
	assert_string_equal(err, want);
	assert_int_equal(c.n, 0);
	mthpctl_conf_free(&c);
}

static void conf_good(void **state)
{
	struct mthpctl_conf c = {};
	const struct mthpctl_conf_entry *e;

	assert_int_equal(parse(&c,
		"# comment\n"
		"; another\n"
		"\n"
		"[/sys/fs/cgroup/redis]\n"
		"  threshold=50ms  \r\n"
		"window = 500ms\n"
		"private = Yes\n"
		"[ batch.slice ]\n"
		"policy = fixed\n"
		"max-size = 64K\n"
		"[/sys/fs/cgroup/with space]\n"
		"[getty@tty1.service]\n"
		"policy = n"), 0);
	assert_int_equal(c.n, 4);
	e = &c.e[0];
	assert_string_equal(e->target, "/sys/fs/cgroup/redis");
	assert_false(e->is_unit);
	assert_string_equal(e->file, "p.conf");
	assert_int_equal(e->line, 4);
	assert_true(e->private_obj);
	assert_int_equal(e->params.policy, MTHPCTL_POLICY_AUTO);
	assert_true(e->params.threshold_ns == 50000000ULL);
	assert_true(e->params.window_ns == 500000000ULL);
	assert_true(e->params.min_usage == MTHPCTL_DEFAULT_MIN_USAGE);
	assert_int_equal(e->params.max_order, MTHPCTL_NO_CAP);
	assert_int_equal(e->params.top_order, TOP);
	assert_int_equal(e->key_line[MTHPCTL_SPEC_THRESHOLD], 5);
	e = &c.e[1];
	assert_string_equal(e->target, "batch.slice");
	assert_true(e->is_unit);
	assert_false(e->private_obj);
	assert_int_equal(e->params.policy, MTHPCTL_POLICY_FIXED);
	assert_int_equal(e->params.max_order, 4);
	/* a section with no key: auto with its defaults */
	assert_string_equal(c.e[2].target, "/sys/fs/cgroup/with space");
	assert_true(c.e[2].params.window_ns == MTHPCTL_DEFAULT_WINDOW_NS);
	assert_int_equal(c.e[3].params.policy, MTHPCTL_POLICY_NEVER);

	/* a second file appends; its target clashing with the first's names both */
	assert_int_equal(mthpctl_conf_parse(&c, "d/10.conf", "[x.service]\n", TOP, PAGE, err, sizeof(err)), 0);
	assert_int_equal(c.n, 5);
	assert_int_equal(mthpctl_conf_parse(&c, "d/20.conf", "[a.service]\n\n[batch.slice]\n", TOP, PAGE,
					    err, sizeof(err)), MTHPCTL_EXIT_CONFIG);
	assert_string_equal(err, "d/20.conf:3: [batch.slice] is named already at p.conf:8 (one section per target)");
	assert_int_equal(c.n, 5);	/* nothing of the refused file */
	/* nor in the index of targets: its a.service is free again */
	assert_int_equal(mthpctl_conf_parse(&c, "d/30.conf", "[a.service]\n", TOP, PAGE, err, sizeof(err)), 0);
	assert_int_equal(c.n, 6);
	mthpctl_conf_free(&c);

	assert_int_equal(parse(&c, ""), 0);
	assert_int_equal(c.n, 0);
	mthpctl_conf_free(&c);
}

/* A node's worth of sections: each found again by its name, wherever the
 * table of targets had to grow */
static void conf_many(void **state)
{
	struct mthpctl_conf c = {};
	size_t len = 0, i, n = 10000;
	char *text = malloc(n * 48), line[128];

	assert_non_null(text);
	for (i = 0; i < n; i++)
		len += sprintf(text + len, "[/sys/fs/cgroup/pod-%05zu]\n", i);
	assert_int_equal(parse(&c, text), 0);
	assert_int_equal(c.n, n);
	assert_string_equal(c.e[n - 1].target, "/sys/fs/cgroup/pod-09999");
	for (i = 0; i < n; i += 997) {
		snprintf(line, sizeof(line), "[/sys/fs/cgroup/pod-%05zu]\n", i);
		assert_int_equal(mthpctl_conf_parse(&c, "d.conf", line, TOP, PAGE, err, sizeof(err)),
				 MTHPCTL_EXIT_CONFIG);
		snprintf(line, sizeof(line), "d.conf:1: [/sys/fs/cgroup/pod-%05zu] is named already at "
			 "p.conf:%zu (one section per target)", i, i + 1);
		assert_string_equal(err, line);
	}
	assert_int_equal(c.n, n);
	mthpctl_conf_free(&c);
	free(text);
}

static void conf_refused(void **state)
{
	refused("policy = auto\n", "p.conf:1: 'policy' before any section (start one with [/cgroup/path] or [name.service])");
	refused("[/a]\nmax_size = 2M\n", "p.conf:2: unknown key 'max_size' (use policy, threshold, window, min-usage, max-size or private)");
	refused("[/a]\nwindow = 1s\nwindow = 2s\n", "p.conf:3: [/a]: 'window' is set already at line 2");
	refused("[/a]\nwindow =\n", "p.conf:2: [/a]: 'window' has no value");
	refused("[/a]\njust words\n", "p.conf:2: expected 'key = value', a [section] or a # comment");
	refused("[/a\n", "p.conf:1: a section line is [TARGET] with nothing after the ']'");
	refused("[/a] x\n", "p.conf:1: a section line is [TARGET] with nothing after the ']'");
	refused("[ ]\n", "p.conf:1: empty section name (use [/cgroup/path] or [name.service])");
	refused("[/a]\n[/a]\n", "p.conf:2: [/a] is named already at p.conf:1 (one section per target)");
	refused("[/a/../b]\n", "p.conf:1: [/a/../b]: write the path without '.', '..' or '//'");
	refused("[/a//b]\n", "p.conf:1: [/a//b]: write the path without '.', '..' or '//'");
	refused("[/a/]\n", "p.conf:1: [/a/]: write the path without a trailing '/'");
	refused("[redis]\n", "p.conf:1: [redis]: not a unit with a cgroup (.service, .slice, .scope, .socket, "
		".mount or .swap; a cgroup path starts with /)");
	refused("[redis.timer]\n", "p.conf:1: [redis.timer]: not a unit with a cgroup (.service, .slice, .scope, "
		".socket, .mount or .swap; a cgroup path starts with /)");
	refused("[getty@.service]\n", "p.conf:1: [getty@.service]: a template has no cgroup: name an instance "
		"(e.g. getty@tty1.service)");
	refused("[a b.service]\n", "p.conf:1: [a b.service]: a unit name has only letters, digits and :-_.\\@ "
		"(a cgroup path starts with /)");
	refused("[/a]\nprivate = maybe\n", "p.conf:2: [/a]: bad private 'maybe' (yes or no)");
	/* the builder's refusals, at the line of the key at fault */
	refused("[/a]\npolicy = auto\nwindow = 5x\n",
		"p.conf:3: [/a]: bad window '5x' (a duration from 10ms to 60s, e.g. 1s)");
	refused("\n[/a]\npolicy = fixed\n", "p.conf:3: [/a]: policy fixed needs max-size SIZE (e.g. 64K)");
	refused("[/a]\nmin-usage = 1M\npolicy = never\n",
		"p.conf:2: [/a]: threshold and window apply to policy auto and simple, min-usage to auto only");
	refused("[/a]\nmax-size = 4M\n", "p.conf:2: [/a]: bad max-size '4M': above 2M, the largest THP size of "
		"this kernel (hpage_pmd_size); leave it out for no cap");
	refused("[/a]\nthreshold = 2s\n", "p.conf:2: [/a]: threshold must not exceed window (stall per window)");
	/* the error of the first bad section, even if a later one is bad too */
	refused("[/a]\npolicy = bogus\n[/b]\nwindow = 0s\n",
		"p.conf:2: [/a]: unknown policy 'bogus' (use auto, fixed, never or simple)");
}

static void spec_build(void **state)
{
	struct mthpctl_policy_spec s = { .policy = "fi", .max_size = "64K" };
	struct mthpctl_params p, q;
	enum mthpctl_spec_field f;
	char e[256];

	assert_int_equal(mthpctl_policy_build(&s, TOP, PAGE, "--", &p, e, sizeof(e), &f), 0);
	assert_int_equal(f, MTHPCTL_SPEC_NONE);
	assert_int_equal(p.policy, MTHPCTL_POLICY_FIXED);
	/* a second build of the same spec is equal (not a copy of p) */
	memset(&q, 0x5a, sizeof(q));
	assert_int_equal(mthpctl_policy_build(&s, TOP, PAGE, "--", &q, e, sizeof(e), NULL), 0);
	assert_true(mthpctl_params_equal(&p, &q));
	/* any one field changed: not equal (top_order: another kernel's PMD
	 * size, another policy) */
	q = p; q.magic ^= 1; assert_false(mthpctl_params_equal(&p, &q));
	q = p; q.policy = MTHPCTL_POLICY_AUTO; assert_false(mthpctl_params_equal(&p, &q));
	q = p; q.max_order = 5; assert_false(mthpctl_params_equal(&p, &q));
	q = p; q.top_order = 10; assert_false(mthpctl_params_equal(&p, &q));
	q = p; q.window_ns += 1; assert_false(mthpctl_params_equal(&p, &q));
	q = p; q.threshold_ns += 1; assert_false(mthpctl_params_equal(&p, &q));
	q = p; q.min_usage += 1; assert_false(mthpctl_params_equal(&p, &q));
	_Static_assert(sizeof(struct mthpctl_params) == 4 * 4 + 3 * 8,
		       "a field of mthpctl_params without an inequality test above");
	/* attach's wording, with -- */
	s = (struct mthpctl_policy_spec){ .threshold = "2s" };
	assert_int_equal(mthpctl_policy_build(&s, TOP, PAGE, "--", &p, e, sizeof(e), &f), MTHPCTL_EXIT_USAGE);
	assert_string_equal(e, "--threshold must not exceed --window (stall per window)");
	assert_int_equal(f, MTHPCTL_SPEC_THRESHOLD);
	s = (struct mthpctl_policy_spec){ .policy = "" };
	assert_int_equal(mthpctl_policy_build(&s, TOP, PAGE, "--", &p, e, sizeof(e), NULL), MTHPCTL_EXIT_USAGE);
	assert_string_equal(e, "unknown policy '' (use auto, fixed, never or simple)");
}

/* bench's --policy words: attach's options of a built-in policy, typed */
static void spec_words(void **state)
{
	char *ok[] = { "auto", "--threshold", "50ms", "--window=500ms", "--min", "0", "--priv" };
	char *cap[] = { "fixed", "--max-size", "16K", "--replace" };
	char *bad[][2] = {
		{ "auto", "--cgroup" },		/* not a policy option */
		{ "auto", "--max-size" },	/* its value missing */
		{ "auto", "--private=1" },	/* a switch with a value */
		{ "auto", "extra" },		/* a word that is no option */
		{ "auto", "--m" },		/* ambiguous: min-usage, max-size */
	};
	struct mthpctl_policy_spec s;
	unsigned int flags;
	char e[256];
	size_t i;

	assert_int_equal(mthpctl_policy_spec_words(ok, 7, &s, &flags, e, sizeof(e)), 0);
	assert_string_equal(s.policy, "auto");
	assert_string_equal(s.threshold, "50ms");
	assert_string_equal(s.window, "500ms");
	assert_string_equal(s.min_usage, "0");
	assert_null(s.max_size);
	assert_int_equal(flags, MTHPCTL_ATTACH_PRIVATE);
	assert_int_equal(mthpctl_policy_spec_words(cap, 4, &s, &flags, e, sizeof(e)), 0);
	assert_string_equal(s.max_size, "16K");
	assert_int_equal(flags, MTHPCTL_ATTACH_REPLACE);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mthpctl_policy_spec_words(bad[i], 2, &s, &flags, e, sizeof(e)),
				 MTHPCTL_EXIT_USAGE);
	assert_string_equal(e, "unrecognized option or missing argument: '--m'");
	assert_int_equal(mthpctl_policy_spec_words(&cap[1], 1, &s, &flags, e, sizeof(e)),
			 MTHPCTL_EXIT_USAGE);
}

static void dir_order(void **state)
{
	char a[] = "20-b.conf", b[] = ".hidden.conf", c[] = "10-a.conf", d[] = "x.conf~",
	     e[] = ".conf", f[] = "..", g[] = "notes.txt";
	char *names[] = { a, b, c, d, e, f, g };

	assert_int_equal(mthpctl_conf_dir_order(names, 7), 2);
	assert_string_equal(names[0], "10-a.conf");
	assert_string_equal(names[1], "20-b.conf");
}

/* --- the plan ------------------------------------------------------------- */

static struct mthpctl_params params(__u32 policy, __u32 max_order)
{
	struct mthpctl_params p = {
		.magic = MTHPCTL_PARAMS_MAGIC, .policy = policy, .max_order = max_order,
		.top_order = TOP, .window_ns = MTHPCTL_DEFAULT_WINDOW_NS,
		.threshold_ns = MTHPCTL_DEFAULT_THRESHOLD_NS, .min_usage = MTHPCTL_DEFAULT_MIN_USAGE,
	};
	return p;
}

static struct mthpctl_applied record(__u64 id, __u32 link, struct mthpctl_params p, const char *target)
{
	struct mthpctl_applied a = { .cgroup_id = id, .link_id = link, .params = p };

	snprintf(a.target, sizeof(a.target), "%s", target);
	return a;
}

static void plan_reconcile(void **state)
{
	const struct mthpctl_params aut = params(MTHPCTL_POLICY_AUTO, MTHPCTL_NO_CAP),
				    cap = params(MTHPCTL_POLICY_FIXED, 4),
				    nev = params(MTHPCTL_POLICY_NEVER, MTHPCTL_NO_CAP);
	const struct mthpctl_want w[] = {
		{ "/cg/new", "/cg/new", 10, aut, false },	/* nothing attached */
		{ "/cg/same", "/cg/same", 11, cap, false },	/* as wanted */
		{ "/cg/other", "/cg/other", 12, cap, false },	/* other parameters */
		{ "db.service", NULL, 0, aut, false },		/* not running */
		{ "/cg/priv", "/cg/priv", 13, aut, true },	/* now private */
		{ "/cg/hand", "/cg/hand", 14, nev, false },	/* attached by hand, equal */
	};
	const struct mthpctl_attached h[] = {
		{ 11, 101, true, cap }, { 12, 102, true, aut }, { 13, 103, true, aut },
		{ 14, 104, true, nev }, { 20, 120, true, nev }, { 21, 121, true, cap },
		{ 22, 122, true, nev }, { 23, 123, true, aut }, { 24, 124, false, {} },
	};
	const struct mthpctl_applied a[] = {
		record(11, 101, cap, "/cg/same"), record(12, 102, aut, "/cg/other"),
		record(13, 103, aut, "/cg/priv"),
		record(20, 120, nev, "/cg/gone-from-file"),	/* detach */
		record(21, 999, cap, "/cg/reattached"),	/* another link now: leave */
		record(22, 122, cap, "/cg/replaced"),		/* replaced by hand: leave */
		record(30, 130, aut, "/cg/removed"),		/* cgroup gone: forget */
		record(24, 124, aut, "/cg/unreadable"),	/* no parameters: leave */
	};
	const enum mthpctl_action_kind want[] = {
		MTHPCTL_ACT_ATTACH, MTHPCTL_ACT_KEEP, MTHPCTL_ACT_REPLACE, MTHPCTL_ACT_SKIP,
		MTHPCTL_ACT_REPLACE, MTHPCTL_ACT_KEEP,
		MTHPCTL_ACT_DETACH, MTHPCTL_ACT_LEAVE, MTHPCTL_ACT_LEAVE, MTHPCTL_ACT_FORGET,
		MTHPCTL_ACT_LEAVE,
	};
	struct mthpctl_action act[16];
	size_t n, changes, i;

	n = mthpctl_plan(w, 6, h, 9, a, 8, false, act, &changes);
	assert_int_equal(n, 11);
	for (i = 0; i < n; i++) {
		if (act[i].kind != want[i])
			fail_msg("action %zu: %s, want %s", i, mthpctl_action_name(act[i].kind),
				 mthpctl_action_name(want[i]));
	}
	assert_int_equal(changes, 4);	/* attach, 2 replace, detach */
	assert_int_equal(act[0].have, -1);
	assert_int_equal(act[2].have, 1);
	assert_int_equal(act[2].applied, 1);
	assert_int_equal(act[6].applied, 3);
	assert_int_equal(act[6].want, -1);
	assert_string_equal(mthpctl_action_name(MTHPCTL_ACT_FORGET), "forget");

	/* applied again with the result: nothing to change */
	{
		const struct mthpctl_want w2[] = { { "/cg/same", "/cg/same", 11, cap, false } };

		n = mthpctl_plan(w2, 1, h, 9, a, 1, false, act, &changes);
		assert_int_equal(n, 1);
		assert_int_equal(act[0].kind, MTHPCTL_ACT_KEEP);
		assert_int_equal(changes, 0);
	}
}

/* apply --unit: the unit's own old record only; other targets untouched */
static void plan_partial(void **state)
{
	const struct mthpctl_params cap = params(MTHPCTL_POLICY_FIXED, 4);
	const struct mthpctl_want w[] = { { "redis.service", "/cg/s/redis.service", 40, cap, false } };
	const struct mthpctl_attached h[] = { { 11, 101, true, cap } };
	const struct mthpctl_applied a[] = {
		record(11, 101, cap, "/cg/same"),
		record(39, 139, cap, "redis.service"),	/* its cgroup before the restart */
	};
	struct mthpctl_action act[4];
	size_t n, changes;

	n = mthpctl_plan(w, 1, h, 1, a, 2, true, act, &changes);
	assert_int_equal(n, 2);
	assert_int_equal(act[0].kind, MTHPCTL_ACT_ATTACH);
	assert_int_equal(act[1].kind, MTHPCTL_ACT_FORGET);
	assert_int_equal(act[1].applied, 1);
	assert_int_equal(changes, 1);
	/* the full apply would detach /cg/same, which no want names */
	n = mthpctl_plan(w, 1, h, 1, a, 2, false, act, &changes);
	assert_int_equal(n, 3);
	assert_int_equal(act[1].kind, MTHPCTL_ACT_DETACH);
	assert_int_equal(changes, 2);
}

static void state_file(void **state)
{
	struct mthpctl_applied r = record(77, 5, params(MTHPCTL_POLICY_FIXED, 4), "/cg/with space"), *out;
	char line[4400], text[9000];
	size_t n, bad;

	r.private_obj = true;
	assert_int_equal(mthpctl_applied_format(&r, line, sizeof(line)), 0);
	assert_string_equal(line, "77 5 1 2 4 9 1000000000 100000000 16777216 /cg/with space\n");
	snprintf(text, sizeof(text), "# header\n%s\ngarbage\n1 2 3\n0 5 1 1 4 9 1 1 1 /zero-id\n"
		 "8 5 2 1 4 9 1 1 1 /private-not-bool\n9 1 0 2 63 9 1 2 3 redis.service", line);
	n = mthpctl_applied_parse(text, &out, &bad);
	assert_int_equal(n, 2);
	assert_int_equal(bad, 4);
	assert_true(out[0].cgroup_id == 77);
	assert_true(out[0].private_obj);
	assert_true(mthpctl_params_equal(&out[0].params, &r.params));
	assert_string_equal(out[0].target, "/cg/with space");
	assert_string_equal(out[1].target, "redis.service");
	assert_int_equal(out[1].params.max_order, MTHPCTL_NO_CAP);
	free(out);
	assert_int_equal(mthpctl_applied_format(&r, line, 20), -ENAMETOOLONG);
}

/* the drop-in apply writes is the one make check-units verifies */
static void dropin(void **state)
{
	char text[1024], file[1024];
	size_t n;
	FILE *f;

	assert_int_equal(mthpctl_dropin_text("@MTHPCTL@", text, sizeof(text)), 0);
	f = fopen("tests/systemd/50-mthpctl.conf", "r");
	if (!f)
		fail_msg("tests/systemd/50-mthpctl.conf: run the unit tests from the top of the tree");
	n = fread(file, 1, sizeof(file) - 1, f);
	fclose(f);
	file[n] = '\0';
	assert_string_equal(text, file);
	assert_int_equal(mthpctl_dropin_text("/usr/sbin/mthpctl", text, 16), -ENAMETOOLONG);
}

/* apply's warning for a unit whose MemoryTHP= (a prctl at exec) takes away
 * what its section grants: parameters as the configuration builds them */
static void memory_thp(void **state)
{
	static const struct {
		const char *section;
		bool grants;
	} sec[] = {
		{ "policy = auto", true },
		{ "policy = fixed\nmax-size = 2M", true },
		{ "policy = fixed\nmax-size = 8K", true },
		{ "policy = fixed\nmax-size = 4K", false },
		{ "policy = never", false },
	};
	static const char *const other[] = { "madvise", "inherit", "", "Disable", "disabled", NULL };
	struct mthpctl_conf c = {};
	char text[256], msg[512];
	size_t i, k;

	for (i = 0; i < sizeof(sec) / sizeof(sec[0]); i++) {
		snprintf(text, sizeof(text), "[u.service]\n%s\n", sec[i].section);
		if (parse(&c, text))
			fail_msg("%s: %s", text, err);
		assert_int_equal(c.n, 1);
		assert_int_equal(mthpctl_params_grant_large(&c.e[0].params), sec[i].grants);
		assert_int_equal(mthpctl_memory_thp_warning("u.service", "disable", &c.e[0].params,
							    msg, sizeof(msg)), sec[i].grants);
		if (sec[i].grants)
			assert_string_equal(msg, "u.service has MemoryTHP=disable, so its processes get 4 KiB "
					    "pages whatever this section grants: remove MemoryTHP= from the "
					    "unit (systemctl edit u.service), or set policy = never here");
		else
			assert_string_equal(msg, "");
		/* only "disable" takes everything away */
		for (k = 0; k < sizeof(other) / sizeof(other[0]); k++) {
			strcpy(msg, "x");
			assert_int_equal(mthpctl_memory_thp_warning("u.service", other[k], &c.e[0].params,
								    msg, sizeof(msg)), 0);
			assert_string_equal(msg, "");
		}
		mthpctl_conf_free(&c);
		memset(&c, 0, sizeof(c));
	}
	assert_int_equal(parse(&c, "[u.service]\n"), 0);
	assert_int_equal(mthpctl_memory_thp_warning("u.service", "disable", &c.e[0].params, msg, 40),
			 -ENAMETOOLONG);
	mthpctl_conf_free(&c);
}

static void thp_off(void **state)
{
	struct mthpctl_thp_off t = { .procs = 3, .disabled = 1, .pid = 42, .name = "redis-server" };
	struct mthpctl_params p = MTHPCTL_PARAMS_DEFAULTS, never = MTHPCTL_PARAMS_DEFAULTS;
	char msg[512];

	never.policy = MTHPCTL_POLICY_NEVER;
	assert_int_equal(mthpctl_thp_off_warning("/sys/fs/cgroup/r", &t, &p, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "1 of the 3 processes in /sys/fs/cgroup/r (redis-server, pid 42) have "
			    "THP disabled by prctl(PR_SET_THP_DISABLE) and get 4 KiB pages whatever the "
			    "policy allows: start them without it (redis: disable-thp no; systemd: no "
			    "MemoryTHP=disable)");
	/* a policy of the user's may grant */
	assert_int_equal(mthpctl_thp_off_warning("/r", &t, NULL, msg, sizeof(msg)), 1);
	t.disabled = 2;
	assert_int_equal(mthpctl_thp_off_warning("/r", &t, &p, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "2 of the 3 processes in /r (redis-server, pid 42, ...)"));
	/* nothing to warn of: none disabled, or a policy that grants nothing */
	strcpy(msg, "x");
	assert_int_equal(mthpctl_thp_off_warning("/r", &t, &never, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	t.disabled = 0;
	assert_int_equal(mthpctl_thp_off_warning("/r", &t, &p, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	t.disabled = 1;
	assert_int_equal(mthpctl_thp_off_warning("/r", &t, &p, msg, 40), -ENAMETOOLONG);
}

int run_apply_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conf_good),
		cmocka_unit_test(conf_many),
		cmocka_unit_test(conf_refused),
		cmocka_unit_test(spec_build),
		cmocka_unit_test(spec_words),
		cmocka_unit_test(dir_order),
		cmocka_unit_test(plan_reconcile),
		cmocka_unit_test(plan_partial),
		cmocka_unit_test(state_file),
		cmocka_unit_test(dropin),
		cmocka_unit_test(memory_thp),
		cmocka_unit_test(thp_off),
	};
	return cmocka_run_group_tests_name("apply", tests, NULL, NULL);
}
