#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make bench`: boot the patched kernel in a VM (2 vCPUs, 2 GiB, 1 GiB zram
# swap) and run the standard `mthpctl bench` set:
#   redis noBGSAVE (with the static per-size caps 16K, 32K, 64K, each a static setting the policy is compared with;
#   and at max the folios again 30s after the run, --settle, BENCH_SETTLE)
#   and BGSAVE at memory.high max and 128M; pagefault (auto's defaults
#   against always: the overhead with large folios); pagefault_4k (auto
#   --max-size 4K, i.e. auto's whole decision path answering 4 KiB, against
#   never: the overhead at 4 KiB, bpf_stats off); pagefault_hook (the same
#   with --hook-cost: its ns per call against a near-empty choose_orders
#   that also answers 4 KiB, called as often, and that floor's own cost);
#   sparse; the field's workloads, shell, gups, bloat, arenas (a
#   jemalloc-like allocator's bloat), compile (make -j2 of this tree's
#   compile-bench target) and memcached (each with simple beside auto);
#   mixed (a service, a batch job and small processes at once under a
#   node limit, each over a 20 s window; simple beside auto, the caps
#   16K and 64K alone); a redis run
#   on a madvise host (--host madvise: the host's default alone, the host
#   at always, the caps, simple and auto); the scale figures
#   (scripts/bench-scale.sh, 200 policies); and
#   the demo (scripts/demo.sh --guest, ~2 min) for its decision timeline.
# Each benchmark starts with the zram swap emptied (and mthpctl settles
# the rest: caches, compaction, khugepaged; its report shows the state).
# Then, on the host, the plots (scripts/bench-plots.py) beside the tables.
# Writes into OUT (default .output/bench/<UTC date>/, linked as
# .output/bench/latest):
#   bench.txt    the tables, as mthpctl prints them
#   bench.json   {"kernel", "started", "seconds", "redis_nobgsave", "redis_bgsave",
#                 "redis_madvise", "pagefault", "pagefault_4k", "pagefault_hook", "sparse",
#                 "shell", "gups", "bloat", "arenas", "compile", "memcached", "mixed",
#                 "scale"}
#   *.json, *.err, console.log  per benchmark JSON, progress, VM console
#   demo.txt, timeline.jsonl, probes.jsonl  the demo's output and timeline
#   bench-redis.png, bench-folios.png, demo-timeline.png  the plots
#
# Usage: scripts/bench.sh [-k KDIR] [-o OUT] [-r REPEATS] [-t TIMEOUT_S] [-- EXTRA-BENCH-ARGS]
#   KDIR      kernel result dir (default: scripts/kernel-build.sh, cached)
#   REPEATS   runs per mode and level (default 3; BENCH_REPEATS in make), at
#             least: BENCH_UNTIL_WIDTH=PCT and BENCH_MAX_TIME=DURATION
#             (environment; make passes them) give every benchmark
#             --until-width and --max-time (see mthpctl-bench(8), ROUNDS)
#   BENCH_SIZES (environment) the caps of the noBGSAVE run (default 16K,32K,64K)
#   SCALE_N (environment) policies of the scale run (default 200)
#   EXTRA     appended to every redis run, e.g. -- --keys 100000 --requests 100000
#
# Exit status: 0 all ran; 1 a benchmark (or the demo) failed; 2 usage or
# not built; 124-126 the VM timed out, never reported, or the kernel
# splatted (scripts/vm-run.sh); 4 the benchmarks ran and their tables and
# JSON are written, but the plots failed (the warning names the rerun:
# scripts/bench-plots.py OUT). A failed plot never removes a table.
#
# Inside the guest the same script runs with --guest OUT.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
M=$top/mthpctl

guest() {
	local out=$1; shift
	local repeats=${BENCH_REPEATS:-3} t0 rc=0
	t0=$(date +%s)
	cd "$out" || exit 1
	# zram swap, emptied before each benchmark: what an earlier one pushed
	# out is not in the next one's swap (mthpctl-bench(8), START STATE;
	# mthpctl settles the rest itself and reports the state it found)
	zram_reset() {
		swapoff /dev/zram0 2>/dev/null
		echo 1 >/sys/block/zram0/reset &&
			echo 1G >/sys/block/zram0/disksize &&
			mkswap /dev/zram0 >/dev/null && swapon /dev/zram0
	}
	{
		echo "zram swap:"
		modprobe zram 2>/dev/null
		[ -e /sys/block/zram0 ] || cat /sys/class/zram-control/hot_add >/dev/null
		zram_reset && swapon --show
	} >zram.log 2>&1 || { echo "bench: zram swap setup failed:"; cat zram.log; }
	"$M" status >status.txt 2>&1

	run() {		# NAME BENCH-ARGS...
		local name=$1; shift
		local s=$(date +%s)
		# rounds until the ratios' intervals are narrow, when asked
		set -- "$@" ${BENCH_UNTIL_WIDTH:+--until-width "$BENCH_UNTIL_WIDTH"} \
			${BENCH_MAX_TIME:+--max-time "$BENCH_MAX_TIME"}
		echo "bench: $name: mthpctl bench $*" >&2
		zram_reset >>zram.log 2>&1 || echo "bench: $name: zram reset failed (zram.log)" >&2
		{
			echo "=== $name: mthpctl bench $* --repeats $repeats"
			"$M" bench "$@" --repeats "$repeats" --json-out "$out/$name.json" \
				2> >(tee "$out/$name.err" >&2)
			local r=$?
			echo "(exit $r, $(( $(date +%s) - s )) s)"
			echo
			return $r
		} | tee -a bench.txt
		[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	}
	: >bench.txt
	run redis_nobgsave redis --high max,128M --sizes "${BENCH_SIZES:-16K,32K,64K}" \
		--settle "${BENCH_SETTLE:-30s}" "$@"
	run redis_bgsave redis --high max,128M --bgsave "$@"
	run pagefault pagefault
	run pagefault_4k pagefault --modes never,policy --policy "auto --max-size 4K"
	run pagefault_hook pagefault --modes never,policy --policy "auto --max-size 4K" --hook-cost
	run sparse sparse
	run shell shell
	run gups gups
	run bloat bloat
	run arenas arenas
	# the objects of this tree's pure sources and unit tests, -j2 (2 vCPUs)
	run compile compile --jobs 2
	# memaslap made 2,600-3,600 operations/s in the VM (16 connections,
	# TCG): 40,000 operations are ~15 s a run
	run memcached memcached --keys 40000 --requests 40000
	run mixed mixed
	run redis_madvise redis --host madvise --high max,128M --sizes "${BENCH_SIZES:-16K,32K,64K}" "$@"
	swapoff /dev/zram0 2>/dev/null
	echo "bench: scale: scripts/bench-scale.sh -n ${SCALE_N:-200}" >&2
	{
		echo "=== scale: scripts/bench-scale.sh -n ${SCALE_N:-200}"
		"$top/scripts/bench-scale.sh" -n "${SCALE_N:-200}" -o "$out/scale.json" 2>&1
		echo "(exit $?)"
	} | tee -a bench.txt
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	# the demo last (it leaves every size at 'always'), with the swap the
	# scale run went without: its thrasher needs somewhere to go
	swapon /dev/zram0 2>/dev/null
	echo "bench: demo: scripts/demo.sh --guest (decision timeline)" >&2
	"$top/scripts/demo.sh" --guest >demo.txt 2>&1 || {
		rc=1
		echo "bench: demo failed (see $out/demo.txt)" >&2
	}
	local samples
	samples=$(grep -c . timeline.jsonl 2>/dev/null)
	echo "demo: ${samples:-0} timeline samples ($(tail -n1 demo.txt))" | tee -a bench.txt

	python3 - "$out" "$t0" <<'PY'
import json, os, sys, time
out, t0 = sys.argv[1], int(sys.argv[2])
res = {"kernel": os.uname().release,
       "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
       "seconds": int(time.time()) - t0}
for n in ("redis_nobgsave", "redis_bgsave", "redis_madvise", "pagefault", "pagefault_4k",
          "pagefault_hook", "sparse", "shell", "gups", "bloat", "arenas", "compile",
          "memcached", "mixed", "scale"):
    try:
        res[n] = json.load(open(os.path.join(out, n + ".json")))
    except Exception as e:
        res[n] = {"error": str(e)}
json.dump(res, open(os.path.join(out, "bench.json"), "w"), indent=2)
print("bench: %d s in the VM" % res["seconds"], file=sys.stderr)
PY
	return $rc
}

if [ "${1:-}" = --guest ]; then
	shift
	guest "$@"
	exit
fi

kdir= out= timeout=7200
while [ $# -gt 0 ]; do
	case $1 in
	-k) kdir=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	-r) export BENCH_REPEATS=$2; shift 2 ;;
	-t) timeout=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "bench.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	esac
done
[ -x "$M" ] && [ -x "$top/.output/tests/vm/thrasher" ] ||
	{ echo "bench.sh: build mthpctl and the demo's helpers first (make mthpctl vm-tests)" >&2; exit 2; }
[ -n "$kdir" ] || kdir=$("$top/scripts/kernel-build.sh" | tail -n1) || exit 1
if [ -z "$out" ]; then
	out=$top/.output/bench/$(date -u +%Y%m%dT%H%M%SZ)
	mkdir -p "$out"
	ln -sfn "$(basename "$out")" "$top/.output/bench/latest"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)
echo "bench: kernel $kdir, results in $out (about an hour under TCG: see mthpctl-bench(8))" >&2
"$top/scripts/vm-run.sh" -k "$kdir" -o "$out" -p 2 -m 2G -t "$timeout" -- \
	env BENCH_REPEATS="${BENCH_REPEATS:-3}" BENCH_SIZES="${BENCH_SIZES:-16K,32K,64K}" \
	SCALE_N="${SCALE_N:-200}" BENCH_UNTIL_WIDTH="${BENCH_UNTIL_WIDTH:-}" \
	BENCH_MAX_TIME="${BENCH_MAX_TIME:-}" \
	"$top/scripts/bench.sh" --guest "$out" "$@"
rc=$?
# plots of whatever was measured, even after a failure; never fatal to the tables
"$top/scripts/bench-plots.py" "$out"
plot_rc=$?
if [ "$plot_rc" != 0 ]; then
	echo "bench: warning: the plots failed (bench-plots.py status $plot_rc); tables and JSON are" \
		"kept; after fixing it: scripts/bench-plots.py $out" >&2
	[ "$rc" = 0 ] && rc=4
fi
echo "bench: finished with status $rc after $(( $(date +%s) - start )) s; tables: $out/bench.txt, JSON: $out/bench.json, plots: $out/*.png" >&2
exit $rc
