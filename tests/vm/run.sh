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
# This file holds what the tests share; each test is a file of its own in
# tests/vm/t/ (t_NAME() in NAME.sh), sourced below.
# Logs of the helpers go to $MTHP_RESULTS/vm-tests (or a temporary dir).
# MTHPCTL=PATH tests another build (as tests/vm/bench-short.sh does: a
# build broken on purpose, to see a test fail). On an arm64 guest the tool
# and helpers are those of `make ARCH=arm64 mthpctl vm-tests`, in
# .output-arm64/.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$top/.output M=${MTHPCTL:-$top/mthpctl}
if [ "$(uname -m)" = aarch64 ] && [ -x "$top/.output-arm64/mthpctl" ]; then
	OUT=$top/.output-arm64 M=${MTHPCTL:-$OUT/mthpctl}
fi
H=$OUT/tests/vm
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

# --- helpers of more than one test --------------------------------------

# JSON EXPR-NUM EXPR-DEN MIN WHAT: NUM >= 90% of DEN, and DEN >= MIN (the
# ratio of a few calls shows nothing); notes the figures.
count_ratio() {
	local j=$1 num den
	num=$(jq "$2" <<<"$j") && den=$(jq "$3" <<<"$j") || fail "$5: cannot read $2 / $3 from $j" || return 1
	[ "$den" -ge "$4" ] || fail "$5: only $den page-fault calls counted (want >= $4): $j" || return 1
	[ $((num * 10)) -ge $((den * 9)) ] || fail "$5: $num of $den page-fault calls (< 90%)" || return 1
	note "$5: $num of $den page-fault calls ($((num * 100 / den))%)"
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

# One "mthpctl: error: ..." line, or argp's usage error (its message and
# its "Try ... --help" line).
one_line_error() {
	local n
	n=$(wc -l <<<"$1")
	{ [ "$n" = 1 ] && grep -q '^mthpctl: error: ' <<<"$1"; } ||
		{ [ "$n" = 2 ] && sed -n 2p <<<"$1" | grep -q '^Try .*--help'; }
}

# --- the tests: one file each in tests/vm/t/, named after the test ---------

for f in "$top"/tests/vm/t/*.sh; do
	# shellcheck source=/dev/null
	. "$f"
done

# --------------------------------------------------------------------------

all_tests=(auto_sibling hook_counts auto_pressure replace_detach status refusals races share version kill_steps faults madvise_host auto_fill apply object thp_off)
[ $# -gt 0 ] && all_tests=("$@")
setup
trap 'restore' EXIT
echo "# mthpctl VM integration tests on $(uname -r), logs in $logs"
for t in "${all_tests[@]}"; do
	run_test "$t"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
