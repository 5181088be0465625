// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mthpctl version (and -V/--version): the versions of mthpctl and of the
 * libbpf it is linked with, and what the running kernel offers, probed as
 * status probes it, with a verdict on what is missing for the policies.
 * What a bug report needs in one command, as `bpftool version` does.
 */
#include <argp.h>
#include <stdio.h>
#include <sys/utsname.h>

#include <bpf/libbpf.h>

#include "mthpctl.h"
#include "needs.h"
#include "status.h"

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	if (key != ARGP_KEY_ARG)
		return ARGP_ERR_UNKNOWN;
	argp_error(state, "unexpected argument '%s' (version takes none)", arg);	/* exits */
	return 0;
}

static const char doc[] =
	"Print the versions of mthpctl and libbpf and what the running kernel "
	"offers the policies: BTF, bpf_mthp_ops, the kfuncs, PSI, cgroup2, "
	"bpffs; then what is missing, each with its fix. Needs no privilege. "
	"`mthpctl -V` prints the same."
	"\v"
	"Examples:\n"
	"  mthpctl version\n"
	"  mthpctl -p version\n"
	"  mthpctl -j version | jq -e .ready";

static const struct argp argp = { NULL, parse_opt, NULL, doc, mthpctl_subcommand_children, NULL, NULL };

static void have_from_env(const struct status_env *e, struct mthpctl_have *h)
{
	h->btf = e->k.btf;
	h->feat = e->k.feat;
	h->psi = e->psi;
	h->cgroup2 = e->cg2[0];
	h->memcg = e->memcg;
	h->bpffs = e->bpffs;
}

int mthpctl_print_version(void)
{
	struct mthpctl_need missing[MTHPCTL_NR_NEEDS];
	struct mthpctl_have have = {};
	struct utsname u;
	char libbpf[32];
	char id[MTHPCTL_OBJECT_ID_LEN];
	struct mthpctl_host_sizes host;
	char sizes[256];
	struct status_env e;
	int i, n;

	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	if (uname(&u))
		u.release[0] = '\0';
	status_gather_kernel(&e, true);
	have_from_env(&e, &have);
	mthpctl_read_host_sizes(&host);
	n = mthpctl_missing(&have, missing);

	if (g.json) {
		struct jw *w = &g.jw;

		mthpctl_json_begin();
		jw_obj_open(w);
		jw_kstr(w, "version", MTHPCTL_VERSION);
		jw_kstr(w, "libbpf_version", libbpf);
		jw_kstr(w, "kernel_release", u.release[0] ? u.release : NULL);
		mthpctl_object_id(id, e.object_hash);
		jw_kstr(w, "builtin_object_hash", id);
		status_kernel_json(w, &e);
		mthpctl_host_sizes_json(w, &host);
		jw_kbool(w, "ready", n == 0);
		jw_key(w, "missing");
		jw_arr_open(w);
		for (i = 0; i < n; i++) {
			jw_obj_open(w);
			jw_kstr(w, "what", missing[i].what);
			jw_kstr(w, "fix", missing[i].fix);
			jw_obj_close(w);
		}
		jw_arr_close(w);
		jw_obj_close(w);
	} else {
		printf("mthpctl v%s\n", MTHPCTL_VERSION);
		printf("using libbpf v%s\n", libbpf);
		mthpctl_object_id(id, e.object_hash);
		printf("built-in policy object %s\n", id);
		printf("kernel %s:\n", u.release[0] ? u.release : "(uname failed)");
		printf("  BTF:                %s\n", e.k.btf ? "yes (" MTHPCTL_VMLINUX_BTF ")" : "no");
		status_kernel_plain(&e);
		/* what a policy can do with each size on this host */
		printf("  sizes at always:    %s (a policy keeps or takes them away)\n",
		       mthpctl_size_list(host.always, "none", sizes, sizeof(sizes)));
		printf("  sizes at madvise:   %s (a policy may grant them to its cgroup)\n",
		       mthpctl_size_list(host.madvise, "none", sizes, sizeof(sizes)));
		printf("  sizes at never:     %s (out of any policy's reach)\n",
		       mthpctl_size_list(host.never, "none", sizes, sizeof(sizes)));
		printf("ready:                %s\n", n ? "no" : "yes (the kernel has what the policies need)");
		for (i = 0; i < n; i++)
			printf("  missing: %s (fix: %s)\n", missing[i].what, missing[i].fix);
	}
	fflush(stdout);
	return MTHPCTL_EXIT_OK;
}

int cmd_version(int argc, char **argv)
{
	argp_parse(&argp, argc, argv, 0, NULL, NULL);
	return mthpctl_print_version();
}
