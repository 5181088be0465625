// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench compile: a real compile, kernbench's shape. In the child,
 * in the workload's cgroup: make -j JOBS of a mthpctl source tree's
 * compile-bench target (its pure sources and unit tests, the objects
 * only: the system cc, no libbpf), with OUTPUT in a fresh directory under
 * $TMPDIR or /tmp (a tmpfs in the VM: the source tree may be read-only),
 * removed when make is done. Many short compiler processes, each
 * allocating and freeing tens of MiB: the time of the whole, memory.peak
 * and the faults are the figures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "bench_common.h"
#include "bench_workload.h"
#include "mthpctl.h"

/* The Makefile target the tree must have (see its comment there). */
#define COMPILE_TARGET	"compile-bench"

/* Does dir's Makefile have the target? */
static bool has_target(const char *dir)
{
	char path[600], line[256];
	bool ok = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/Makefile", dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!ok && fgets(line, sizeof(line), f))
		ok = !strncmp(line, COMPILE_TARGET ":", strlen(COMPILE_TARGET ":"));
	fclose(f);
	return ok;
}

int bench_compile_check(const struct bench_opts *o)
{
	if (!bench_in_path("make") || !bench_in_path("cc"))
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "compile needs make and cc: install them (Debian: apt install "
				     "build-essential)");
	if (!o->cc_source || !has_target(o->cc_source))
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "compile: %s%s is not a mthpctl source tree with a '"
				     COMPILE_TARGET "' target in its Makefile: give --source DIR "
				     "(the tree mthpctl was built from has one)",
				     o->cc_source ? o->cc_source : "no source tree known",
				     o->cc_source ? "" : " (none built in)");
	return 0;
}

int bench_compile_run(const struct bench_opts *o, struct wl_result *res)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], jobs[16], outv[300], files[32];
	int status = 0;
	pid_t pid;
	__u64 t0;

	snprintf(dir, sizeof(dir), "%s/mthpctl-compile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		res->err = errno;
		return -res->err;
	}
	snprintf(jobs, sizeof(jobs), "-j%u", o->cc_jobs);
	snprintf(outv, sizeof(outv), "OUTPUT=%s", dir);
	snprintf(files, sizeof(files), "COMPILE_FILES=%u", o->cc_files);
	t0 = bench_now_ns();
	pid = fork();
	if (pid < 0) {
		res->err = errno;
	} else if (!pid) {
		char *argv[] = { "make", "-s", "-C", (char *)o->cc_source, jobs, outv,
				 COMPILE_TARGET, o->cc_files ? files : NULL, NULL };
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execvp("make", argv);
		_exit(127);
	} else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		res->err = ECHILD;	/* make's errors went to stderr */
	}
	res->secs = (bench_now_ns() - t0) / 1e9;
	bench_rm_tree(dir);
	return res->err ? -res->err : 0;
}

void bench_compile_config(struct jw *w, const struct bench_opts *o)
{
	jw_kstr(w, "source", o->cc_source);
	jw_ku64(w, "jobs", o->cc_jobs);
	jw_ku64(w, "files", o->cc_files);
}

void bench_compile_headline(const struct bench_opts *o)
{
	char n[32] = "all";

	if (o->cc_files)
		snprintf(n, sizeof(n), "the first %u", o->cc_files);
	printf("make -j%u " COMPILE_TARGET " of %s (%s of its pure sources and unit tests, "
	       "objects only, system cc)", o->cc_jobs, o->cc_source, n);
}
