// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl apply's files (src/conf.c, src/plan.c): a configuration, parsed
 * as one file and as the second of two, and apply's state file.
 */
#include "conf.h"
#include "plan.h"
#include "fuzz.h"

#define PAGE	4096ULL

static void config(const char *s)
{
	struct mthpctl_conf c = {};
	char err[4400], *small;
	size_t i, n;

	if (mthpctl_conf_parse(&c, "f.conf", s, 9, PAGE, err, sizeof(err))) {
		/* refused whole, with where */
		fuzz_assert(c.n == 0);
		fuzz_assert(!strncmp(err, "f.conf:", 7) && err[7] >= '0' && err[7] <= '9');
	}
	for (i = 0; i < c.n; i++) {
		const struct mthpctl_conf_entry *e = &c.e[i];

		fuzz_assert(e->target[0] && e->is_unit == (e->target[0] != '/'));
		fuzz_assert(e->line > 0 && !strcmp(e->file, "f.conf"));
		fuzz_assert(e->params.magic == MTHPCTL_PARAMS_MAGIC);
		fuzz_assert(e->params.threshold_ns <= e->params.window_ns);
		fuzz_assert(e->params.max_order == MTHPCTL_NO_CAP || e->params.max_order <= 9);
	}
	/* the same text again, as a second file: every target is named twice
	 * (refused) unless it has none; what the first file gave stays */
	n = c.n;
	small = malloc(16);	/* an error message cut short in a small buffer */
	if (!small)
		abort();
	if (!mthpctl_conf_parse(&c, "g.conf", s, 9, PAGE, small, 16))
		fuzz_assert(n == 0 && c.n == 0);
	else
		fuzz_assert(c.n == n && strlen(small) < 16);
	free(small);
	mthpctl_conf_free(&c);
}

/* Every record parsed is written back as the line it came from. */
static void state(const char *s)
{
	struct mthpctl_applied *r, *again;
	char line[4400];
	size_t n, i, bad;

	n = mthpctl_applied_parse(s, &r, &bad);
	for (i = 0; i < n; i++) {
		fuzz_assert(r[i].cgroup_id && r[i].target[0]);
		fuzz_assert(!mthpctl_applied_format(&r[i], line, sizeof(line)));
		fuzz_assert(mthpctl_applied_parse(line, &again, &bad) == 1 && !bad);
		fuzz_assert(again[0].cgroup_id == r[i].cgroup_id && again[0].link_id == r[i].link_id &&
			    mthpctl_params_equal(&again[0].params, &r[i].params) &&
			    !strcmp(again[0].target, r[i].target));
		free(again);
	}
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	config(s);
	state(s);
	free(s);
	return 0;
}
