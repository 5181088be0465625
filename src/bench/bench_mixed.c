// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench mixed: shell, gups and bloat (bench_workload.c) at once,
 * each in a sibling cgroup under <bench>/mixed: one host that every global
 * setting has to serve. The static modes set the host; policy and simple
 * are attached once, to the parent. Per workload its time against its own
 * best static setting, per round; per mode the geometric mean of those
 * ratios over the workloads; the best single global setting named.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_common.h"
#include "bench_workload.h"
#include "mthpctl.h"

#define MX_NR	BENCH_WL_NR_CHILD	/* bench_wl_kinds[0..MX_NR) */

/* the modes whose policy was refused (their rows skipped), and why */
static bool skip[BENCH_NR_MODES];
static char skip_note[BENCH_NR_MODES][512];

struct mx_report {
	const struct bench_opts *o;
	const struct bench_rounds *rounds;
	int n[BENCH_NR_MODES];		/* complete rounds */
	struct bench_spread secs[BENCH_NR_MODES][MX_NR], peak[BENCH_NR_MODES][MX_NR];
	struct bench_spread ratio[BENCH_NR_MODES][MX_NR];	/* best static / this, per round */
	struct bench_spread geomean[BENCH_NR_MODES];
	struct bench_folios folios[BENCH_NR_MODES][MX_NR];
	int best[MX_NR];		/* each workload's best static mode */
	int best_global;		/* the static mode with the highest geometric mean */
};

static int mx_round(const struct bench_opts *o, enum bench_mode mode, struct wl_run *r,
		    bool *done)
{
	struct wl_live l[MX_NR];
	char parent[600] = "", cg[MX_NR][600];
	int w, err, ret = 0;

	*done = false;
	for (w = 0; w < MX_NR; w++) {
		cg[w][0] = '\0';
		l[w] = (struct wl_live){ .res_fd = -1, .hold_wr = -1, .pid = -1 };
	}
	err = bench_mode_set_thp(mode, o);
	if (err)
		return err;
	bench_settle_memory();
	err = bench_cg_create("mixed", parent, sizeof(parent));
	for (w = 0; w < MX_NR && !err; w++) {
		char name[64];

		snprintf(name, sizeof(name), "mixed/%s", bench_wl_kinds[w].name);
		err = bench_cg_create(name, cg[w], sizeof(cg[w]));
	}
	ret = bench_cgroups_attach(err, mode, o, parent, &skip[mode], skip_note[mode],
				   sizeof(skip_note[mode]));
	if (ret || skip[mode])
		goto out;
	for (w = 0; w < MX_NR && !ret; w++)
		ret = bench_wl_start(o, &bench_wl_kinds[w], cg[w], &l[w]);
	for (w = 0; w < MX_NR && !ret; w++)
		ret = bench_wl_finish(o, &l[w], &r[w]);
	*done = !ret;
out:
	for (w = 0; w < MX_NR; w++) {
		bench_wl_end(&l[w]);
		bench_cg_remove(cg[w]);
	}
	bench_cg_remove(parent);
	return bench_stop ? -EINTR : ret;
}

static void mx_json_config(struct jw *w, const struct bench_opts *o)
{
	int k;

	jw_key(w, "workloads");
	jw_arr_open(w);
	for (k = 0; k < MX_NR; k++)
		jw_str(w, bench_wl_kinds[k].name);
	jw_arr_close(w);
	for (k = 0; k < MX_NR; k++)
		bench_wl_kinds[k].json_config(w, o);
	jw_ku64(w, "repeats", o->repeats);
	jw_kstr(w, "policy", o->policy_text);
}

static void mx_json_body(struct jw *w, void *ctx)
{
	const struct mx_report *p = ctx;
	const struct bench_opts *o = p->o;
	int m, k;

	jw_kstr(w, "best_global_mode", p->best_global >= 0 ?
		bench_mode_name(p->best_global, o) : NULL);
	jw_key(w, "modes");
	jw_arr_open(w);
	for (m = 0; m < BENCH_NR_MODES; m++) {
		if (!bench_json_mode_open(w, o, m, p->n[m]))
			continue;
		jw_kbool(w, "static", bench_mode_static(m));
		jw_ku64(w, "rounds", p->n[m]);
		bench_json_ratio(w, "geomean_vs_own_best_static", &p->geomean[m]);
		jw_key(w, "workloads");
		jw_obj_open(w);
		for (k = 0; k < MX_NR; k++) {
			jw_key(w, bench_wl_kinds[k].name);
			jw_obj_open(w);
			bench_json_spread(w, "seconds", &p->secs[m][k]);
			bench_json_ratio(w, "speed_vs_own_best_static", &p->ratio[m][k]);
			jw_kstr(w, "own_best_static", p->best[k] >= 0 ?
				bench_mode_name(p->best[k], o) : NULL);
			bench_json_spread(w, "memory_peak", &p->peak[m][k]);
			bench_json_folios(w, &p->folios[m][k]);
			jw_obj_close(w);
		}
		jw_obj_close(w);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void mx_text_headline(void *ctx)
{
	const struct mx_report *p = ctx;

	printf("shell, gups and bloat at once in sibling cgroups, %u rounds", p->rounds->started);
}

static void mx_text_body(void *ctx)
{
	const struct mx_report *p = ctx;
	const struct bench_opts *o = p->o;
	char b[64], c[64];
	int m, k;

	for (m = 0; m < BENCH_NR_MODES; m++)
		if (skip[m])
			printf("note: %s rows skipped: %s\n", bench_mode_name(m, o), skip_note[m]);
	printf("each workload's speed against its own best static setting (per round; "
	       "median [interval]), peak MiB:\n");
	printf("%-16s %-26s", "mode", "geometric mean");
	for (k = 0; k < MX_NR; k++)
		printf(" %-30s", bench_wl_kinds[k].name);
	printf("\n");
	for (m = 0; m < BENCH_NR_MODES; m++) {
		if (!p->n[m])
			continue;
		printf("%-16s %-26s", bench_mode_name(m, o),
		       bench_spread_fmt(&p->geomean[m], "%.3f", b, sizeof(b)));
		for (k = 0; k < MX_NR; k++) {
			char cell[96];

			snprintf(cell, sizeof(cell), "%s %.1f",
				 bench_spread_fmt(&p->ratio[m][k], "%.3f", c, sizeof(c)),
				 p->peak[m][k].median / 1048576);
			printf(" %-30s", cell);
		}
		printf("\n");
	}
	printf("own best static setting:");
	for (k = 0; k < MX_NR; k++)
		printf(" %s %s", bench_wl_kinds[k].name, p->best[k] >= 0 ? bench_mode_name(p->best[k], o) : "-");
	printf("\nbest single global setting (highest geometric mean among the static modes): %s\n",
	       p->best_global >= 0 ? bench_mode_name(p->best_global, o) : "-");
	printf("anon folios of gups' array while it holds it (MiB by size, median):\n");
	for (m = 0; m < BENCH_NR_MODES; m++)
		if (p->n[m])
			bench_print_folios(bench_mode_name(m, o), &p->folios[m][1]);
	printf("(under TCG the soft TLB does not reward large folios: gups' time shows faults "
	       "and zeroing)\n");
}

/* The rounds so far: one benchmark at a time. */
static struct wl_run runs[BENCH_NR_MODES][WL_MAX_REPEATS][MX_NR];
static bool round_done[BENCH_NR_MODES][WL_MAX_REPEATS];
static struct mx_report mr;

/* One round of mode m: its workloads at once. 0, an exit code or -EINTR. */
static int mx_col(void *ctx, int m, int rep, const char *tag)
{
	const struct bench_opts *o = ctx;
	bool done;
	int ret;

	if (skip[m])
		return 0;
	bench_progress(o, "%s mixed %s round %d ...", tag, bench_mode_name(m, o), rep + 1);
	ret = mx_round(o, m, runs[m][rep], &done);
	round_done[m][rep] = !ret && done;
	if (round_done[m][rep])
		bench_progress(o, "%s   shell %.2f s, gups %.2f s, bloat %.2f s", tag,
			       runs[m][rep][0].secs, runs[m][rep][1].secs, runs[m][rep][2].secs);
	return ret;
}

/* Spreads, each workload's best static mode, the ratios and their
 * geometric means over rounds. */
static void mx_compute(int rounds)
{
	int m, rep, w;

	/* per workload: its spreads and its own best static mode */
	for (w = 0; w < MX_NR; w++) {
		double med[BENCH_NR_MODES];

		for (m = 0; m < BENCH_NR_MODES; m++) {
			double s[WL_MAX_REPEATS], pk[WL_MAX_REPEATS];
			struct bench_folios fo[WL_MAX_REPEATS];
			int n = 0;

			for (rep = 0; rep < rounds; rep++)
				if (round_done[m][rep]) {
					s[n] = runs[m][rep][w].secs;
					pk[n] = runs[m][rep][w].peak;
					fo[n++] = runs[m][rep][w].folios;
				}
			mr.n[m] = n;
			bench_spread(s, n, &mr.secs[m][w]);
			bench_spread(pk, n, &mr.peak[m][w]);
			bench_folios_median(fo, n, &mr.folios[m][w]);
			med[m] = bench_mode_static(m) && n ? -mr.secs[m][w].median : NAN;
		}
		mr.best[w] = bench_argmax(med, BENCH_NR_MODES);
	}
	/* per mode: each workload's ratio and their geometric mean, per round */
	for (m = 0; m < BENCH_NR_MODES; m++) {
		double gm[WL_MAX_REPEATS];

		for (w = 0; w < MX_NR; w++) {
			double num[WL_MAX_REPEATS], den[WL_MAX_REPEATS];

			for (rep = 0; rep < rounds; rep++) {
				num[rep] = mr.best[w] >= 0 && round_done[mr.best[w]][rep] ?
					   runs[mr.best[w]][rep][w].secs : NAN;
				den[rep] = round_done[m][rep] ? runs[m][rep][w].secs : NAN;
			}
			bench_ratio_spread(num, den, rounds, &mr.ratio[m][w]);
		}
		for (rep = 0; rep < rounds; rep++) {
			double sum = 0;

			gm[rep] = NAN;
			for (w = 0; w < MX_NR; w++) {
				int b = mr.best[w];

				if (b < 0 || !round_done[b][rep] || !round_done[m][rep] ||
				    runs[m][rep][w].secs <= 0)
					break;
				sum += log(runs[b][rep][w].secs / runs[m][rep][w].secs);
			}
			if (w == MX_NR)
				gm[rep] = exp(sum / MX_NR);
		}
		bench_spread(gm, rounds, &mr.geomean[m]);
	}
	{
		double g[BENCH_NR_MODES];

		for (m = 0; m < BENCH_NR_MODES; m++)
			g[m] = bench_mode_static(m) && mr.n[m] ? mr.geomean[m].median : NAN;
		mr.best_global = bench_argmax(g, BENCH_NR_MODES);
	}
}

static void mx_ratios(void *ctx, int rounds, struct bench_rounds_widest *wd)
{
	const struct bench_opts *o = ctx;
	char name[96];
	int m, w;

	mx_compute(rounds);
	for (m = 0; m < BENCH_NR_MODES; m++) {
		snprintf(name, sizeof(name), "%s geometric mean", bench_mode_name(m, o));
		bench_rounds_widest_note(wd, name, &mr.geomean[m]);
		for (w = 0; w < MX_NR; w++) {
			if (m == mr.best[w])
				continue;
			snprintf(name, sizeof(name), "%s %s vs its best", bench_mode_name(m, o),
				 bench_wl_kinds[w].name);
			bench_rounds_widest_note(wd, name, &mr.ratio[m][w]);
		}
	}
}

int bench_mixed(struct bench_opts *o)
{
	static struct bench_rounds rounds;
	struct bench_report report = {
		.name = "mixed", .title = "mixed", .ctx = &mr,
		.json_config = mx_json_config, .json_body = mx_json_body,
		.text_headline = mx_text_headline, .text_body = mx_text_body,
		.rounds = &rounds, .nr_rounds = 1,
	};
	int ret, sel[BENCH_NR_MODES], nsel;

	memset(&mr, 0, sizeof(mr));
	memset(round_done, 0, sizeof(round_done));
	mr.o = o;
	mr.rounds = &rounds;
	ret = bench_setup(o);
	if (ret)
		return ret;
	bench_rounds_init(&rounds, o, WL_MAX_REPEATS, NULL);
	nsel = bench_selected_modes(o, sel);
	ret = bench_rounds_run(o, &rounds, sel, nsel, mx_col, mx_ratios, o);
	bench_restore();
	if (ret > 0)
		return ret;
	mx_compute(rounds.started);
	report.interrupted = ret == -EINTR;
	report.notes[0] = skip[BENCH_POLICY] ? skip_note[BENCH_POLICY] : NULL;
	report.notes[1] = skip[BENCH_SIMPLE] ? skip_note[BENCH_SIMPLE] : NULL;
	return bench_report(o, &report);
}
