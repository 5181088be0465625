# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 1b: the hook counts what it decided ------------------------------------

# The hook's counting (its fast path answers most page faults from the
# memo; the per-call rules run there too): in a small cgroup with only a
# small process, nearly every page-fault call narrowed the offer to
# 4 KiB, so low-usage (and, before the first sample, no-sample)
# fallbacks are >= 90% of the calls. --private: its own counters, no
# other cgroup's calls. (Under pressure: t_auto_pressure.)
t_hook_counts() {
	local s1 js
	s1=$(mkcg s1) || return 1
	"$M" attach --cgroup "$s1" --private >/dev/null || fail "attach --private s1" || return 1
	"$H/faulter" -c "$s1" -s 1 -n 8 -i 250 >"$logs/s1b.out" 2>&1 ||
		fail "faulter in s1 failed: $(cat "$logs/s1b.out")" || return 1
	js=$(policy_json "$s1") && [ -n "$js" ] || fail "s1 missing from status -j" || return 1
	count_ratio "$js" '.totals.fallbacks["low-usage"].pagefault + .totals.fallbacks["no-sample"].pagefault' \
		'.totals.calls.pagefault' 2048 "small cgroup, small process: low-usage + no-sample fallbacks" || return 1
}
