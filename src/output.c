// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* mthpctl: the global options and state, errors, policy names and parameters as text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mthpctl.h"
#include "parse.h"
#include "sysfs.h"

struct mthpctl_global g;

/* The global options, of the top level and of every command (after its
 * name too): here, beside g, so that the commands need not call into
 * main.c, which calls them. */
static const struct argp_option global_options[] = {
	{ "json", 'j', NULL, 0, "Print JSON", 0 },
	{ "pretty", 'p', NULL, 0, "Print pretty JSON (implies --json)", 0 },
	/* libbpf's warnings (a refused program's verifier log among them)
	 * are shown without -v: see print_fn() in bpfutil.c */
	{ "verbose", 'v', NULL, 0, "Show libbpf's debug output (warnings always)", 0 },
	{ "version", 'V', NULL, 0, "Print versions and kernel features, then exit", 0 },
	{ 0 }
};

static error_t global_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'j': g.json = true; break;
	case 'p': g.json = g.pretty = true; break;
	case 'v': g.verbose = true; break;
	case 'V': g.version = true; break;
	case ARGP_KEY_END:
		/* after every option, wherever -V stood: -j may follow it; a
		 * command named with -V is not run, as with argp's --version */
		if (g.version)
			exit(g.print_version());
		return ARGP_ERR_UNKNOWN;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp mthpctl_global_argp = { global_options, global_parse, NULL, NULL, NULL, NULL, NULL };

/* Every subcommand accepts the global options after its name too. */
const struct argp_child mthpctl_subcommand_children[] = {
	{ &mthpctl_global_argp, 0, "Global options:", 5 },
	{ 0 }
};

void mthpctl_json_begin(void)
{
	jw_init(&g.jw, stdout, g.pretty);
}

static int report_error(const struct mthpctl_err_sink *sink, int code, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (sink) {
		/* a caller that reports the error inside its own output */
		snprintf(sink->msg, sink->len, "%s", msg);
	} else if (g.json) {
		struct jw w;

		jw_init(&w, stdout, g.pretty);
		jw_obj_open(&w);
		jw_kstr(&w, "error", msg);
		jw_ku64(&w, "exit_code", code);
		jw_obj_close(&w);
		fflush(stdout);
	} else {
		fprintf(stderr, "mthpctl: error: %s\n", msg);
	}
	return code;
}

int mthpctl_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = report_error(NULL, code, fmt, ap);
	va_end(ap);
	return code;
}

int mthpctl_fail(const struct mthpctl_err_sink *sink, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = report_error(sink, code, fmt, ap);
	va_end(ap);
	return code;
}

const char *mthpctl_policy_name(__u32 policy)
{
#define POLICY_NAME(id, text)	[id] = text,
	static const char *const n[MTHPCTL_POLICY_END] = { MTHPCTL_POLICIES(POLICY_NAME) };
#undef POLICY_NAME

	return policy < MTHPCTL_POLICY_END && n[policy] ? n[policy] : "unknown";
}

const char *mthpctl_reason_name(__u32 reason)
{
	static const char *const n[MTHPCTL_NR_REASON] = {
		"none", "pressure", "low-usage", "no-sample", "cap", "sparse",
	};
	return reason < MTHPCTL_NR_REASON ? n[reason] : "unknown";
}

const char *mthpctl_tva_name(__u32 tva)
{
	static const char *const n[MTHPCTL_NR_TVA] = {
		"smaps", "pagefault", "khugepaged", "madv_collapse", "other",
	};
	return tva < MTHPCTL_NR_TVA ? n[tva] : "unknown";
}

static const char *cap_str(__u32 max_order, char *buf, size_t len)
{
	return mthpctl_format_size(mthpctl_page_size() << max_order, buf, len);
}

/* Text and JSON name every parameter a user sets (not magic, nor
 * top_order, the kernel's): a parameter added is written here too. */
_Static_assert(MTHPCTL_NR_PARAMS == 7, "a parameter added: show it in status");

char *mthpctl_params_str(const struct mthpctl_params *p, char *buf, size_t len)
{
	char a[32], b[32], c[32], d[32];

	switch (p->policy) {
	case MTHPCTL_POLICY_AUTO:
		snprintf(buf, len, "auto (window %s, threshold %s, min-usage %s%s%s)",
			 mthpctl_format_duration(p->window_ns, a, sizeof(a)),
			 mthpctl_format_duration(p->threshold_ns, b, sizeof(b)),
			 mthpctl_format_size(p->min_usage, c, sizeof(c)),
			 p->max_order < MTHPCTL_NO_CAP ? ", max-size " : "",
			 p->max_order < MTHPCTL_NO_CAP ? cap_str(p->max_order, d, sizeof(d)) : "");
		break;
	case MTHPCTL_POLICY_FIXED:
		snprintf(buf, len, "fixed (max-size %s)", cap_str(p->max_order, d, sizeof(d)));
		break;
	case MTHPCTL_POLICY_SIMPLE:
		snprintf(buf, len, "simple (window %s, threshold %s%s%s)",
			 mthpctl_format_duration(p->window_ns, a, sizeof(a)),
			 mthpctl_format_duration(p->threshold_ns, b, sizeof(b)),
			 p->max_order < MTHPCTL_NO_CAP ? ", max-size " : "",
			 p->max_order < MTHPCTL_NO_CAP ? cap_str(p->max_order, d, sizeof(d)) : "");
		break;
	default:
		snprintf(buf, len, "%s", mthpctl_policy_name(p->policy));
	}
	return buf;
}

void mthpctl_params_json(struct jw *w, const struct mthpctl_params *p)
{
	jw_kstr(w, "policy", mthpctl_policy_name(p->policy));
	jw_key(w, "params");
	jw_obj_open(w);
	if (mthpctl_policy_sampled(p->policy)) {
		jw_ku64(w, "window_ns", p->window_ns);
		jw_ku64(w, "threshold_ns", p->threshold_ns);
	}
	if (p->policy == MTHPCTL_POLICY_AUTO)
		jw_ku64(w, "min_usage_bytes", p->min_usage);
	if (p->policy != MTHPCTL_POLICY_NEVER) {
		jw_key(w, "max_size_bytes");
		if (p->max_order < MTHPCTL_NO_CAP)
			jw_u64(w, mthpctl_page_size() << p->max_order);
		else
			jw_null(w);
	}
	jw_obj_close(w);
}

char *mthpctl_size_list(__u64 orders, const char *none, char *buf, size_t len)
{
	__u64 ps = mthpctl_page_size();
	size_t off = 0;
	char sz[32];
	int o;

	snprintf(buf, len, "%s", none);
	for (o = 1; o < 64 && off < len && orders; o++)
		if (orders & (1ULL << o))
			off += snprintf(buf + off, len - off, "%s%s", off ? " " : "",
					mthpctl_format_size(ps << o, sz, sizeof(sz)));
	return buf;
}

void mthpctl_size_list_json(struct jw *w, const char *key, __u64 orders)
{
	int o;

	jw_key(w, key);
	jw_arr_open(w);
	for (o = 1; o < 64; o++)
		if (orders & (1ULL << o))
			jw_u64(w, (mthpctl_page_size() << o) >> 10);
	jw_arr_close(w);
}

void mthpctl_host_sizes_json(struct jw *w, const struct mthpctl_host_sizes *h)
{
	jw_key(w, "thp_sizes_kb");
	jw_obj_open(w);
	mthpctl_size_list_json(w, "always", h->always);
	mthpctl_size_list_json(w, "madvise", h->madvise);
	mthpctl_size_list_json(w, "never", h->never);
	jw_obj_close(w);
}

__u64 mthpctl_policy_grants(const struct mthpctl_host_sizes *h, const struct mthpctl_params *p)
{
	if (p->policy == MTHPCTL_POLICY_NEVER)
		return 0;
	return h->madvise & mthpctl_cap_mask(p->max_order);
}
