#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make kernel-cost`: what the series costs an anonymous page fault on a
# distribution's configuration, against the same kernel without it.
#
# Both kernels are built with kernel/config plus kernel/config-distro
# (PREEMPT_DYNAMIC, preemptible RCU, JUMP_LABEL: what Debian, Fedora and
# Ubuntu ship): the base (KERNEL_SERIES=none scripts/kernel-build.sh) and
# the series.
# They boot in turn, PAIRS times each, in the order base, series, series,
# base, base, series, ... (no kernel always boots first), in the VM of
# `make bench` (2 vCPUs, 2 GiB, TCG). In each boot, ROUNDS rounds of
#   mthpctl bench pagefault --host madvise --modes always,host,never
# (rows: every size "always"; the "madvise" host, whose faults here get
# 4 KiB pages; never), and on the series in the same round a second run
# with the auto policy attached to a sibling cgroup, /sys/fs/cgroup/
# kernel-cost-sibling (one policy anywhere turns the static key on, so
# every fault of every cgroup takes the policy path's early filter), the
# two runs' order alternating from round to round.
#
# Figures (scripts/kernel-cost-report.py, summary.txt and summary.json):
# per row, each boot's median ns per 4 KiB page; the series against the
# base as the per-pair ratio of the two boots' medians (a pair: the base
# and the series boot next to each other in the order above), and a
# sibling policy against none as the per-round ratio within a series boot;
# each ratio's median with a distribution-free interval and its coverage
# (6 pairs or rounds at least for 95%).
#
# Usage: scripts/kernel-cost.sh [-o OUT] [-n PAIRS] [-r ROUNDS] [-s SIZE] [-i ITERATIONS]
#   OUT     results (default .output/kernel-cost/<UTC date>): boot-NN-KIND/
#           with each run's JSON (rR-none.json, rR-sibling.json), the
#           VM console and progress; env.json; summary.txt, summary.json;
#           failed-boots.txt if a boot measured nothing and was booted
#           again (its directory kept as boot-NN-KIND.failed-A)
#   PAIRS   boots of each kernel (default 6)
#   ROUNDS  rounds per boot (default 6)
#   SIZE, ITERATIONS  bench pagefault's --size and --iterations (default 32M, 8)
#
# Exit status: 0 measured and summarised; 1 a boot or a run failed (what
# was measured is kept and summarised); 2 usage, or a kernel not built;
# 124-126 from scripts/vm-run.sh (timeout, no report, kernel splat).
#
# Inside the guest: scripts/kernel-cost.sh --guest DIR KIND ROUNDS SIZE ITERATIONS
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
M=$top/mthpctl
SIBLING=/sys/fs/cgroup/kernel-cost-sibling
BOOT_RETRIES=2

guest() {
	local dir=$1 kind=$2 rounds=$3 size=$4 iters=$5 r rc=0 order
	cd "$dir" || exit 1
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	run() {		# NAME: one bench pagefault run into rR-NAME.json
		echo "kernel-cost: $kind round $r: $1" >&2
		"$M" bench pagefault --host madvise --modes always,host,never --repeats 1 \
			--size "$size" --iterations "$iters" --json-out "r$r-$1.json" \
			>>bench.txt 2>>bench.err || { echo "kernel-cost: $kind round $r: $1 failed" >&2; rc=1; }
	}
	sibling() {
		mkdir -p "$SIBLING" &&
			"$M" attach --cgroup "$SIBLING" >>bench.txt 2>>bench.err &&
			run sibling
		"$M" detach --cgroup "$SIBLING" >>bench.txt 2>>bench.err
		rmdir "$SIBLING" 2>/dev/null
		return 0
	}
	for r in $(seq 1 "$rounds"); do
		if [ "$kind" = base ]; then
			run none
			continue
		fi
		order="none sibling"
		[ $((r % 2)) = 0 ] && order="sibling none"
		for o in $order; do
			if [ "$o" = none ]; then run none; else sibling; fi
		done
	done
	return $rc
}

if [ "${1:-}" = --guest ]; then
	shift
	guest "$@"
	exit
fi

usage() { sed -n '/^# Usage:/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out= pairs=6 rounds=6 size=32M iters=8
while getopts "o:n:r:s:i:h" opt; do
	case $opt in
	o) out=$OPTARG ;;
	n) pairs=$OPTARG ;;
	r) rounds=$OPTARG ;;
	s) size=$OPTARG ;;
	i) iters=$OPTARG ;;
	*) usage ;;
	esac
done
for v in "$pairs" "$rounds" "$iters"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "kernel-cost: PAIRS, ROUNDS and ITERATIONS are positive integers (got $v)" >&2; exit 2; }
done
[ -x "$M" ] || { echo "kernel-cost: $M not built (make mthpctl)" >&2; exit 2; }

export KERNEL_CONFIG_EXTRA=$top/kernel/config-distro
base=$(KERNEL_SERIES=none "$top/scripts/kernel-build.sh" | tail -n 1) &&
	series=$("$top/scripts/kernel-build.sh" | tail -n 1) ||
	{ echo "kernel-cost: the kernels did not build (see above)" >&2; exit 2; }

out=${out:-$top/.output/kernel-cost/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out" || exit 2
cat >"$out/env.json" <<EOF
{"git_commit": "$(git -C "$top" rev-parse HEAD)", "started": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "base_kernel_key": "$(basename "$base")", "series_kernel_key": "$(basename "$series")",
 "config": ["kernel/config", "kernel/config-distro"], "vm": {"cpus": 2, "memory": "2G", "accel": "tcg"},
 "pairs": $pairs, "rounds": $rounds, "size": "$size", "iterations": $iters,
 "host": {"uname": "$(uname -sr)", "cpus": $(nproc)}}
EOF

status=0 n=0
for p in $(seq 1 "$pairs"); do
	kinds="base series"
	[ $((p % 2)) = 0 ] && kinds="series base"
	for kind in $kinds; do
		n=$((n + 1))
		dir=$out/boot-$(printf %02d "$n")-$kind
		mkdir -p "$dir"
		kdir=$base
		[ "$kind" = series ] && kdir=$series
		echo "kernel-cost: boot $n of $((2 * pairs)): $kind" >&2
		# A boot that measured nothing (seen once: an int3 Oops while the
		# boot itself enabled a static key, before any test ran, under
		# TCG) is booted again, up to BOOT_RETRIES times; the failed
		# attempt's directory is kept beside and listed in failed-boots.txt
		# (the summary says so): a pair without it could not rank at all.
		for attempt in $(seq 0 "$BOOT_RETRIES"); do
			"$top/scripts/vm-run.sh" -k "$kdir" -o "$dir" -p 2 -m 2G -t 1800 -- \
				"$top/scripts/kernel-cost.sh" --guest "$dir" "$kind" "$rounds" "$size" "$iters"
			rc=$?
			[ "$rc" = 0 ] || compgen -G "$dir/r*-*.json" >/dev/null && break
			[ "$attempt" -lt "$BOOT_RETRIES" ] || break
			splat=$(head -n1 "$dir/splats.txt" 2>/dev/null)
			printf 'boot %d %s: attempt %d measured nothing, exit %d%s\n' "$n" "$kind" \
				$((attempt + 1)) "$rc" "${splat:+: $splat}" |
				tee -a "$out/failed-boots.txt" >&2
			mv "$dir" "$dir.failed-$((attempt + 1))" && mkdir -p "$dir"
		done
		[ "$rc" = 0 ] || { echo "kernel-cost: boot $n ($kind) failed: $rc" >&2; status=1; }
		[ "$rc" -ge 124 ] && [ "$rc" -le 126 ] && status=$rc
	done
done
"$top/scripts/kernel-cost-report.py" "$out" | tee "$out/summary.txt" || status=1
echo "kernel-cost: results in $out" >&2
exit $status
