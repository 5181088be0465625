// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl: command-line front end, bpftool-style subcommand dispatch. */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mthpctl.h"

/* no argp_program_version: -V is a global option of ours, answered with
 * the libbpf version and the kernel's features, in JSON too */
const char *argp_program_bug_address = "the mthpctl issue tracker";
error_t argp_err_exit_status = MTHPCTL_EXIT_USAGE;

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "attach", cmd_attach },
	{ "detach", cmd_detach },
	{ "status", cmd_status },
	{ "bench", cmd_bench },
	{ "version", cmd_version },
	{ "apply", cmd_apply },
};
#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static int cmd_index = -1;

static const struct cmd *find_cmd(const char *name, int *nmatch)
{
	const struct cmd *found = NULL;
	size_t i, n = strlen(name);

	*nmatch = 0;
	for (i = 0; i < NR_CMDS; i++) {
		if (!strcmp(cmds[i].name, name)) {
			*nmatch = 1;
			return &cmds[i];
		}
		if (n && !strncmp(cmds[i].name, name, n)) {
			found = &cmds[i];
			(*nmatch)++;
		}
	}
	return *nmatch == 1 ? found : NULL;
}

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_ARG:
		cmd_index = state->next - 1;
		state->next = state->argc;	/* the rest belongs to the command */
		return 0;
	case ARGP_KEY_END:
		if (cmd_index < 0 && !g.version)
			argp_error(state, "missing COMMAND (attach, detach, status, apply, bench or version)");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_child top_children[] = {
	{ &mthpctl_global_argp, 0, "Global options:", 0 },
	{ 0 }
};

static const char top_doc[] =
	"Attach per-cgroup mTHP (multi-size transparent huge page) size policies."
	"\v"
	"Commands:\n"
	"  attach   load a policy and attach it to a cgroup (pinned, no daemon)\n"
	"  detach   detach the policy of a cgroup (or --all) and remove its pins\n"
	"  status   kernel support, global THP settings, attached policies\n"
	"  apply    make the attached policies what /etc/mthpctl/policies.conf says\n"
	"  bench    benchmark THP modes and a policy (redis, pagefault, sparse)\n"
	"  version  mthpctl and libbpf versions, kernel features, what is missing\n"
	"\n"
	"Commands may be abbreviated to a unique prefix. "
	"Run `mthpctl COMMAND --help` for the options of a command.\n"
	"\n"
	"Examples:\n"
	"  mthpctl attach --cgroup /sys/fs/cgroup/redis\n"
	"  mthpctl status -p\n"
	"  mthpctl detach --all\n"
	"  mthpctl apply --dry-run\n"
	"  mthpctl -j version\n"
	"\n"
	"Exit status: 0 ok, 1 usage, 2 permission, 3 unsupported kernel, "
	"4 bad cgroup path, 5 state conflict, 6 bpffs not mounted, "
	"7 BPF load/attach failure, 8 configuration refused (see mthpctl(8)).";

static const struct argp top_argp = {
	NULL, top_parse, "COMMAND [ARGS...]", top_doc, top_children, NULL, NULL
};

int main(int argc, char **argv)
{
	const struct cmd *c;
	char name[64];
	int nmatch;

	g.print_version = mthpctl_print_version;	/* -V, wherever it stands */
	argp_parse(&top_argp, argc, argv, ARGP_IN_ORDER, NULL, NULL);
	c = find_cmd(argv[cmd_index], &nmatch);
	if (!c) {
		if (nmatch > 1)
			return mthpctl_error(MTHPCTL_EXIT_USAGE,
					     "command '%s' is ambiguous (attach, detach, status, apply, bench, version)",
					     argv[cmd_index]);
		return mthpctl_error(MTHPCTL_EXIT_USAGE,
				     "unknown command '%s' (attach, detach, status, apply, bench, version; see mthpctl --help)",
				     argv[cmd_index]);
	}
	mthpctl_libbpf_setup();
	snprintf(name, sizeof(name), "mthpctl %s", c->name);
	argv[cmd_index] = name;
	return c->fn(argc - cmd_index, argv + cmd_index);
}
