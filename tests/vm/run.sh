#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# VM integration tests of mthpctl on the patched kernel, run as root inside
# the VM by scripts/vm-check.sh (`make vm-check`):
#
#   scripts/vm-run.sh -k KDIR -- tests/vm/run.sh [TEST...]
#
# Every test uses the real mthpctl and measures the folio sizes the kernel
# really gave (tests/vm/faulter: /proc/self/pagemap + /proc/kpageflags).
# Prints `ok - NAME` / `not ok - NAME: reason` per test, then
# `N passed, N failed`; exits 1 on any failure. Needs `make vm-tests`.
# Logs of the helpers go to $MTHP_RESULTS/vm-tests (or a temporary dir).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
M=$top/mthpctl
H=$top/.output/tests/vm
CG=/sys/fs/cgroup/mthp-vm
PINS=/sys/fs/bpf/mthpctl
THP=/sys/kernel/mm/transparent_hugepage
WINDOW_MS=1000		# the auto policy's default window
MARGIN_MS=1000		# probe period, probe duration and wq latency under TCG
logs=${MTHP_RESULTS:-$(mktemp -d /tmp/mthp-vm-tests.XXXXXX)}/vm-tests
passed=0 failed=0 why=
helper_errs=$logs/helper-errors	# a helper that failed in a test fails it

note() { printf '#   %s\n' "$*"; }
fail() { why="$*"; return 1; }
now_ms() { date +%s%3N; }

run_test() {
	local name=$1
	why=
	: >"$helper_errs"
	if "t_$name" && [ ! -s "$helper_errs" ]; then
		passed=$((passed + 1))
		echo "ok - $name"
	else
		[ -s "$helper_errs" ] && why="${why:+$why; }a helper failed: $(paste -sd ';' "$helper_errs")"
		failed=$((failed + 1))
		echo "not ok - $name: ${why:-failed}"
	fi
	cleanup
}

# --- environment ----------------------------------------------------------

cg_kill_all() {
	local d
	[ -d "$CG" ] || return 0
	for d in $(find "$CG" -mindepth 1 -depth -type d); do
		echo max >"$d/memory.high" 2>/dev/null
		echo 1 >"$d/cgroup.kill" 2>/dev/null
	done
	for d in $(find "$CG" -mindepth 1 -depth -type d); do
		for _ in $(seq 50); do
			[ -z "$(cat "$d/cgroup.procs" 2>/dev/null)" ] && break
			sleep 0.1
		done
		rmdir "$d" 2>/dev/null
	done
}

cleanup() {
	"$M" detach --all >/dev/null 2>&1
	# (bash's "Killed" notices for the helpers go to /dev/null)
	{ cg_kill_all; wait; } 2>/dev/null
}

mkcg() {
	mkdir -p "$CG/$1" && echo "$CG/$1"
}

cg_id() { stat -c %i "$1"; }

thp_all() {	# MODE: every size and the top level
	local f
	for f in "$THP"/enabled "$THP"/hugepages-*/enabled; do
		[ -f "$f" ] && echo "$1" >"$f" 2>/dev/null
	done
}

setup() {
	mkdir -p "$logs"
	[ "$(id -u)" = 0 ] || { echo "run.sh: must run as root (inside the VM)" >&2; exit 2; }
	for f in "$M" "$H/faulter" "$H/thrasher" "$H/bpfobjs"; do
		[ -x "$f" ] || { echo "run.sh: $f missing (make mthpctl vm-tests)" >&2; exit 2; }
	done
	command -v jq >/dev/null || { echo "run.sh: jq missing (scripts/install-deps.sh)" >&2; exit 2; }
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	cg_kill_all
	rmdir "$CG" 2>/dev/null
	mkdir -p "$CG"
	echo +memory >"$CG/cgroup.subtree_control"
	"$M" detach --all >/dev/null 2>&1
	# All mTHP sizes and PMD THP on, so the sizes a policy removes show.
	saved_thp=()
	for f in "$THP"/enabled "$THP"/hugepages-*/enabled; do
		[ -f "$f" ] || continue
		saved_thp+=("$f=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$f")")
	done
	thp_all always
	if ! grep -q zram0 /proc/swaps; then
		echo 1G >/sys/block/zram0/disksize &&
		mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 ||
			echo "run.sh: zram swap could not be enabled" >&2
	fi
}

restore() {
	local s
	cleanup
	rmdir "$CG" 2>/dev/null
	for s in "${saved_thp[@]}"; do
		echo "${s#*=}" >"${s%%=*}" 2>/dev/null
	done
}

# --- probes ---------------------------------------------------------------

# Probe lines of FILE whose start_ms >= T and that satisfy the awk COND
# (fields as v["max_order"], v["large_pct"], v["o9"], ...).
probes() {
	local file=$1 t=$2 cond=${3:-1}
	awk -v t="$t" '/^probe=/ {
		delete v
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
		if (v["start_ms"] >= t && ('"$cond"')) print
	}' "$file"
}

field() { sed -n "s/.* $2=\([0-9-]*\).*/\1/p" <<<" $1"; }

# Wait until FILE has a probe started at or after T satisfying COND; print
# it. Fails at BASE + DEADLINE_MS (BASE defaults to T).
wait_probe() {
	local file=$1 t=$2 deadline=$3 cond=$4 base=${5:-$2} line
	while :; do
		line=$(probes "$file" "$t" "$cond" | head -n1)
		[ -n "$line" ] && { echo "$line"; return 0; }
		[ "$(now_ms)" -gt $((base + deadline)) ] && return 1
		sleep 0.1
	done
}

wait_line() {	# FILE REGEX SECONDS
	local i
	for i in $(seq $(($3 * 10))); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# --- what exists in bpffs and the kernel -----------------------------------

snapshot() {
	find "$PINS" 2>/dev/null | sort
	bpfobjs
}

# The snapshot (or what the function SNAPSHOT prints) equals BEFORE
# (struct_ops maps are freed after an RCU grace period: allow a moment).
same_as() {
	local before=$1 snap=${2:-snapshot} i
	for i in $(seq 30); do
		[ "$("$snap")" = "$before" ] && return 0
		sleep 0.1
	done
	diff <(echo "$before") <("$snap") | sed 's/^/#     /' >&2
	return 1
}

# The struct_ops links and maps in the kernel (tests/vm/bpfobjs). If the
# helper fails, the test that called it fails (run_test reads
# $helper_errs; a command substitution cannot set a variable), and the
# output is a line no snapshot equals: a list it could not read is never
# "nothing left behind".
bpfobjs() {
	local out rc
	out=$("$H/bpfobjs" 2>"$logs/bpfobjs.err")
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "bpfobjs: exit $rc: $(cat "$logs/bpfobjs.err")" | tee -a "$helper_errs" >&2
		echo "bpfobjs FAILED at $(date +%s%N)"
		return 1
	fi
	[ -z "$out" ] || printf '%s\n' "$out"
}

link_of_cgroup() {	# cgroup id -> link id(s)
	bpfobjs | sed -n "s/^link id=\([0-9]*\) map_id=[0-9]* cgroup_id=$1\$/\1/p"
}

status_json() { "$M" -j status "$@" | tee -a "$logs/status.json"; }
policy_json() {	# cgroup path -> its entry of status -j
	status_json | jq -c --arg cg "$1" '.policies[] | select(.cgroup == $cg)'
}

# --- 1: a policy cgroup and a sibling without policy --------------------------

t_auto_sibling() {
	local a b out ok ok4 line
	a=$(mkcg a) && b=$(mkcg b) || return 1
	out=$("$M" attach --cgroup "$a" 2>&1) || fail "attach: $out" || return 1
	grep -q "^attached policy auto" <<<"$out" || fail "attach printed: $out" || return 1
	# A is small (< 16M): a small process (1M probes, < 2M anon) there for
	# 3 s gets 4 KiB pages; a larger one (4M mlocked ballast, 4M probes)
	# in the same cgroup gets large folios (the small-cgroup rule is for
	# small processes); a 16M process in B
	"$H/faulter" -c "$a" -s 1 -n 12 -i 250 >"$logs/s1-a.out" 2>&1 &
	local pa=$!
	"$H/faulter" -c "$a" -b 4 -s 4 -n 12 -i 250 >"$logs/s1-a4.out" 2>&1 &
	local pa4=$!
	"$H/faulter" -c "$b" -s 16 -n 3 -i 200 >"$logs/s1-b.out" 2>&1 &
	local pb=$!
	wait $pa || fail "faulter in A failed: $(cat "$logs/s1-a.out")" || return 1
	wait $pa4 || fail "larger faulter in A failed: $(cat "$logs/s1-a4.out")" || return 1
	wait $pb || fail "faulter in B failed: $(cat "$logs/s1-b.out")" || return 1
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

# JSON EXPR-NUM EXPR-DEN MIN WHAT: NUM >= 90% of DEN, and DEN >= MIN (the
# ratio of a few calls shows nothing); notes the figures.
count_ratio() {
	local j=$1 num den
	num=$(jq "$2" <<<"$j") && den=$(jq "$3" <<<"$j") || fail "$5: cannot read $2 / $3 from $j" || return 1
	[ "$den" -ge "$4" ] || fail "$5: only $den page-fault calls counted (want >= $4): $j" || return 1
	[ $((num * 10)) -ge $((den * 9)) ] || fail "$5: $num of $den page-fault calls (< 90%)" || return 1
	note "$5: $num of $den page-fault calls ($((num * 100 / den))%)"
}

# --- 2: pressure: down the ladder to 4K, large folios back after ---------

t_auto_pressure() {
	local p f t0 t1 line react_on react_off j out wdur
	p=$(mkcg p) || return 1
	"$M" attach --cgroup "$p" >/dev/null || fail "attach failed" || return 1
	f=$logs/s2-probes.out
	# 24M mlocked (stays counted as anon under reclaim) + a 4M probe every 100ms
	"$H/faulter" -c "$p" -b 24 -s 4 -n 0 -d 120000 -i 100 >"$f" 2>&1 &
	wait_line "$f" '^ready' 20 || fail "faulter not ready: $(cat "$f")" || return 1
	t0=$(now_ms)
	line=$(wait_probe "$f" "$t0" 10000 'v["o9"] * 2 >= v["pages"]') ||
		fail "no large folios before pressure: $(tail -n1 "$f")" || return 1
	note "before pressure: large folios after $(( $(field "$line" start_ms) - t0 )) ms ($(field "$line" large_pct)% large)"

	"$H/thrasher" -c "$p" -s 64 >"$logs/s2-thrasher.out" 2>&1 &
	local thr=$!
	wait_line "$logs/s2-thrasher.out" '^ready' 60 || fail "thrasher not ready" || return 1
	t0=$(now_ms)
	echo 40M >"$p/memory.high" || fail "memory.high" || return 1
	wdur=$(( $(now_ms) - t0 ))
	# A probe may take seconds under memory.high throttling: the time that
	# counts is when its first 4K-only 2M chunk was faulted. The limit: the
	# stall must build up over up to two windows, then the ladder takes two
	# steps half a window apart (16K first, then 4K while the stall stays).
	local lim=$((3 * WINDOW_MS + MARGIN_MS))
	line=$(wait_probe "$f" 0 $((lim + 10000)) "v[\"first_small_ms\"] >= $t0" "$t0") ||
		fail "no 4K-only faults $((lim + 10000)) ms after memory.high=40M: $(tail -n1 "$f"); $(policy_json "$p" | jq -c '.sample | {stall_per_window_ns, usage_bytes, pressure, low_usage, ladder}')" || return 1
	react_on=$(( $(field "$line" first_small_ms) - t0 ))
	[ "$react_on" -le "$lim" ] ||
		fail "first 4K-only fault $react_on ms after memory.high=40M (limit $lim ms)" || return 1
	note "pressure on (memory.high=40M, 64M thrasher; the write took $wdur ms): 4K-only faults after $react_on ms"
	# it stays there while the pressure lasts, and says why
	sleep 2
	j=$(policy_json "$p")
	# (the size ladder starts at 16K and steps to 4K while the stall stays
	# at or above the threshold, as it does with this thrasher)
	jq -e '.restriction == "pressure" and .sample.pressure == true and
	       .sample.stall_per_window_ns >= .params.threshold_ns and
	       .sample.ladder.steps_down >= 2 and .sample.ladder.rung_kb == 4 and
	       .totals.fallbacks.pressure.pagefault > 0 and .allowed_sizes_kb == [4]' \
		<<<"$j" >/dev/null || fail "status under pressure: $j" || return 1
	note "under pressure: stall $(jq '.sample.stall_per_window_ns / 1000000 | floor' <<<"$j") ms per window, anon+shmem $(jq '.sample.usage_bytes / 1048576 | floor' <<<"$j") MiB, ladder at $(jq '.sample.ladder.rung_kb' <<<"$j")K after $(jq '.sample.ladder.steps_down' <<<"$j") steps down, pressure fallbacks $(jq '.totals.fallbacks.pressure.pagefault' <<<"$j")"
	# The hook's counting (the fast path answers most calls from the
	# memo): while only 4 KiB (or the ladder's 16K) is allowed, every
	# page-fault call narrows the offer, so pressure fallbacks are >= 90%
	# of the calls counted over 2 s (the policy's only cgroup is P).
	local j2 dj
	sleep 2
	j2=$(policy_json "$p")
	jq -e '.restriction == "pressure"' <<<"$j2" >/dev/null || fail "pressure ended during the count: $j2" || return 1
	dj=$(jq -n --argjson a "$j" --argjson b "$j2" '{calls: ($b.totals.calls.pagefault - $a.totals.calls.pagefault),
		pressure: ($b.totals.fallbacks.pressure.pagefault - $a.totals.fallbacks.pressure.pagefault)}')
	count_ratio "$dj" .pressure .calls 500 "under pressure, 2 s: pressure fallbacks" || return 1
	out=$("$M" status --cgroup "$p")
	grep -q "allows now:    4K only (pressure)" <<<"$out" || fail "status text: $out" || return 1
	grep -q "fell back:.* pressure/pagefault [1-9]" <<<"$out" || fail "status text: $out" || return 1
	t1=$(now_ms)
	# nothing above the ladder's first rung (16K) while the pressure lasts
	line=$(probes "$f" "$(( $(field "$line" end_ms) + 1 ))" "v[\"end_ms\"] < $t1 && v[\"max_order\"] > 2" | head -n1)
	[ -z "$line" ] || fail "flapped back to large folios under pressure: $line" || return 1

	t1=$(now_ms)
	echo max >"$p/memory.high"
	kill -9 $thr
	wait $thr 2>/dev/null
	line=$(wait_probe "$f" 0 $((2 * WINDOW_MS + MARGIN_MS + 10000)) "v[\"first_large_ms\"] >= $t1" "$t1") ||
		fail "no large folios after the pressure ended: $(tail -n1 "$f"); $(policy_json "$p" | jq -c '.sample')" || return 1
	react_off=$(( $(field "$line" first_large_ms) - t1 ))
	[ "$react_off" -le $((2 * WINDOW_MS + MARGIN_MS)) ] ||
		fail "first large folio $react_off ms after the pressure ended (limit $((2 * WINDOW_MS + MARGIN_MS)) ms)" || return 1
	line=$(wait_probe "$f" "$(field "$line" end_ms)" 5000 'v["o9"] * 2 >= v["pages"]') ||
		fail "large folios came back but not mostly 2M: $(tail -n1 "$f")" || return 1
	note "pressure off (memory.high=max, thrasher killed): large folios after $react_off ms ($(field "$line" large_pct)% large)"
	j=$(policy_json "$p")
	jq -e '.restriction == "none" and .sample.pressure == false' <<<"$j" >/dev/null ||
		fail "status after pressure: $j" || return 1
	echo "react_on_ms=$react_on react_off_ms=$react_off" >"$logs/s2-reaction"
}

# --- 3: --replace without a gap, detach, detach --all ---------------------

t_replace_detach() {
	local r f id link out t0 t1 line i n x1 x2
	r=$(mkcg r) || return 1
	id=$(cg_id "$r")
	out=$("$M" -j attach --cgroup "$r") || fail "attach: $out" || return 1
	link=$(jq -r .link_id <<<"$out")
	f=$logs/s3-probes.out
	"$H/faulter" -c "$r" -b 24 -s 4 -n 0 -d 120000 -i 50 >"$f" 2>&1 &
	wait_line "$f" '^ready' 20 || fail "faulter not ready" || return 1
	t0=$(now_ms)
	wait_probe "$f" "$t0" 10000 'v["o9"] * 2 >= v["pages"]' >/dev/null ||
		fail "auto: no large folios: $(tail -n1 "$f")" || return 1

	# auto -> fixed 64K: the same link, folios of at most 64K at once
	t0=$(now_ms)
	out=$("$M" -j attach --cgroup "$r" --policy fixed --max-size 64K --replace) ||
		fail "replace: $out" || return 1
	t1=$(now_ms)
	jq -e --argjson l "$link" '.action == "replaced" and .link_id == $l and .policy == "fixed" and
	       .params.max_size_bytes == 65536' <<<"$out" >/dev/null || fail "replace printed: $out" || return 1
	wait_probe "$f" "$t1" 3000 'v["o4"] > 0' >/dev/null || fail "fixed 64K: no 64K folios: $(tail -n1 "$f")" || return 1
	line=$(probes "$f" "$t1" 'v["max_order"] > 4' | head -n1)
	[ -z "$line" ] || fail "fixed 64K: larger folio after the replace: $line" || return 1

	# never <-> fixed 64K, 4 times, probing all along: a gap would show 2M
	t0=$(now_ms)
	for i in 1 2 3 4; do
		"$M" attach --cgroup "$r" --policy never --replace >/dev/null || fail "replace never" || return 1
		sleep 0.3
		"$M" attach --cgroup "$r" --policy fixed --max-size 64K --replace >/dev/null || fail "replace fixed" || return 1
		sleep 0.3
	done
	t1=$(now_ms)
	sleep 0.3
	n=$(probes "$f" "$t0" "v[\"end_ms\"] <= $t1" | wc -l)
	line=$(probes "$f" "$t0" 'v["max_order"] > 4' | head -n1)
	[ -z "$line" ] || fail "a folio above 64K during 8 replaces: $line" || return 1
	[ -n "$(probes "$f" "$t0" "v[\"end_ms\"] <= $t1 && v[\"max_order\"] == 0")" ] ||
		fail "never never took effect during the replaces" || return 1
	[ "$(link_of_cgroup "$id")" = "$link" ] || fail "links of the cgroup: $(link_of_cgroup "$id"), want only $link" || return 1
	note "10 replaces kept link $link; $n probes during 8 never<->fixed swaps, none above 64K"

	# detach: the global settings (2M) again, nothing left
	out=$("$M" detach --cgroup "$r") || fail "detach: $out" || return 1
	t1=$(now_ms)
	wait_probe "$f" "$t1" 3000 'v["o9"] * 2 >= v["pages"]' >/dev/null ||
		fail "no 2M folios after detach: $(tail -n1 "$f")" || return 1
	[ ! -e "$PINS/cg-$id" ] || fail "pins left: $(ls "$PINS/cg-$id")" || return 1
	[ -z "$(link_of_cgroup "$id")" ] || fail "link left after detach" || return 1
	out=$("$M" detach --cgroup "$r" 2>&1)
	[ $? = 5 ] || fail "second detach: $out" || return 1

	# detach --all
	x1=$(mkcg x1) && x2=$(mkcg x2) || return 1
	"$M" attach --cgroup "$x1" >/dev/null && "$M" attach --cgroup "$x2" --policy never >/dev/null &&
		"$M" attach --cgroup "$r" --policy fixed --max-size 16K >/dev/null || fail "attach x1/x2/r" || return 1
	[ "$(bpfobjs | grep -c '^link ')" = 3 ] || fail "want 3 links: $(bpfobjs)" || return 1
	out=$("$M" detach --all) || fail "detach --all: $out" || return 1
	[ "$out" = "detached 3 policies" ] || fail "detach --all printed: $out" || return 1
	[ -z "$(ls -A "$PINS" 2>/dev/null)" ] || fail "pins left: $(ls -A "$PINS")" || return 1
	[ -z "$(bpfobjs | grep '^link ')" ] || fail "links left: $(bpfobjs)" || return 1
	"$H/faulter" -c "$x2" -s 8 >"$logs/s3-x2.out" 2>&1 || fail "faulter x2" || return 1
	[ -n "$(probes "$logs/s3-x2.out" 0 'v["o9"] * 2 >= v["pages"]')" ] ||
		fail "x2 (was never) has no 2M folios after detach --all: $(tail -n1 "$logs/s3-x2.out")" || return 1
	out=$("$M" detach --all) && [ "$out" = "detached 0 policies" ] || fail "empty detach --all: $out" || return 1
}

# --- 4: status, text and JSON ---------------------------------------------

t_status() {
	local sa sf sn j out ida idf idn la lf ln
	sa=$(mkcg sa) && sf=$(mkcg sf) && sn=$(mkcg sn) || return 1
	"$M" attach --cgroup "$sa" --threshold 50ms --window 500ms --min-usage 8M >/dev/null &&
		"$M" attach --cgroup "$sf" --policy fixed --max-size 64K >/dev/null &&
		"$M" attach --cgroup "$sn" --policy never >/dev/null || fail "attach" || return 1
	ida=$(cg_id "$sa") idf=$(cg_id "$sf") idn=$(cg_id "$sn")
	la=$(link_of_cgroup "$ida") lf=$(link_of_cgroup "$idf") ln=$(link_of_cgroup "$idn")
	"$H/faulter" -c "$sa" -b 12 -s 4 -n 12 -i 100 >"$logs/s4-a.out" 2>&1 &
	"$H/faulter" -c "$sf" -s 4 >"$logs/s4-f.out" 2>&1 &
	"$H/faulter" -c "$sn" -s 4 >"$logs/s4-n.out" 2>&1 &
	wait
	"$M" -p status >"$logs/s4-status.json" || fail "status -p failed" || return 1
	python3 -m json.tool "$logs/s4-status.json" >/dev/null 2>&1 ||
		jq . "$logs/s4-status.json" >/dev/null || fail "status -p is not JSON" || return 1
	j=$(status_json) || fail "status -j failed" || return 1
	jq -e '.kernel | .btf and .bpf_mthp_ops and .psi_kfunc and .memcg_kfuncs and .bpf_wq and
	       .psi and .memory_controller and .bpffs and .cgroup2_mount == "/sys/fs/cgroup"' \
		<<<"$j" >/dev/null || fail "kernel: $(jq -c .kernel <<<"$j")" || return 1
	jq -e '.thp.enabled == "always" and
	       (.thp.sizes | map(select(.size_kb == 2048 and .enabled == "always" and
	                              (.stats.anon_fault_alloc | type) == "number")) | length) == 1 and
	       (.thp.sizes | map(select(.size_kb == 64 and .enabled == "always")) | length) == 1' \
		<<<"$j" >/dev/null || fail "thp: $(jq -c '.thp.sizes[0]' <<<"$j")" || return 1
	jq -e --arg a "$sa" --arg f "$sf" --arg n "$sn" --argjson la "$la" --argjson lf "$lf" \
	      --argjson ln "$ln" --argjson ida "$ida" --argjson idf "$idf" --argjson idn "$idn" '
	    (.policies | length) == 3 and
	    (.policies[] | select(.cgroup == $a) |
	       .cgroup_id == $ida and .link_id == $la and .attached and
	       .pin == "/sys/fs/bpf/mthpctl/cg-\($ida)" and .policy == "auto" and
	       .params == {window_ns: 500000000, threshold_ns: 50000000, min_usage_bytes: 8388608,
	                   max_size_bytes: null} and
	       .restriction == "none" and (.allowed_sizes_kb | index(2048) != null) and
	       .sample.samples > 0 and .sample.stall_valid and .sample.usage_valid and
	       (.sample.stall_per_window_ns | type) == "number" and
	       .sample.usage_bytes >= 8388608 and .totals.calls.pagefault > 0 and
	       (.totals.fallbacks | has("pressure") and has("low-usage") and has("no-sample") and has("cap") and has("sparse")) and
	       (.live.anon_shmem_bytes | type) == "number" and
	       (.live.memory_full_avg10 | type) == "number" and
	       .totals.samples > 0 and .totals.psi_errors == 0 and .totals.memcg_errors == 0 and
	       .hook.effective_map_ids == [.hook.struct_ops_map_id]) and
	    (.policies[] | select(.cgroup == $f) |
	       .cgroup_id == $idf and .link_id == $lf and .policy == "fixed" and
	       .params == {max_size_bytes: 65536} and .allowed_sizes_kb[-1] == 64 and
	       .allowed_sizes_kb[0] == 4 and .totals.fallbacks.cap.pagefault > 0) and
	    (.policies[] | select(.cgroup == $n) |
	       .cgroup_id == $idn and .link_id == $ln and .policy == "never" and
	       .params == {} and .allowed_sizes_kb == [4] and .totals.fallbacks.cap.pagefault > 0)' \
		<<<"$j" >/dev/null || fail "policies: $(jq -c .policies <<<"$j")" || return 1
	[ -e "/sys/fs/bpf/mthpctl/cg-$ida/link" ] && [ -e "/sys/fs/bpf/mthpctl/cg-$ida/totals" ] ||
		fail "pins of $sa missing" || return 1
	# the helpers' folios agree with what status claims
	[ -n "$(probes "$logs/s4-f.out" 0 'v["max_order"] == 4')" ] || fail "fixed 64K: $(tail -n1 "$logs/s4-f.out")" || return 1
	[ -n "$(probes "$logs/s4-n.out" 0 'v["max_order"] == 0')" ] || fail "never: $(tail -n1 "$logs/s4-n.out")" || return 1
	# --cgroup narrows to one policy
	out=$("$M" -j status --cgroup "$sf")
	jq -e --arg f "$sf" '(.policies | length) == 1 and .policies[0].cgroup == $f' <<<"$out" >/dev/null ||
		fail "status --cgroup: $out" || return 1
	# text
	out=$("$M" status)
	echo "$out" >"$logs/s4-status.txt"
	local re
	for re in '^  bpf_mthp_ops:       yes$' '^  kfuncs:             psi yes, memcg yes, bpf_wq yes$' \
		  '^  PSI:                on$' '^  cgroup2:            /sys/fs/cgroup \(memory controller: yes\)$' \
		  '^  bpffs:              mounted$' '^  2M +always +[0-9]+ +[0-9]+$' \
		  "^  $sa \\(cgroup id $ida\\)\$" \
		  '^    policy:        auto \(window 500ms, threshold 50ms, min-usage 8M\)$' \
		  "^    link:          id $la, attached\$" "^    pin:           /sys/fs/bpf/mthpctl/cg-$ida\$" \
		  '^    allows now:    4K .*2M$' '^    memory stall:  [0-9.]+[a-z]+ per 500ms \(policy\), full avg10 [0-9.]+% \(memory.pressure\)$' \
		  '^    anon\+shmem:    [0-9]+[KMG]? \(policy\), [0-9]+[KMG]? \(memory.stat\)$' \
		  '^    policy:        fixed \(max-size 64K\)$' '^    allows now:    4K( 8K)? 16K 32K 64K \(cap\)$' \
		  '^    policy:        never$' '^    allows now:    4K only \(cap\)$' \
		  '^    fell back:.* cap/pagefault [1-9]'; do
		grep -qE "$re" <<<"$out" || fail "status text has no line /$re/ (see $logs/s4-status.txt)" || return 1
	done
	# metrics: promtool accepts the exposition; the values match the policies
	command -v promtool >/dev/null || fail "promtool missing (scripts/install-deps.sh)" || return 1
	"$M" status --format=prometheus >"$logs/s4-metrics.prom" || fail "status --format=prometheus" || return 1
	promtool check metrics <"$logs/s4-metrics.prom" >"$logs/s4-promtool.txt" 2>&1 ||
		fail "promtool check metrics: $(cat "$logs/s4-promtool.txt")" || return 1
	# object: the policy object (struct_ops map id), shared by cgroups
	# attached with equal parameters
	local O='object=\"[0-9]+\"'
	for re in "^mthpctl_allowed_max_size_bytes\\{cgroup=\"$sf\",policy=\"fixed\",$O\\} 65536\$" \
		  "^mthpctl_restricted\\{cgroup=\"$sn\",policy=\"never\",$O,reason=\"cap\"\\} 1\$" \
		  "^mthpctl_fallbacks_total\\{cgroup=\"$sn\",policy=\"never\",$O,reason=\"cap\",tva=\"pagefault\"\\} [1-9]" \
		  "^mthpctl_hook_calls_total\\{cgroup=\"$sa\",policy=\"auto\",$O,tva=\"pagefault\"\\} [1-9]" \
		  "^mthpctl_anon_shmem_bytes\\{cgroup=\"$sa\",policy=\"auto\",$O\\} [1-9]" \
		  "^mthpctl_policy_info\\{cgroup=\"$sa\",policy=\"auto\",$O,params=\"auto \\(window 500ms, threshold 50ms, min-usage 8M\\)\"\\} 1\$" \
		  "^mthpctl_policies_in_effect\\{cgroup=\"$sa\",policy=\"auto\",$O\\} 1\$"; do
		grep -qE "$re" "$logs/s4-metrics.prom" || fail "metrics have no line /$re/ (see $logs/s4-metrics.prom)" || return 1
	done
	jq -e --arg a "$sa" '.policies[] | select(.cgroup == $a) | .sample_cgroup == $a' <<<"$j" >/dev/null ||
		fail "sample_cgroup of $sa: $(jq -c '.policies[].sample_cgroup' <<<"$j")" || return 1
	# A policy on a parent whose tasks all live in a child (a slice): the
	# state shown is the child's, and says so.
	local sl w
	sl=$(mkcg sl) && w=$(mkcg sl/w) || return 1
	echo +memory >"$sl/cgroup.subtree_control" || fail "memory controller for $w" || return 1
	"$M" attach --cgroup "$sl" >/dev/null || fail "attach $sl" || return 1
	"$H/faulter" -c "$w" -b 24 -s 4 -n 6 -i 100 >"$logs/s4-w.out" 2>&1 || fail "faulter in $w" || return 1
	out=$("$M" -j status --cgroup "$sl")
	jq -e --arg w "$w" '.policies[0] | .sample_cgroup == $w and .sample.samples > 0 and
	       .sample.usage_valid and .cgroups_tracked >= 1 and .cgroups_in_subtree == 2' <<<"$out" >/dev/null ||
		fail "status of a parent with its tasks in a child: $out" || return 1
	out=$("$M" status --cgroup "$sl")
	grep -q "^    state of:      $w (the subtree's largest; none of its own)\$" <<<"$out" ||
		fail "no 'state of: $w' line: $out" || return 1
	# A second policy on the child: the kernel (BPF_PROG_QUERY) reports
	# both in effect there, the child's first, and status says so.
	local js jw
	"$M" attach --cgroup "$w" --policy fixed --max-size 64K >/dev/null || fail "attach $w" || return 1
	js=$("$M" -j status --cgroup "$sl") && jw=$("$M" -j status --cgroup "$w") || fail "status" || return 1
	jq -e --argjson p "$(jq '.policies[0].hook.struct_ops_map_id' <<<"$js")" \
	      '.policies[0].hook | .effective_map_ids == [.struct_ops_map_id, $p]' <<<"$jw" >/dev/null ||
		fail "effective policies of $w: $(jq -c '.policies[0].hook' <<<"$jw"), parent: $(jq -c '.policies[0].hook' <<<"$js")" || return 1
	out=$("$M" status --cgroup "$w")
	grep -q '^    in effect:     2 bpf_mthp_ops policies here and above, all must allow a size$' <<<"$out" ||
		fail "no 'in effect: 2' line for $w" || return 1
	"$M" detach --cgroup "$w" >/dev/null || fail "detach $w" || return 1
	note "policy on $sl, tasks in $w: status shows the child's state ($(jq -r '.policies[0].sample.samples' <<<"$("$M" -j status --cgroup "$sl")") samples)"
}

# --- 5: refusals: exit code, one line, nothing left behind -----------------

# One "mthpctl: error: ..." line, or argp's usage error (its message and
# its "Try ... --help" line).
one_line_error() {
	local n
	n=$(wc -l <<<"$1")
	{ [ "$n" = 1 ] && grep -q '^mthpctl: error: ' <<<"$1"; } ||
		{ [ "$n" = 2 ] && sed -n 2p <<<"$1" | grep -q '^Try .*--help'; }
}

# refuse NAME CODE CMD...: CMD exits CODE with one "mthpctl: error:" line on
# stderr, and bpffs and the kernel's struct_ops links/maps are unchanged.
refuse() {
	local name=$1 code=$2 before out rc
	shift 2
	before=$(snapshot)
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != "$code" ]; then
		refusal_fail+=("$name: exit $rc, want $code ($out)")
	elif ! one_line_error "$out"; then
		refusal_fail+=("$name: message: $out")
	elif ! same_as "$before"; then
		refusal_fail+=("$name: left something behind")
	else
		refusal_ok+=("$name")
	fi
	printf '%s\texit %s\t%s\n' "$name" "$rc" "$out" >>"$logs/s5-refusals.txt"
}

t_refusals() {
	local c att tmpd fakebtf out
	refusal_ok=() refusal_fail=()
	c=$(mkcg ref) && att=$(mkcg ref-attached) || return 1
	"$M" attach --cgroup "$att" >/dev/null || fail "attach" || return 1

	refuse not-root-attach 2 setpriv --reuid=65534 --regid=65534 --clear-groups "$M" attach --cgroup "$c"
	refuse not-root-detach 2 setpriv --reuid=65534 --regid=65534 --clear-groups "$M" detach --cgroup "$att"
	refuse not-root-detach-all 2 setpriv --reuid=65534 --regid=65534 --clear-groups "$M" detach --all
	refuse no-cap-bpf 2 setpriv --inh-caps=-bpf --bounding-set=-bpf "$M" attach --cgroup "$c"
	refuse missing 4 "$M" attach --cgroup "$CG/does-not-exist"
	refuse not-a-directory 4 "$M" attach --cgroup "$c/cgroup.procs"
	refuse not-cgroup2 4 "$M" attach --cgroup /proc
	refuse empty-path 4 "$M" attach --cgroup ""
	tmpd=$(mktemp -d /tmp/mthp-cg1.XXXXXX)
	if mount -t cgroup -o none,name=mthpt1 cgroup "$tmpd" 2>/dev/null; then
		mkdir -p "$tmpd/x"
		refuse cgroup-v1 4 "$M" attach --cgroup "$tmpd/x"
		refuse cgroup-v1-root 4 "$M" attach --cgroup "$tmpd"
		rmdir "$tmpd/x"
		umount "$tmpd"
	else
		refusal_fail+=("cgroup-v1: cannot mount a named cgroup v1 hierarchy")
	fi
	rmdir "$tmpd"
	refuse bpffs-not-mounted 6 unshare -m sh -c \
		'while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done; exec "$0" attach --cgroup "$1"' "$M" "$c"
	refuse bpffs-not-mounted-detach 6 unshare -m sh -c \
		'while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done; exec "$0" detach --all' "$M"
	refuse already-attached 5 "$M" attach --cgroup "$att"
	refuse already-attached-other-policy 5 "$M" attach --cgroup "$att" --policy never
	refuse detach-not-attached 5 "$M" detach --cgroup "$c"
	# The kernel's BTF as seen through a private mount namespace, with the
	# type renamed: what mthpctl sees on a kernel without the series.
	fakebtf=$(mktemp /tmp/mthp-btf.XXXXXX)
	if python3 -c 'import sys; d=open("/sys/kernel/btf/vmlinux","rb").read(); open(sys.argv[1],"wb").write(d.replace(b"bpf_mthp_ops", b"bpf_mthp_opX"))' "$fakebtf" 2>/dev/null; then
		refuse kernel-lacks-bpf_mthp_ops 3 unshare -m sh -c \
			'mount --bind "$2" /sys/kernel/btf/vmlinux || exit 99; exec "$0" attach --cgroup "$1"' "$M" "$c" "$fakebtf"
		out=$(unshare -m sh -c 'mount --bind "$1" /sys/kernel/btf/vmlinux && exec "$0" status' "$M" "$fakebtf")
		grep -q '^  bpf_mthp_ops:       no (apply kernel/)$' <<<"$out" ||
			refusal_fail+=("status without bpf_mthp_ops: $(head -n3 <<<"$out")")
	else
		refusal_fail+=("kernel-lacks-bpf_mthp_ops: cannot copy the BTF")
	fi
	rm -f "$fakebtf"
	# bad option values
	refuse window-too-short 1 "$M" attach --cgroup "$c" --window 5ms
	refuse window-too-long 1 "$M" attach --cgroup "$c" --window 2min
	refuse window-no-unit 1 "$M" attach --cgroup "$c" --window 1000
	refuse threshold-zero 1 "$M" attach --cgroup "$c" --threshold 0ms
	refuse threshold-over-window 1 "$M" attach --cgroup "$c" --threshold 2s
	refuse threshold-garbage 1 "$M" attach --cgroup "$c" --threshold fast
	refuse min-usage-bad-unit 1 "$M" attach --cgroup "$c" --min-usage 16X
	refuse min-usage-negative 1 "$M" attach --cgroup "$c" --min-usage -1M
	refuse max-size-not-pow2 1 "$M" attach --cgroup "$c" --policy fixed --max-size 48K
	refuse max-size-below-page 1 "$M" attach --cgroup "$c" --policy fixed --max-size 2K
	refuse max-size-zero 1 "$M" attach --cgroup "$c" --policy fixed --max-size 0
	refuse max-size-above-pmd 1 "$M" attach --cgroup "$c" --policy fixed --max-size 8G
	refuse threshold-fraction-of-ns 1 "$M" attach --cgroup "$c" --threshold 1.5ns
	refuse policy-unknown 1 "$M" attach --cgroup "$c" --policy bogus
	refuse fixed-without-max-size 1 "$M" attach --cgroup "$c" --policy fixed
	refuse never-with-max-size 1 "$M" attach --cgroup "$c" --policy never --max-size 64K
	refuse fixed-with-window 1 "$M" attach --cgroup "$c" --policy fixed --max-size 64K --window 1s
	refuse no-cgroup 1 "$M" attach
	refuse unknown-option 1 "$M" attach --cgroup "$c" --bogus
	refuse extra-argument 1 "$M" attach --cgroup "$c" extra
	refuse unknown-command 1 "$M" frobnicate
	refuse no-command 1 "$M"
	refuse detach-nothing 1 "$M" detach
	refuse detach-both 1 "$M" detach --all --cgroup "$c"
	refuse status-missing-cgroup 4 "$M" status --cgroup "$CG/does-not-exist"
	# an empty path is named as such, not printed as an empty name
	out=$("$M" attach --cgroup '' 2>&1)
	[ "$out" = "mthpctl: error: the cgroup path is empty (give a cgroup2 directory, e.g. /sys/fs/cgroup/NAME)" ] ||
		refusal_fail+=("empty path message: $out")
	# decimal durations and sizes are accepted (and attach for real)
	if "$M" attach --cgroup "$c" --window 1.5s --threshold 0.25s --min-usage 1.5M >/dev/null; then
		out=$("$M" -j status --cgroup "$c")
		jq -e '.policies[0].params | .window_ns == 1500000000 and .threshold_ns == 250000000 and
		       .min_usage_bytes == 1572864' <<<"$out" >/dev/null ||
			refusal_fail+=("decimal options: $(jq -c '.policies[0].params' <<<"$out")")
		"$M" detach --cgroup "$c" >/dev/null || refusal_fail+=("detach after the decimal options")
	else
		refusal_fail+=("attach --window 1.5s --threshold 0.25s --min-usage 1.5M refused")
	fi
	# JSON errors
	out=$("$M" -j attach --cgroup "$CG/does-not-exist")
	jq -e '.exit_code == 4 and (.error | test("does not exist"))' <<<"$out" >/dev/null ||
		refusal_fail+=("json error: $out")
	# the attached policy survived all of it
	[ "$(link_of_cgroup "$(cg_id "$att")" | wc -l)" = 1 ] || refusal_fail+=("the attached policy is gone")
	note "${#refusal_ok[@]} refusals checked: ${refusal_ok[*]}"
	[ ${#refusal_fail[@]} = 0 ] || fail "$(printf '%s; ' "${refusal_fail[@]}")" || return 1
}

# --- 6: races: two attaches at once, attach against detach ---------------

# Two `mthpctl attach` on one cgroup at once: exactly one wins, the other
# exits 5 (already attached); the kernel holds one link, bpffs one pin
# directory. Then attach and detach at once: whichever order, no stray
# link or pin is left after a final detach.
t_races() {
	local c id i p1 p2 r1 r2 out
	c=$(mkcg race) || return 1
	id=$(cg_id "$c")
	for i in 1 2 3; do
		"$M" attach --cgroup "$c" --policy never >/dev/null 2>"$logs/s6-a$i.err" & p1=$!
		"$M" attach --cgroup "$c" --policy fixed --max-size 64K >/dev/null 2>"$logs/s6-b$i.err" & p2=$!
		wait "$p1"; r1=$?
		wait "$p2"; r2=$?
		[ "$(printf '%s\n' "$r1" "$r2" | sort | tr '\n' ' ')" = "0 5 " ] ||
			fail "round $i: exits $r1 and $r2, want 0 and 5 ($(cat "$logs/s6-a$i.err" "$logs/s6-b$i.err"))" || return 1
		out=$("$M" -j status --cgroup "$c")
		jq -e '(.policies | length) == 1 and (.policies[0].hook.effective_map_ids | length) == 1' \
			<<<"$out" >/dev/null || fail "round $i: not one policy in effect: $out" || return 1
		[ "$(link_of_cgroup "$id" | wc -l)" = 1 ] || fail "round $i: links $(link_of_cgroup "$id")" || return 1
		[ -z "$(ls -d /sys/fs/bpf/mthpctl/*_new* 2>/dev/null)" ] ||
			fail "round $i: half-made pin directories left" || return 1
		"$M" detach --cgroup "$c" >/dev/null || fail "round $i: detach" || return 1
	done
	for i in 1 2 3; do
		"$M" attach --cgroup "$c" >/dev/null 2>&1 &
		"$M" detach --cgroup "$c" >/dev/null 2>&1 &
		wait
		"$M" detach --cgroup "$c" >/dev/null 2>&1
		[ -z "$(link_of_cgroup "$id")" ] && [ ! -e "/sys/fs/bpf/mthpctl/cg-$id" ] ||
			fail "attach against detach, round $i: link $(link_of_cgroup "$id") or pins left" || return 1
	done
	note "3 rounds of two attaches at once: one won, one exited 5; 3 rounds of attach against detach left nothing"
}

# --- 7: equal parameters share one policy object ----------------------------

# Two cgroups attached with equal parameters are linked to one loaded
# object (one struct_ops map, two links); --private and other parameters
# load their own. The shared object decides for both, survives the detach
# of the cgroup that loaded it, and is freed with its last link.
t_share() {
	local a b c d ida idb out oa ob oc od obj calls0 calls1 f
	a=$(mkcg sh-a) && b=$(mkcg sh-b) && c=$(mkcg sh-c) && d=$(mkcg sh-d) || return 1
	ida=$(cg_id "$a") idb=$(cg_id "$b")
	oa=$("$M" -j attach --cgroup "$a" --policy fixed --max-size 64K) || fail "attach a: $oa" || return 1
	ob=$("$M" -j attach --cgroup "$b" --policy fixed --max-size 64K) || fail "attach b: $ob" || return 1
	oc=$("$M" -j attach --cgroup "$c" --policy fixed --max-size 64K --private) || fail "attach c: $oc" || return 1
	od=$("$M" -j attach --cgroup "$d" --policy fixed --max-size 32K) || fail "attach d: $od" || return 1
	obj=$(jq -r .object_id <<<"$oa")
	jq -e '.shared == false' <<<"$oa" >/dev/null || fail "a shares: $oa" || return 1
	jq -e --argjson o "$obj" '.shared and .object_id == $o' <<<"$ob" >/dev/null ||
		fail "b does not share a's object $obj: $ob" || return 1
	jq -e --argjson o "$obj" '(.shared | not) and .object_id != $o' <<<"$oc" >/dev/null ||
		fail "--private c shares: $oc" || return 1
	jq -e --argjson o "$obj" --argjson oc "$(jq .object_id <<<"$oc")" \
		'(.shared | not) and .object_id != $o and .object_id != $oc' <<<"$od" >/dev/null ||
		fail "d (32K) shares: $od" || return 1
	# the kernel: the links of a and b on one struct_ops map
	[ "$(bpfobjs | grep -c "^link .* map_id=$obj ")" = 2 ] ||
		fail "links on map $obj: $(bpfobjs | grep '^link')" || return 1
	out=$(status_json)
	jq -e --arg a "$a" --arg b "$b" --arg c "$c" --arg d "$d" '[.policies[] |
		select(.cgroup == $a or .cgroup == $b) | .object_cgroups] == [2, 2] and
		([.policies[] | select(.cgroup == $c or .cgroup == $d) | .object_cgroups] == [1, 1])' \
		<<<"$out" >/dev/null || fail "status object_cgroups: $out" || return 1
	out=$("$M" -j status --cgroup "$b")
	jq -e '.policies[0].object_cgroups == 2' <<<"$out" >/dev/null || fail "status --cgroup b: $out" || return 1
	# (into files first: grep -q stops reading early, and pipefail would
	# count the writer's SIGPIPE as a failure)
	"$M" status --cgroup "$b" >"$logs/s7-status-b.txt"
	grep -q "^    object: .*shared by 2 cgroups" "$logs/s7-status-b.txt" ||
		fail "status --cgroup b text: $(cat "$logs/s7-status-b.txt")" || return 1
	"$M" status --format=prometheus >"$logs/s7-metrics.prom"
	grep -q "^mthpctl_policy_attached{.*object=\"$obj\"} 1" "$logs/s7-metrics.prom" ||
		fail "no object label in prometheus output (see $logs/s7-metrics.prom)" || return 1

	# the shared object decides for b, and counts in both views
	calls0=$(policy_json "$a" | jq .totals.calls.pagefault)
	f=$logs/s7-b.out
	"$H/faulter" -c "$b" -s 8 >"$f" 2>&1 || fail "faulter b: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o4"] > 0')" ] && [ -z "$(probes "$f" 0 'v["max_order"] > 4')" ] ||
		fail "b under the shared 64K cap: $(tail -n1 "$f")" || return 1
	calls1=$(policy_json "$a" | jq .totals.calls.pagefault)
	[ "$calls1" -gt "$calls0" ] || fail "a's (shared) counters did not move: $calls0 -> $calls1" || return 1

	# detach a: b keeps the object, and its cap
	"$M" detach --cgroup "$a" >/dev/null || fail "detach a" || return 1
	[ ! -e "$PINS/cg-$ida" ] || fail "a's pins left" || return 1
	[ "$(bpfobjs | grep -c "^link .* map_id=$obj cgroup_id=$idb\$")" = 1 ] ||
		fail "b's link after detach a: $(bpfobjs | grep '^link')" || return 1
	jq -e '.policies[0].object_cgroups == 1' <<<"$("$M" -j status --cgroup "$b")" >/dev/null ||
		fail "b still counted as shared" || return 1
	f=$logs/s7-b2.out
	"$H/faulter" -c "$b" -s 8 >"$f" 2>&1 || fail "faulter b: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o4"] > 0')" ] && [ -z "$(probes "$f" 0 'v["max_order"] > 4')" ] ||
		fail "b after a's detach: $(tail -n1 "$f")" || return 1

	# replace b by the parameters of d: b joins d's object
	out=$("$M" -j attach --cgroup "$b" --policy fixed --max-size 32K --replace) || fail "replace b: $out" || return 1
	jq -e --argjson od "$(jq .object_id <<<"$od")" '.shared and .object_id == $od' <<<"$out" >/dev/null ||
		fail "b did not join d's object: $out" || return 1
	# object $obj had its last link in b: freed
	for _ in $(seq 30); do
		grep -q "^map id=$obj " <<<"$(bpfobjs)" || break
		sleep 0.1
	done
	! grep -q "^map id=$obj " <<<"$(bpfobjs)" || fail "map $obj outlived its last link" || return 1
	"$M" detach --all >/dev/null || fail "detach --all" || return 1
	[ -z "$(bpfobjs | grep '^link ')" ] && [ -z "$(ls -A "$PINS" 2>/dev/null)" ] ||
		fail "left after detach --all: $(bpfobjs)" || return 1
	note "a and b on struct_ops map $obj (2 links), --private and 32K apart; b kept the 64K cap after a's detach; map freed with its last link"
}

# --- 8: version and diagnostics --------------------------------------------

# The kernel's BTF with one name changed, bind-mounted over
# /sys/kernel/btf/vmlinux in a private mount namespace: what mthpctl and
# libbpf see there. FROM and TO have the same length.
fake_btf() {	# FROM TO FILE
	python3 -c 'import sys
d = open("/sys/kernel/btf/vmlinux", "rb").read()
f, t = ("\0%s\0" % sys.argv[1]).encode(), ("\0%s\0" % sys.argv[2]).encode()
assert len(f) == len(t) and d.count(f) == 1
open(sys.argv[3], "wb").write(d.replace(f, t))' "$@"
}

# `version`, `-V` and their JSON on the patched kernel (everything there,
# also for a user without privilege), the verdict where something is
# missing, libbpf's warnings (a refused program's verifier log) without -v
# and its debug output only with -v, and the completion of attached
# cgroups from `mthpctl -j status`.
t_version() {
	local j out err rc re c1 c2 tmpf before
	j=$("$M" -j version) || fail "version -j: exit $?" || return 1
	echo "$j" >"$logs/s8-version.json"
	jq -e --arg rel "$(uname -r)" '
	    (.version | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")) and
	    (.libbpf_version | test("^1\\.[0-9]+$")) and .kernel_release == $rel and
	    (.kernel | .btf and .bpf_mthp_ops and .psi_kfunc and .memcg_kfuncs and .bpf_wq and .psi and
	               .memory_controller and .bpffs and .cgroup2_mount == "/sys/fs/cgroup") and
	    .ready == true and .missing == []' <<<"$j" >/dev/null ||
		fail "version -j: $j" || return 1
	# -V anywhere, -j before or after it, prints the same; a command named
	# with it does not run
	for out in "$("$M" -V -j)" "$("$M" -j --version)" "$("$M" -j status -V)" \
		   "$("$M" -V -j attach --cgroup /nonexistent)"; do
		[ "$(jq -S 'del(.kernel.bpf_stats_enabled)' <<<"$out")" = "$(jq -S 'del(.kernel.bpf_stats_enabled)' <<<"$j")" ] ||
			fail "-V differs from version: $out" || return 1
	done
	"$M" -p version | jq -e '.ready' >/dev/null || fail "version -p is not JSON" || return 1
	out=$("$M" version) || fail "version: exit $?" || return 1
	echo "$out" >"$logs/s8-version.txt"
	for re in "^mthpctl v$(jq -r .version <<<"$j")\$" "^using libbpf v$(jq -r .libbpf_version <<<"$j")\$" \
		  "^kernel $(uname -r):\$" '^  BTF:                yes \(/sys/kernel/btf/vmlinux\)$' \
		  '^  bpf_mthp_ops:       yes$' '^  kfuncs:             psi yes, memcg yes, bpf_wq yes$' \
		  '^  PSI:                on$' '^  cgroup2:            /sys/fs/cgroup \(memory controller: yes\)$' \
		  '^  bpffs:              mounted$' '^ready:                yes'; do
		grep -qE "$re" <<<"$out" || fail "version text has no line /$re/: $out" || return 1
	done
	! grep -q missing <<<"$out" || fail "version text names something missing: $out" || return 1
	# no privilege needed
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$M" -j version) ||
		fail "version as nobody: exit $?" || return 1
	jq -e '.ready and .kernel.bpf_mthp_ops' <<<"$out" >/dev/null || fail "version as nobody: $out" || return 1
	# the verdict names what is missing, once, and still exits 0
	out=$(unshare -m sh -c 'while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done
		exec "$0" -j version' "$M") || fail "version without bpffs: exit $?" || return 1
	jq -e '.ready == false and (.missing | map(.what)) == ["bpffs"] and
	       (.missing[0].fix | test("mount -t bpf"))' <<<"$out" >/dev/null ||
		fail "version without bpffs: $out" || return 1
	tmpf=$(mktemp /tmp/mthp-btf.XXXXXX)
	fake_btf bpf_mthp_ops bpf_mthp_opX "$tmpf" || fail "cannot copy the BTF" || return 1
	out=$(unshare -m sh -c 'mount --bind "$1" /sys/kernel/btf/vmlinux && exec "$0" -j version' "$M" "$tmpf")
	jq -e '.ready == false and (.missing | map(.what)) == ["bpf_mthp_ops"] and .kernel.btf and
	       (.kernel.bpf_mthp_ops | not)' <<<"$out" >/dev/null ||
		fail "version without bpf_mthp_ops: $out" || return 1

	# libbpf: nothing on stderr when all goes well, its debug output with -v
	c1=$(mkcg v1) && c2=$(mkcg "v 2") || return 1
	err=$("$M" attach --cgroup "$c1" 2>&1 >/dev/null) || fail "attach $c1: $err" || return 1
	[ -z "$err" ] || fail "attach printed on stderr without -v: $err" || return 1
	err=$("$M" -v attach --cgroup "$c2" --policy never 2>&1 >/dev/null) || fail "attach -v $c2: $err" || return 1
	grep -q '^libbpf: ' <<<"$err" || fail "attach -v printed no libbpf debug output: $err" || return 1
	err=$("$M" status 2>&1 >/dev/null) && [ -z "$err" ] || fail "status printed on stderr: $err" || return 1
	# the completion of --cgroup offers the attached cgroups (a space in
	# a name kept), from the real `mthpctl -j status`
	out=$("$top/tests/complete.sh" "$M" detach --cgroup "$CG/" | paste -sd '|')
	[ "$out" = "$c2|$c1" ] || fail "completion of detach --cgroup: '$out', want '$c2|$c1'" || return 1
	out=$("$top/tests/complete.sh" "$M" status -c "$CG/v1" | paste -sd '|')
	[ "$out" = "$c1" ] || fail "completion of status -c $CG/v1: '$out'" || return 1
	# (cleanup's cg_kill_all splits paths at spaces: remove it here)
	"$M" detach --cgroup "$c2" >/dev/null && rmdir "$c2" || fail "detach and remove $c2" || return 1

	# A program the kernel refuses: libbpf's warnings with the verifier's
	# log, without -v, above the one error line that points at them; exit
	# 7, JSON error on stdout, nothing left behind. (rss_anon renamed in
	# the BTF libbpf reads: its CO-RE relocation of ctx->rss_anon finds no
	# target, libbpf poisons the instruction, the verifier refuses it.)
	"$M" detach --cgroup "$c1" >/dev/null || fail "detach $c1" || return 1
	fake_btf rss_anon rss_anoX "$tmpf" || fail "cannot copy the BTF" || return 1
	before=$(snapshot)
	out=$(unshare -m sh -c 'mount --bind "$2" /sys/kernel/btf/vmlinux && exec "$0" -j attach --cgroup "$1"' \
		"$M" "$c1" "$tmpf" 2>"$logs/s8-refused.err")
	rc=$?
	err=$(cat "$logs/s8-refused.err")
	rm -f "$tmpf"
	[ "$rc" = 7 ] || fail "refused program: exit $rc, want 7 ($out; $err)" || return 1
	jq -e '.exit_code == 7 and (.error | test("loading the BPF policy failed: .*(libbpf.s warnings, if any, are above|libbpf printed the verifier.s log above)"))' \
		<<<"$out" >/dev/null || fail "refused program, JSON: $out" || return 1
	for re in "^libbpf: prog 'choose_orders': BPF program load failed" \
		  "^libbpf: prog 'choose_orders': -- BEGIN PROG LOAD LOG --" '^-- END PROG LOAD LOG --' \
		  'bpf_mthp_ctx.rss_anon'; do
		grep -qE "$re" <<<"$err" || fail "refused program: stderr has no /$re/ (see $logs/s8-refused.err)" || return 1
	done
	same_as "$before" || fail "refused program left something behind" || return 1
	note "version: libbpf $(jq -r .libbpf_version <<<"$j"), ready; verdicts without bpffs and bpf_mthp_ops; refused program: exit 7 with the verifier log ($(wc -l <"$logs/s8-refused.err") lines on stderr)"
}

# --- 9: SIGKILL at each step of attach ---------------------------------------

# No pin left half-made that a later attach or detach cannot handle:
# mthpctl kills itself (MTHPCTL_DEBUG_KILL_AT) where each step of attach
# ends, a new attach, a replace, and a link to a shared object. Whatever
# the kill left, the cgroup has at most one policy, the next attach and
# detach succeed, and a final detach --all leaves no link and no pin.
# No leftover pin directory may hold a link: removing it must never
# detach a live policy.
kill_check() {	# CGROUP ID WHAT: the state after a kill is one a later run handles
	local c=$1 id=$2 what=$3 n d
	n=$(link_of_cgroup "$id" | wc -l)
	[ "$n" -le 1 ] || fail "$what: $n links on the cgroup" || return 1
	for d in "$PINS/cg-${id}"_*; do
		[ -e "$d" ] || continue
		[ ! -e "$d/link" ] || fail "$what: leftover $d holds a link" || return 1
	done
	# a later attach handles it (--replace if the kill came after the link)
	if [ "$n" = 1 ]; then
		"$M" attach --cgroup "$c" --policy never --replace >/dev/null 2>"$logs/s9.err"
	else
		"$M" attach --cgroup "$c" --policy never >/dev/null 2>"$logs/s9.err"
	fi || fail "$what: the next attach failed: $(cat "$logs/s9.err")" || return 1
	[ "$(link_of_cgroup "$id" | wc -l)" = 1 ] && [ -z "$(ls -d "$PINS/cg-${id}"_* 2>/dev/null)" ] ||
		fail "$what: after the next attach: links $(link_of_cgroup "$id"), $(ls "$PINS")" || return 1
}

t_kill_steps() {
	local c d id idd step rc n=0 other
	c=$(mkcg kill) && d=$(mkcg kill-other) || return 1
	id=$(cg_id "$c") idd=$(cg_id "$d")
	# a new attach (own object: 64K is nobody else's yet)
	for step in checks probe pins open load ready pin link; do
		# (in a group with stderr: bash's "Killed" notice goes there)
		{ MTHPCTL_DEBUG_KILL_AT=$step "$M" attach --cgroup "$c" --policy fixed --max-size 64K >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] || fail "new attach, $step: exit $rc, want 137 (SIGKILL)" || return 1
		kill_check "$c" "$id" "new attach killed after $step" || return 1
		"$M" detach --cgroup "$c" >/dev/null || fail "detach after $step" || return 1
		n=$((n + 1))
	done
	# a replace: the cgroup keeps the old policy or has the new one, never none
	"$M" attach --cgroup "$c" --policy never >/dev/null || fail "attach never" || return 1
	for step in open load ready pin link; do
		# (in a group with stderr: bash's "Killed" notice goes there)
		{ MTHPCTL_DEBUG_KILL_AT=$step "$M" attach --cgroup "$c" --policy fixed --max-size 32K --replace \
			  >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] || fail "replace, $step: exit $rc" || return 1
		[ "$(link_of_cgroup "$id" | wc -l)" = 1 ] || fail "replace killed after $step: no policy" || return 1
		kill_check "$c" "$id" "replace killed after $step" || return 1
		n=$((n + 1))
	done
	"$M" detach --cgroup "$c" >/dev/null || fail "detach after the replaces" || return 1
	# a link to the shared object of another cgroup: the other keeps it
	"$M" attach --cgroup "$d" --policy fixed --max-size 16K >/dev/null || fail "attach other" || return 1
	other=$(link_of_cgroup "$idd")
	for step in share pin link; do
		# (in a group with stderr: bash's "Killed" notice goes there)
		{ MTHPCTL_DEBUG_KILL_AT=$step "$M" attach --cgroup "$c" --policy fixed --max-size 16K >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] || fail "shared attach, $step: exit $rc" || return 1
		kill_check "$c" "$id" "shared attach killed after $step" || return 1
		[ "$(link_of_cgroup "$idd")" = "$other" ] || fail "the other cgroup lost its link ($step)" || return 1
		"$M" detach --cgroup "$c" >/dev/null || fail "detach after shared $step" || return 1
		n=$((n + 1))
	done
	"$M" detach --all >/dev/null || fail "detach --all" || return 1
	[ -z "$(bpfobjs | grep '^link ')" ] && [ -z "$(ls -A "$PINS" 2>/dev/null)" ] ||
		fail "left after detach --all: $(bpfobjs | grep '^link') $(ls -A "$PINS")" || return 1
	note "$n attaches killed at a step end (new, replace, shared): every one left a state the next attach and detach handled"
}

# --- 10: faults around attach: read-only bpffs, a cgroup removed during
# attach, detach --all during a bench ------------------------------------------

thp_settings() { grep -H . "$THP"/enabled "$THP"/hugepages-*/enabled 2>/dev/null; }

t_faults() {
	local c id out rc i d pids=() rcs before f n=0
	c=$(mkcg flt) && d=$(mkcg flt-keep) || return 1
	id=$(cg_id "$c")
	"$M" attach --cgroup "$d" >/dev/null || fail "attach flt-keep" || return 1
	# bpffs read-only (this mount only, in a private namespace)
	out=$(unshare -m sh -c 'mount -o remount,bind,ro /sys/fs/bpf || exit 99; exec "$0" attach --cgroup "$1"' \
		"$M" "$c" 2>&1)
	rc=$?
	[ "$rc" = 7 ] && grep -q "Read-only file system" <<<"$out" ||
		fail "read-only bpffs: exit $rc, want 7 naming it: $out" || return 1
	[ -z "$(link_of_cgroup "$id")" ] && [ -z "$(ls -d "$PINS/cg-$id"* 2>/dev/null)" ] ||
		fail "read-only bpffs: the failed attach left a link or pins" || return 1
	out=$(unshare -m sh -c 'mount -o remount,bind,ro /sys/fs/bpf || exit 99; exec "$0" detach --all' "$M" 2>&1)
	rc=$?
	[ "$rc" = 7 ] || fail "detach --all on read-only bpffs: exit $rc: $out" || return 1
	[ -n "$(link_of_cgroup "$(cg_id "$d")")" ] || fail "read-only detach --all detached flt-keep" || return 1

	# attach against rmdir of its cgroup, each outcome forced: removed
	# before attach looks at it, exit 4 naming it; removed while attach is
	# stopped after its pins (the cgroup's fd open, no link yet), the
	# kernel refuses the dying cgroup (-ENOENT: its bpf refcount is zero
	# one RCU grace period after rmdir), exit 7 naming the errno. Nothing
	# is left behind either way.
	f=$(mkcg gone-before) || return 1
	rmdir "$f" || fail "rmdir $f" || return 1
	out=$("$M" attach --cgroup "$f" 2>&1)
	rc=$?
	[ "$rc" = 4 ] && grep -qF "$f" <<<"$out" || fail "attach of a removed cgroup: exit $rc, want 4 naming it: $out" || return 1
	f=$(mkcg gone-during) || return 1
	id=$(cg_id "$f")
	MTHPCTL_DEBUG_STOP_AT=pin "$M" attach --cgroup "$f" >"$logs/s10-during.out" 2>&1 &
	i=$!
	for n in $(seq 600); do
		[ "$(sed 's/.*) //' "/proc/$i/stat" 2>/dev/null | cut -d' ' -f1)" = T ] && break
		sleep 0.1
	done
	[ "$(sed 's/.*) //' "/proc/$i/stat" 2>/dev/null | cut -d' ' -f1)" = T ] ||
		{ kill -9 "$i"; wait "$i"; fail "attach never stopped after its pins: $(cat "$logs/s10-during.out")"; return 1; }
	rmdir "$f" || { kill -9 "$i"; wait "$i"; fail "rmdir $f while attach is stopped"; return 1; }
	sleep 3
	kill -CONT "$i"
	wait "$i"
	rc=$?
	out=$(cat "$logs/s10-during.out")
	[ "$rc" = 7 ] && grep -q "attaching the policy failed: No such file or directory" <<<"$out" ||
		fail "attach whose cgroup was removed before the link: exit $rc, want 7 with ENOENT: $out" || return 1
	[ -z "$(link_of_cgroup "$id")" ] && [ -z "$(ls -d "$PINS/cg-$id"* 2>/dev/null)" ] ||
		fail "the refused attach of a removed cgroup left a link or pins: $(ls -d "$PINS/cg-$id"* 2>/dev/null)" || return 1
	note "attach of a removed cgroup: exit 4; cgroup removed before the link: exit 7 (ENOENT from the kernel)"

	# and unforced: attached (the kernel detaches the link with the
	# cgroup) or refused (4 or 7 as above); detach --all removes what is
	# left
	for i in 1 2 3 4 5 6; do
		f=$(mkcg "gone-$i") || return 1
		"$M" attach --cgroup "$f" >/dev/null 2>"$logs/s10-gone-$i.err" &
		pids+=($!)
		sleep 0.0$i
		rmdir "$f" 2>/dev/null || { sleep 0.5; rmdir "$f"; }
	done
	rcs=
	for i in "${pids[@]}"; do
		wait "$i"; rcs+="$? "
	done
	for rc in $rcs; do
		case $rc in 0|4|7) ;; *) fail "attach against rmdir: exits $rcs ($(cat "$logs"/s10-gone-*.err))" || return 1 ;; esac
	done
	# no policy stays attached to a removed cgroup
	for i in $(seq 30); do
		n=$("$M" -j status | jq '[.policies[] | select(.attached and .cgroup == null)] | length')
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	[ "$n" = 0 ] || fail "$n policies still attached to removed cgroups" || return 1
	"$M" detach --all >/dev/null || fail "detach --all after the removals" || return 1
	[ -z "$(ls -A "$PINS" 2>/dev/null)" ] && [ -z "$(bpfobjs | grep '^link ')" ] ||
		fail "left after detach --all: $(ls -A "$PINS")" || return 1
	note "attach against rmdir, 6 rounds: exits $rcs"

	# detach --all while a bench runs with its policy: the bench ends,
	# restores the THP settings and leaves no pin
	before=$(thp_settings)
	f=$logs/s10-bench.out
	"$M" bench pagefault --modes always,policy --repeats 2 --iterations 8 --size 32M \
		--quiet >"$f" 2>&1 &
	i=$!
	for n in $(seq 600); do
		ls "$PINS" 2>/dev/null | grep -q '^cg-' && break
		sleep 0.1
	done
	ls "$PINS" 2>/dev/null | grep -q '^cg-' || fail "the bench never attached its policy: $(tail -n3 "$f")" || return 1
	"$M" detach --all >/dev/null || fail "detach --all during the bench" || return 1
	wait "$i"
	rc=$?
	[ "$rc" = 0 ] || fail "the bench exited $rc after its policy was detached: $(tail -n5 "$f")" || return 1
	[ "$(thp_settings)" = "$before" ] || fail "THP settings not restored after the bench" || return 1
	[ -z "$(ls -A "$PINS" 2>/dev/null)" ] || fail "pins left after the bench: $(ls -A "$PINS")" || return 1
	note "read-only bpffs: attach and detach --all exit 7, nothing changed; detach --all during a bench: bench exit 0, settings restored"
}

# --- madvise host: a policy grants the sizes left at madvise ----------------

# Every size at madvise (the safe host default): a cgroup with a policy
# gets large folios for a process that never calls madvise(), up to the
# policy's cap; a sibling without a policy gets 4 KiB pages; a process
# with PR_SET_THP_DISABLE in the granting cgroup gets 4 KiB pages (the
# prctl is a hard limit); status counts the madvise sizes as allowed.
t_madvise_host() {
	local g2 g64 s o2= o64= os= op= allowed= err= diff= prom= diff64=
	g2=$(mkcg grant-2m) && g64=$(mkcg grant-64k) && s=$(mkcg no-policy) || return 1
	thp_all madvise
	# measured first, the host put back before any check can return
	if ! "$M" attach --cgroup "$g2" --policy fixed --max-size 2M >/dev/null ||
	   ! "$M" attach --cgroup "$g64" --policy fixed --max-size 64K >/dev/null; then
		err="attach fixed 2M / 64K"
	else
		o2=$("$H/faulter" -c "$g2" -s 8 | grep '^probe=')
		o64=$("$H/faulter" -c "$g64" -s 8 | grep '^probe=')
		os=$("$H/faulter" -c "$s" -s 8 | grep '^probe=')
		op=$("$H/faulter" -c "$g2" -s 8 -P | grep '^probe=')
		allowed=$("$M" -j status --cgroup "$g2" | jq -c '.policies[0].allowed_sizes_kb')
		diff=$("$M" -j status --cgroup "$g2" | jq -c '.policies[0] | [.granted_sizes_kb, .taken_away_sizes_kb]')
		prom=$("$M" status --format=prometheus | grep -F "$g2")
	fi
	thp_all always
	# on the always host the same 64K cap takes the sizes above 64K away
	diff64=$("$M" -j status --cgroup "$g64" | jq -c '.policies[0] | [.granted_sizes_kb, .taken_away_sizes_kb]')
	[ -z "$err" ] || fail "$err" || return 1
	[[ $o2 == *" max_order=9 "* && $o2 == *" o9=2048 "* ]] ||
		fail "fixed 2M on a madvise host, no madvise(): want all 2048 pages in 2M folios: $o2" || return 1
	[[ $o64 == *" max_order=4 "* && $o64 == *" o4=2048 "* ]] ||
		fail "fixed 64K on a madvise host: want all 2048 pages in 64K folios: $o64" || return 1
	[[ $os == *" max_order=0 "* ]] || fail "a sibling without a policy got large folios: $os" || return 1
	[[ $op == *" max_order=0 "* ]] ||
		fail "PR_SET_THP_DISABLE in a granting cgroup got large folios: $op" || return 1
	jq -e 'index(2048) != null' <<<"$allowed" >/dev/null ||
		fail "status: the madvise host's 2M size is not among the sizes fixed 2M allows: $allowed" || return 1
	[ "$diff" = '[[16,32,64,128,256,512,1024,2048],[]]' ] ||
		fail "status on the madvise host: fixed 2M should grant every size and take none: $diff" || return 1
	grep -q '^mthpctl_size_granted{.*size_bytes="2097152"} 1$' <<<"$prom" &&
		! grep -q '^mthpctl_size_taken_away{' <<<"$prom" ||
		fail "prometheus on the madvise host: 2M granted, no size at always: $prom" || return 1
	[ "$diff64" = '[[],[128,256,512,1024,2048]]' ] ||
		fail "status on the always host: fixed 64K should take 128K..2M away: $diff64" || return 1
	note "madvise host: fixed 2M $(grep -o 'o9=[0-9]*' <<<"$o2"), fixed 64K $(grep -o 'o4=[0-9]*' <<<"$o64"), no policy $(grep -o 'max_order=[0-9]*' <<<"$os"), prctl $(grep -o 'max_order=[0-9]*' <<<"$op"); status allowed: $allowed"
}

# --- auto tells a dense fill from a sparse toucher by its fault addresses ---

# A fresh cgroup with auto, no limit: a large mapping written once in
# random order (a hash table, a GUPS array) or in order gets PMD folios in
# >= 90% of it, on a madvise host and on an always host; a toucher of one
# page per 256 KiB stays at 4 KiB (the sparse rule); on the madvise host a
# sibling without a policy gets nothing.
fill_o9() { grep -o ' o9=[0-9]*' <<<"$1" | cut -d= -f2; }
t_auto_fill() {
	local host g out o9 want=$((256 * 256 * 9 / 10)) seq= sib= sp= rnd=
	for host in madvise always; do
		rnd= seq= sp=
		thp_all "$host"
		g=$(mkcg "fill-rnd-$host") && "$M" attach --cgroup "$g" --policy auto >/dev/null &&
			rnd=$("$H/faulter" -c "$g" -s 256 -r | grep '^probe=')
		g=$(mkcg "fill-seq-$host") && "$M" attach --cgroup "$g" --policy auto >/dev/null &&
			seq=$("$H/faulter" -c "$g" -s 64 | grep '^probe=')
		g=$(mkcg "fill-sparse-$host") && "$M" attach --cgroup "$g" --policy auto >/dev/null &&
			sp=$("$H/faulter" -c "$g" -s 64 -t 256 | grep '^probe=')
		[ "$host" = madvise ] && sib=$("$H/faulter" -c "$(mkcg fill-nopolicy)" -s 64 -r | grep '^probe=')
		thp_all always
		o9=$(fill_o9 "$rnd")
		[ "${o9:-0}" -ge "$want" ] ||
			fail "$host host: 256M written in random order, want >= $want pages in 2M folios: $rnd" || return 1
		[ "$(fill_o9 "$seq")" -ge $((64 * 256 * 9 / 10)) ] ||
			fail "$host host: 64M written in order, want >= 90% in 2M folios: $seq" || return 1
		[[ $sp == *" pages=256 "* && $sp == *" max_order=0 "* ]] ||
			fail "$host host: one page per 256K of 64M, want 256 pages of 4K: $sp" || return 1
		note "$host host, auto: random fill $o9/65536 pages in 2M, in order $(fill_o9 "$seq")/16384, strided $(grep -o 'max_order=[0-9]*' <<<"$sp")"
	done
	[[ $sib == *" max_order=0 "* ]] || fail "madvise host: a sibling without a policy got large folios: $sib" || return 1
}

# --- 11: apply, a configuration of cgroup paths and units ----------------------

APPLIED=/run/mthpctl/applied

# snapshot plus apply's record of what it attached
apply_snapshot() { snapshot; cat "$APPLIED" 2>/dev/null; }

t_apply() {
	local a b h conf out rc before ida idb idh link j
	a=$(mkcg ap-a) && b=$(mkcg ap-b) && h=$(mkcg ap-hand) || return 1
	ida=$(cg_id "$a") idb=$(cg_id "$b") idh=$(cg_id "$h")
	rm -f "$APPLIED"
	conf=$logs/apply.conf
	printf '# two cgroups by path\n[%s]\npolicy = auto\nthreshold = 50ms\n\n[%s]\npolicy = fixed\nmax-size = 64K\n' \
		"$a" "$b" >"$conf"
	# attached by hand, named nowhere in the file: apply leaves it alone
	"$M" attach --cgroup "$h" --policy never >/dev/null || fail "attach by hand" || return 1

	# --dry-run: the plan, text and JSON; nothing changes
	before=$(apply_snapshot)
	out=$("$M" -j apply --config "$conf" --dry-run) || fail "dry run -j: $out" || return 1
	jq -e --arg a "$a" --arg b "$b" --arg src "$conf:2" '.dry_run and .changes == 2 and
	       ([.actions[].action] == ["attach", "attach"]) and .actions[0].target == $a and
	       .actions[0].source == $src and .actions[0].params.threshold_ns == 50000000 and
	       .actions[1].cgroup == $b and .actions[1].params.max_size_bytes == 65536 and
	       (.actions | all(.done == false)) and .dropins == []' <<<"$out" >/dev/null ||
		fail "dry run JSON: $out" || return 1
	out=$("$M" apply --config "$conf" --dry-run) || fail "dry run: $out" || return 1
	grep -q "^attach    $a: auto (window 1s, threshold 50ms, min-usage 16M)$" <<<"$out" &&
		grep -q '^dry run, nothing changed: 2 to attach, 0 to replace, 0 to detach, 0 unchanged$' <<<"$out" ||
		fail "dry run printed: $out" || return 1
	same_as "$before" apply_snapshot || fail "--dry-run changed something" || return 1

	# apply: both attached, as status reads them back
	out=$("$M" apply --config "$conf") || fail "apply: $out" || return 1
	grep -q "^attached  $b: fixed (max-size 64K)$" <<<"$out" &&
		grep -q '^2 to attach, 0 to replace, 0 to detach, 0 unchanged (done)$' <<<"$out" ||
		fail "apply printed: $out" || return 1
	policy_json "$a" | jq -e '.attached and .policy == "auto" and .params.threshold_ns == 50000000' >/dev/null &&
		policy_json "$b" | jq -e '.attached and .policy == "fixed" and .params.max_size_bytes == 65536' >/dev/null ||
		fail "status after apply: $(status_json | jq -c '[.policies[] | {cgroup, policy, params}]')" || return 1
	grep -q "^$ida [0-9]* 0 .* $a\$" "$APPLIED" && ! grep -q " $h\$" "$APPLIED" ||
		fail "state file: $(cat "$APPLIED")" || return 1

	# again: nothing to change, nothing changes
	before=$(apply_snapshot)
	out=$("$M" apply --config "$conf") || fail "second apply: $out" || return 1
	[ "$(tail -n1 <<<"$out")" = "nothing to change (2 policies as configured)" ] ||
		fail "second apply printed: $out" || return 1
	out=$("$M" -j apply --config "$conf") && jq -e '.changes == 0 and ([.actions[].action] == ["keep", "keep"])' <<<"$out" >/dev/null ||
		fail "second apply -j: $out" || return 1
	same_as "$before" apply_snapshot || fail "a second apply changed something" || return 1

	# edited: b's cap changes (replaced, same link), a is gone (detached),
	# the hand-attached policy stays
	link=$(link_of_cgroup "$idb")
	printf '[%s]\npolicy = fixed\nmax-size = 16K\n' "$b" >"$conf"
	out=$("$M" apply --config "$conf") || fail "apply edited: $out" || return 1
	grep -q "^replaced  $b: fixed (max-size 16K), was fixed (max-size 64K)$" <<<"$out" &&
		grep -q "^detached  $a (cgroup id $ida): no longer in the configuration$" <<<"$out" ||
		fail "apply edited printed: $out" || return 1
	[ "$(link_of_cgroup "$idb")" = "$link" ] || fail "replace made a new link" || return 1
	[ -z "$(link_of_cgroup "$ida")" ] && [ ! -e "$PINS/cg-$ida" ] || fail "$a still has a policy" || return 1
	policy_json "$b" | jq -e '.params.max_size_bytes == 16384' >/dev/null || fail "b not 16K" || return 1
	policy_json "$h" | jq -e '.attached and .policy == "never"' >/dev/null || fail "hand-attached policy gone" || return 1

	# a policy attached by hand to a cgroup apply detached: not apply's now
	"$M" attach --cgroup "$a" --policy never >/dev/null || fail "attach a by hand" || return 1
	out=$("$M" apply --config "$conf") && [ "$(tail -n1 <<<"$out")" = "nothing to change (1 policy as configured)" ] ||
		fail "apply after a hand attach: $out" || return 1
	policy_json "$a" | jq -e '.attached' >/dev/null || fail "apply detached a hand-attached policy" || return 1

	# a bad file is refused whole, with FILE:LINE, and nothing changes
	before=$(apply_snapshot)
	printf '[%s]\npolicy = never\n\n[%s]\nwindow = 5x\n' "$b" "$h" >"$logs/bad.conf"
	out=$("$M" apply --config "$logs/bad.conf" 2>&1)
	rc=$?
	[ "$rc" = 8 ] && [ "$out" = "mthpctl: error: $logs/bad.conf:5: [$h]: bad window '5x' (a duration from 10ms to 60s, e.g. 1s) (nothing changed)" ] ||
		fail "bad window: exit $rc: $out" || return 1
	printf '[%s]\npolicy = never\nmax_size = 2M\n' "$b" >"$logs/bad.conf"
	out=$("$M" -j apply --config "$logs/bad.conf")
	rc=$?
	[ "$rc" = 8 ] && jq -e --arg f "$logs/bad.conf:3: " '.exit_code == 8 and (.error | startswith($f + "unknown key '"'"'max_size'"'"'"))' <<<"$out" >/dev/null ||
		fail "unknown key: exit $rc: $out" || return 1
	# a path that is no cgroup: refused before anything changes (exit 4)
	printf '[%s]\npolicy = never\n[%s/nonexistent]\n' "$b" "$CG" >"$logs/bad.conf"
	out=$("$M" apply --config "$logs/bad.conf" 2>&1)
	rc=$?
	[ "$rc" = 4 ] && grep -q "^mthpctl: error: $logs/bad.conf:3: \[$CG/nonexistent\]: .*does not exist" <<<"$out" ||
		fail "missing cgroup: exit $rc: $out" || return 1
	same_as "$before" apply_snapshot || fail "a refused file changed something" || return 1

	# units without systemd: one line, exit 4, nothing changed
	[ ! -e /run/systemd/system ] || fail "/run/systemd/system exists in the VM" || return 1
	printf '[%s]\npolicy = never\n[redis.service]\npolicy = never\n' "$b" >"$logs/unit.conf"
	out=$("$M" apply --config "$logs/unit.conf" 2>&1)
	rc=$?
	[ "$rc" = 4 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
		grep -q "^mthpctl: error: $logs/unit.conf:3: \[redis.service\]: systemd is not running" <<<"$out" ||
		fail "unit without systemd: exit $rc: $out" || return 1
	same_as "$before" apply_snapshot || fail "the unit refusal changed something" || return 1

	# units with systemd as PID 1 (restarts, drop-ins, MemoryTHP=):
	# tests/vm/systemd.sh
	note "apply: dry run, attach 2, no-op, replace+detach, hand attach kept, 3 refusals (exit 8, 8, 4), no systemd (exit 4)"
}

# --- 11: a policy of the user's (attach --object) --------------------------

# The pins of cgroup id ID, by name, on one line.
pins_of() { ls "$PINS/cg-$1" 2>/dev/null | tr '\n' ' '; }

# The example policy (bpf/example_vma_size.bpf.c: 4 KiB pages in mappings
# below 64 MiB, folios of at most 64K in larger ones) attached with
# --object, as the kernel's folios and counters show; status, --replace
# between objects and the built-in policies, a second cgroup with an
# object of its own, detach; bad objects refused with exit 1 and nothing
# changed.
t_object() {
	local a b ida idb ex two none ex_real out j link f line a64 n64 folios obj_a
	ex=$top/.output/example_vma_size.bpf.o two=$H/ops_two.bpf.o none=$H/ops_none.bpf.o
	[ -f "$ex" ] && [ -f "$two" ] && [ -f "$none" ] || fail "objects missing (make vm-tests)" || return 1
	ex_real=$(readlink -f "$ex")
	a=$(mkcg obj-a) && b=$(mkcg obj-b) || return 1
	ida=$(cg_id "$a") idb=$(cg_id "$b")
	refusal_ok=() refusal_fail=()

	# without a policy: 2M folios in a small mapping (all sizes 'always')
	f=$logs/s11-none.out
	"$H/faulter" -c "$a" -s 8 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o9"] * 2 >= v["pages"]')" ] || fail "no 2M folios without a policy: $(tail -n1 "$f")" || return 1

	# bad objects and option mixes: exit 1, one line, nothing changed
	refuse obj-no-mthp-ops 1 "$M" attach --cgroup "$a" --object "$none"
	refuse obj-two-no-ops 1 "$M" attach --cgroup "$a" --object "$two"
	refuse obj-ops-missing 1 "$M" attach --cgroup "$a" --object "$two" --ops cap5k
	refuse obj-not-a-file 1 "$M" attach --cgroup "$a" --object "$logs/no-such.bpf.o"
	refuse obj-with-policy 1 "$M" attach --cgroup "$a" --object "$ex" --policy never
	refuse obj-with-max-size 1 "$M" attach --cgroup "$a" --object "$ex" --max-size 16K
	refuse ops-without-object 1 "$M" attach --cgroup "$a" --ops cap16k
	out=$("$M" attach --cgroup "$a" --object "$two" 2>&1)
	grep -q "has 2 bpf_mthp_ops maps (cap16k, cap4k): name the one to attach with --ops" <<<"$out" ||
		refusal_fail+=("two maps, no --ops: $out")
	out=$("$M" attach --cgroup "$a" --object "$none" 2>&1)
	grep -q "has no struct_ops map of struct bpf_mthp_ops (declare one in" <<<"$out" ||
		refusal_fail+=("no bpf_mthp_ops map: $out")
	[ ${#refusal_fail[@]} = 0 ] || fail "$(printf '%s; ' "${refusal_fail[@]}")" || return 1

	# attach the example
	out=$("$M" -j attach --cgroup "$a" --object "$ex") || fail "attach --object: $out" || return 1
	jq -e --arg f "$ex" '.action == "attached" and .policy == "object" and .object == $f and
	       .ops == "vma_size_ops" and .shared == false' <<<"$out" >/dev/null ||
		fail "attach --object printed: $out" || return 1
	link=$(jq .link_id <<<"$out")
	[ "$(pins_of "$ida")" = "link object totals " ] || fail "pins: $(pins_of "$ida")" || return 1
	[ "$(link_of_cgroup "$ida")" = "$link" ] || fail "links of $a: $(link_of_cgroup "$ida")" || return 1

	# a small mapping: 4 KiB pages only
	f=$logs/s11-small.out
	"$H/faulter" -c "$a" -s 8 -n 2 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	[ "$(probes "$f" 0 'v["max_order"] == 0 && v["pages"] == 2048' | wc -l)" = 2 ] ||
		fail "8M mapping under the example: $(tail -n1 "$f")" || return 1
	# a large one: 64K folios, none larger, in the faulter's own memory
	# (pagemap + kpageflags; the global hugepages-64kB counters count
	# every process and prove nothing about this cgroup)
	f=$logs/s11-large.out
	"$H/faulter" -c "$a" -s 96 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	line=$(probes "$f" 0 | head -n1)
	[ "$(field "$line" max_order)" = 4 ] && [ "$(field "$line" o4)" -gt 0 ] ||
		fail "96M mapping under the example: $line" || return 1
	folios=$(( $(field "$line" o4) / 16 ))
	note "example: 8M mapping 2/2 probes all 4K; 96M mapping max order 4, $folios 64K folios (kpageflags)"

	# status: the object, its counters (it has the convention's totals)
	j=$("$M" -j status --cgroup "$a")
	echo "$j" >>"$logs/status.json"
	jq -e --arg f "$ex_real" '.policies[0] | .policy == "object" and .attached and
	       .object.file == $f and .object.ops == "vma_size_ops" and .object.counters_known and
	       .totals.calls.pagefault > 0 and .totals.fallbacks.cap.pagefault > 0' <<<"$j" >/dev/null ||
		fail "status -j: $j" || return 1
	"$M" status --cgroup "$a" >"$logs/s11-status.txt"
	grep -qx "    policy:        object $ex_real (ops vma_size_ops)" "$logs/s11-status.txt" &&
		grep -q "^    decisions: " "$logs/s11-status.txt" ||
		fail "status: $(cat "$logs/s11-status.txt")" || return 1
	"$M" status >"$logs/s11-status-all.txt"
	grep -q "^  $a (cgroup id $ida)" "$logs/s11-status-all.txt" ||
		fail "status does not list $a" || return 1

	# while attached: another object without --replace (5), a bad one
	# with --replace (1); the policy stays
	refusal_ok=() refusal_fail=()
	refuse obj-attached 5 "$M" attach --cgroup "$a" --object "$two" --ops cap16k
	refuse obj-replace-bad 1 "$M" attach --cgroup "$a" --object "$none" --replace
	refuse obj-replace-ops-missing 1 "$M" attach --cgroup "$a" --object "$two" --ops x --replace
	[ ${#refusal_fail[@]} = 0 ] || fail "$(printf '%s; ' "${refusal_fail[@]}")" || return 1

	# --replace by the other object's cap16k map: same link, 16K folios,
	# counters unknown (it has no totals map)
	out=$("$M" -j attach --cgroup "$a" --object "$two" --ops cap16k --replace) || fail "replace: $out" || return 1
	jq -e --argjson l "$link" '.action == "replaced" and .link_id == $l and .ops == "cap16k"' <<<"$out" >/dev/null ||
		fail "replace printed: $out" || return 1
	[ "$(pins_of "$ida")" = "link object " ] || fail "pins after replace: $(pins_of "$ida")" || return 1
	f=$logs/s11-cap16k.out
	"$H/faulter" -c "$a" -s 8 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	line=$(probes "$f" 0 | head -n1)
	[ "$(field "$line" max_order)" = 2 ] || fail "cap16k: $line" || return 1
	j=$("$M" -j status --cgroup "$a")
	jq -e '.policies[0] | .object.ops == "cap16k" and (.object.counters_known | not) and .totals == null' \
		<<<"$j" >/dev/null || fail "status after replace: $j" || return 1
	"$M" status --cgroup "$a" >"$logs/s11-status2.txt"
	grep -q "^    counters:      unknown" "$logs/s11-status2.txt" ||
		fail "status text: $(cat "$logs/s11-status2.txt")" || return 1

	# to the built-in policy and back: the other kind's pins go
	"$M" attach --cgroup "$a" --policy fixed --max-size 32K --replace >/dev/null || fail "replace by fixed" || return 1
	[ "$(pins_of "$ida")" = "cgstate conf link pending sampler totals " ] ||
		fail "pins of fixed: $(pins_of "$ida")" || return 1
	"$M" attach --cgroup "$a" --object "$ex" --replace >/dev/null || fail "replace by the object" || return 1
	[ "$(pins_of "$ida")" = "link object totals " ] || fail "pins back: $(pins_of "$ida")" || return 1
	[ "$(link_of_cgroup "$ida")" = "$link" ] || fail "link after 3 replaces: $(link_of_cgroup "$ida")" || return 1

	# a second cgroup: an object of its own, never shared
	obj_a=$("$M" -j status --cgroup "$a" | jq .policies[0].hook.struct_ops_map_id)
	out=$("$M" -j attach --cgroup "$b" --object "$ex") || fail "attach b: $out" || return 1
	jq -e --argjson o "$obj_a" '(.shared | not) and .object_id != $o' <<<"$out" >/dev/null ||
		fail "b shares a's object $obj_a: $out" || return 1

	# detach: link and pins gone, 2M folios again
	"$M" detach --cgroup "$a" >/dev/null || fail "detach" || return 1
	[ -z "$(link_of_cgroup "$ida")" ] && [ ! -e "$PINS/cg-$ida" ] ||
		fail "left after detach: link $(link_of_cgroup "$ida"), pins $(pins_of "$ida")" || return 1
	f=$logs/s11-after.out
	"$H/faulter" -c "$a" -s 8 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o9"] * 2 >= v["pages"]')" ] || fail "no 2M folios after detach: $(tail -n1 "$f")" || return 1
	"$M" detach --cgroup "$b" >/dev/null && [ -z "$(link_of_cgroup "$idb")" ] && [ ! -e "$PINS/cg-$idb" ] ||
		fail "detach b" || return 1
	note "3 replaces kept link $link (object -> object -> fixed -> object); b got an object of its own (not map $obj_a); detach left nothing"
}

# --------------------------------------------------------------------------

all_tests=(auto_sibling hook_counts auto_pressure replace_detach status refusals races share version kill_steps faults madvise_host auto_fill apply object)
[ $# -gt 0 ] && all_tests=("$@")
setup
trap 'restore' EXIT
echo "# mthpctl VM integration tests on $(uname -r), logs in $logs"
for t in "${all_tests[@]}"; do
	run_test "$t"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
