# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 1: a policy cgroup and a sibling without policy --------------------------

t_auto_sibling() {
	local a b out ok ok4 line
	a=$(mkcg a) && b=$(mkcg b) || return 1
	out=$("$M" attach --cgroup "$a" 2>&1) || fail "attach: $out" || return 1
	grep -q "^attached policy auto" <<<"$out" || fail "attach printed: $out" || return 1
	# A is small (< 16M): a larger process (4M mlocked ballast, 4M probes)
	# gets large folios there (the small-cgroup rule is for small
	# processes), and stays; then a small process (1M probes, < 2M anon)
	# probes for 3 s and gets 4 KiB pages. One after the other: while the
	# larger one grows, A's usage grows fast enough to count as a cgroup
	# about to be large (MTHPCTL_GROW_STREAK), whose processes all get
	# large folios by design; a small process starting beside it then got
	# them in its first probe (once in CI, on a loaded host). A 16M process
	# in B meanwhile.
	"$H/faulter" -c "$a" -b 4 -s 4 -n 12 -i 250 -H >"$logs/s1-a4.out" 2>&1 &
	local pa4=$!
	"$H/faulter" -c "$b" -s 16 -n 3 -i 200 >"$logs/s1-b.out" 2>&1 &
	local pb=$!
	wait_line "$logs/s1-a4.out" '^probe=11 ' 60 || fail "larger faulter in A: $(cat "$logs/s1-a4.out")" || return 1
	kill -0 $pa4 2>/dev/null || fail "larger faulter in A exited: $(cat "$logs/s1-a4.out")" || return 1
	wait $pb || fail "faulter in B failed: $(cat "$logs/s1-b.out")" || return 1
	# the small process starts once A's samples say small again
	local i
	for i in $(seq 50); do
		jq -e '.restriction == "low-usage"' <<<"$(policy_json "$a")" >/dev/null && break
		sleep 0.1
	done
	"$H/faulter" -c "$a" -s 1 -n 12 -i 250 >"$logs/s1-a.out" 2>&1 ||
		fail "faulter in A failed: $(cat "$logs/s1-a.out")" || return 1
	kill $pa4 2>/dev/null
	wait $pa4 2>/dev/null
	[ "$(probes "$logs/s1-a.out" 0 | wc -l)" = 12 ] || fail "A: not 12 probes" || return 1
	ok=$(probes "$logs/s1-a.out" 0 'v["max_order"] == 0 && v["pages"] == 256' | wc -l)
	[ "$ok" = 12 ] || fail "A (small process, auto) got large folios: $(probes "$logs/s1-a.out" 0 'v["max_order"] > 0' | head -n1)" || return 1
	# the first probe may run before the cgroup's first sample (4K then)
	ok4=$(probes "$logs/s1-a4.out" 0 'v["o9"] == 1024' | wc -l)
	[ "$ok4" -ge 11 ] || fail "A (larger process, auto): $ok4 of 12 probes all in 2M folios: $(probes "$logs/s1-a4.out" 0 'v["o9"] < 1024' | head -n1)" || return 1
	ok=$(probes "$logs/s1-b.out" 0 'v["o9"] * 4 >= v["pages"] * 3' | wc -l)
	[ "$ok" = 3 ] || fail "B (no policy) did not get mostly 2M folios: $(head -n2 "$logs/s1-b.out" | tail -n1)" || return 1
	line=$(probes "$logs/s1-b.out" 0 | head -n1)
	note "A (auto, 1M process): 12/12 probes all 4K; A (4M+4M process): $ok4/12 all 2M; B (no policy): $(field "$line" large_pct)% large, $(field "$line" o9) of $(field "$line" pages) pages in 2M folios"
	# the policy says why: low usage, counted as page-fault fallbacks
	local j
	j=$(policy_json "$a") && [ -n "$j" ] || fail "A missing from status -j" || return 1
	jq -e '.restriction == "low-usage" and .sample.low_usage == true and
	       .sample.usage_valid == true and .sample.usage_bytes < 16777216 and
	       .totals.fallbacks["low-usage"].pagefault > 0 and
	       .allowed_sizes_kb == [4]' <<<"$j" >/dev/null ||
		fail "status of A: $j" || return 1
	out=$("$M" status --cgroup "$b")
	grep -q "^  none attached to $b" <<<"$out" || fail "status --cgroup B: $out" || return 1
}
