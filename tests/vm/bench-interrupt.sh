#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `mthpctl bench` restores everything when interrupted: start a run, send
# SIGINT (redis, while redis-benchmark runs) or SIGTERM (sparse, while the
# large process runs; pagefault --hook-cost while the policy runs; gups
# --host madvise while the array is updated), then check the exit status (128+N),
# every THP enabled value and overcommit back, the bench cgroup gone, no
# redis process, no policy pins, no temporary directory. As root in the VM:
#
#   scripts/vm-run.sh -k KDIR -- tests/vm/bench-interrupt.sh
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/bench-lib.sh"
M=$top/mthpctl
out=${MTHP_RESULTS:-$(mktemp -d /tmp/mthp-bench-int.XXXXXX)}/bench-interrupt
mkdir -p "$out"
passed=0 failed=0

result() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1)); echo "ok - $1"
	else
		failed=$((failed + 1)); echo "not ok - $1: $3"
	fi
}

# NAME SIGNAL WAIT-FOR-COMMAND BENCH-ARGS...
interrupt() {
	local name=$1 sig=$2 ready=$3; shift 3
	local pid rc i after left want
	bench_perturb
	local before=$(bench_settings)
	"$M" bench "$@" >"$out/$name.out" 2>"$out/$name.err" &
	pid=$!
	local is_ready=0
	for i in $(seq 300); do		# up to 60 s for the workload to start
		eval "$ready" && { is_ready=1; break; }
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	sleep 2
	if ! kill -0 $pid 2>/dev/null; then
		result "$name: still running when signalled" 1 "it ended early: $(tail -n 3 "$out/$name.err")"
		return
	fi
	# signalled only in the state the test names (the condition holds
	# still, right before the signal); else a failure, not a pass
	if [ $is_ready = 0 ] || ! eval "$ready"; then
		result "$name: in the state to interrupt ($ready)" 1 \
			"$([ $is_ready = 0 ] && echo "not within 60 s" || echo "no longer, 2 s later"): $(tail -n 3 "$out/$name.err")"
		kill -INT $pid; wait $pid
		return
	fi
	echo "#   $name: state while running: cgroups $(find "$BENCH_CG" -mindepth 1 -type d 2>/dev/null | tr "\n" " ")" \
	     "pins: $(ls "$PINS" 2>/dev/null | tr '\n' ' ')"
	kill -"$sig" $pid
	for i in $(seq 300); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 $pid 2>/dev/null; then
		result "$name: exits within 60 s of SIG$sig" 1 "still running"
		kill -KILL $pid
		wait $pid
		return
	fi
	wait $pid; rc=$?
	want=$((128 + $(kill -l "$sig")))
	result "$name: exit status $want after SIG$sig" $([ $rc = $want ]; echo $?) "exit $rc: $(tail -n 3 "$out/$name.err")"
	after=$(bench_settings)
	[ "$before" = "$after" ]
	result "$name: THP settings and overcommit restored" $? \
		"$(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"
	left=$(bench_leftovers)
	result "$name: cgroup, processes, pins and temp files gone" $? "$left"
	grep -q INTERRUPTED "$out/$name.out"
	result "$name: partial results printed" $? "no partial table on stdout"
}

# The VM's kernel has the series: the policy modes run, never skipped
# (without bpf_mthp_ops the run fails here).
modes=policy
st=$("$M" -j status 2>&1)
jq -e '.kernel.bpf_mthp_ops == true' <<<"$st" >/dev/null
result "the kernel has bpf_mthp_ops" $? "mthpctl -j status: $st"
interrupt redis INT 'pgrep -x redis-benchmark >/dev/null' \
	redis --modes "$modes" --keys 200000 --requests 200000 --high 64M --repeats 2 --port 16392
# --hook-cost: bpf_stats_enabled goes back to 0, no floor or policy link left
interrupt pagefault_hook INT '[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = 1 ] && [ -n "$(ls "$PINS" 2>/dev/null)" ]' \
	pagefault --modes policy --hook-cost --size 64M --iterations 100000 --repeats 2
# the small processes hold their memory only briefly; the large one runs on
# (cgroup.procs has size 0 in stat: read it, [ -s ] is never true)
interrupt sparse TERM '[ -n "$(cat "$BENCH_CG"/sparse/large/cgroup.procs 2>/dev/null)" ]' \
	sparse --procs 4 --map-size 64M --stride 64K --dense-size 256M --dense-passes 100 --repeats 2
# --host madvise: every size was at madvise for the run; the values found
# (bench_perturb: global madvise, sizes inherit, 64K madvise) come back
interrupt gups_madvise TERM '[ -n "$(cat "$BENCH_CG"/gups/cgroup.procs 2>/dev/null)" ] && grep -q "\[madvise\]" /sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled' \
	gups --host madvise --modes host,policy --array-size 256M --updates 10000000000 --repeats 2

echo "$passed passed, $failed failed"
[ $failed = 0 ]
