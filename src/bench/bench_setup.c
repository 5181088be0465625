// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl bench: a run's start and end. bench_setup() checks, takes the
 * signals (SIGINT/SIGTERM/SIGHUP set bench_stop), saves the settings
 * (bench_env.c), makes the bench cgroup (bench_cgroup.c) and settles the
 * state the benchmark starts from (bench_start.c);
 * bench_restore() undoes it all and everything the other bench files
 * recorded (children, cgroups, policies), at the end, on error and after a
 * signal.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "mthpctl.h"
#include "sysfs.h"

static struct {
	bool active;			/* between bench_setup and bench_restore */
	struct sigaction old_int, old_term, old_hup, old_pipe;
} st;

static void on_signal(int sig)
{
	bench_stop = sig;
}

int bench_setup(const struct bench_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	int ret, err;

	if (geteuid() != 0)
		return mthpctl_error(MTHPCTL_EXIT_PERM,
				     "bench changes THP settings and creates cgroups: run it as root");
	if (access(MTHPCTL_THP_DIR "/enabled", W_OK))
		return mthpctl_error(MTHPCTL_EXIT_UNSUPPORTED,
				     "%s/enabled: %s (kernel without transparent huge pages?)",
				     MTHPCTL_THP_DIR, strerror(errno));
	/* mixed --stock measures without a node limit where there is no
	 * memory controller, unless --node-high asks for one */
	ret = bench_cgroups_prepare(o->cgroup, o->stock && !o->mx_node_high);
	if (ret)
		return ret;
	bench_self_thp_off();

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: blocking calls return EINTR */
	bench_stop = 0;
	sigaction(SIGINT, &sa, &st.old_int);
	sigaction(SIGTERM, &sa, &st.old_term);
	sigaction(SIGHUP, &sa, &st.old_hup);
	sigaction(SIGPIPE, &ign, &st.old_pipe);
	st.active = true;

	err = bench_env_save();
	if (err) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot read the THP settings in %s: %s",
				     MTHPCTL_THP_DIR, strerror(-err));
	}
	err = bench_write_file("/proc/sys/vm/overcommit_memory", "1");
	if (!err)
		err = bench_cgroups_create_root();
	if (err) {
		bench_restore();
		return mthpctl_error(MTHPCTL_EXIT_FAIL, "cannot set up %s: %s", o->cgroup,
				     strerror(-err));
	}
	bench_start_settle(o);
	return 0;
}

void bench_restore(void)
{
	if (!st.active)
		return;
	bench_kill_all();
	bench_cgroups_remove_all();
	bench_env_restore();
	sigaction(SIGINT, &st.old_int, NULL);
	sigaction(SIGTERM, &st.old_term, NULL);
	sigaction(SIGHUP, &st.old_hup, NULL);
	sigaction(SIGPIPE, &st.old_pipe, NULL);
	st.active = false;
}
