# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Shared by tests/vm/bench-*.sh: snapshot of everything `mthpctl bench`
# must restore, and checks that nothing of a run is left behind.
THP=/sys/kernel/mm/transparent_hugepage
BENCH_CG=/sys/fs/cgroup/mthpctl-bench
PINS=/sys/fs/bpf/mthpctl

# Every enabled file with its [selected] value, and the overcommit sysctl.
bench_settings() {
	local f
	for f in "$THP"/enabled "$THP"/hugepages-*/enabled; do
		[ -f "$f" ] && echo "$f $(grep -o '\[[a-z]*\]' "$f")"
	done
	echo "overcommit_memory $(cat /proc/sys/vm/overcommit_memory)"
	echo "bpf_stats_enabled $(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null)"
}

# Unusual values, so that "restored" means something (the run sets
# always/never and overcommit 1).
bench_perturb() {
	local f
	echo madvise >"$THP/enabled"
	for f in "$THP"/hugepages-*/enabled; do
		[ -f "$f" ] && echo inherit >"$f"
	done
	[ -f "$THP/hugepages-64kB/enabled" ] && echo madvise >"$THP/hugepages-64kB/enabled"
	echo 0 >/proc/sys/vm/overcommit_memory
	echo 0 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
}

# Prints what is left behind; returns 1 if anything is.
bench_leftovers() {
	local bad=0 d
	if [ -e "$BENCH_CG" ]; then
		echo "left: $BENCH_CG"; bad=1
	fi
	if pgrep -x redis-server >/dev/null || pgrep -x redis-benchmark >/dev/null; then
		echo "left: redis processes: $(pgrep -a -x 'redis-server|redis-benchmark' | tr '\n' ' ')"
		bad=1
	fi
	for d in "$PINS"/cg-*; do
		[ -e "$d" ] && { echo "left: pin $d"; bad=1; }
	done
	ls -d /tmp/mthpctl-bench.* >/dev/null 2>&1 && { echo "left: $(ls -d /tmp/mthpctl-bench.*)"; bad=1; }
	# struct_ops links (a policy or the --hook-cost floor) still attached
	# (a missing or failing helper is a failure, not "no link")
	local objs=${top:-.}/.output/tests/vm/bpfobjs out
	if ! out=$("$objs"); then
		echo "left: unknown: $objs failed or is missing (make vm-tests), struct_ops links not listed"
		bad=1
	elif grep -q '^link ' <<<"$out"; then
		echo "left: struct_ops links: $(grep '^link ' <<<"$out" | tr '\n' ' ')"; bad=1
	fi
	return $bad
}
