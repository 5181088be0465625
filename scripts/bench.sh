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
# Writes a run folder, OUT (default .output/bench/<UTC date>/, linked as
# .output/bench/latest; scripts/bench-publish.sh OUT copies its JSON and
# plots into tests/results/ to be committed):
#   env.json     where it ran: {"git_commit", "git_dirty", "kernel_key" (the
#                kernel result dir's name), "started", "host": {uname, cpus,
#                cpu_model, mem_total_kb, qemu}, "vm": {cpus, memory,
#                zram_swap, accel, timeout_s}, "bench": {repeats, mixed_repeats,
#                until_width, max_time, sizes, settle, scale_n, extra_args}}
#   starts.jsonl one line per benchmark as it starts, in the guest after the
#                zram reset: {"benchmark", "t", "free_pmd_blocks" (free
#                2 MiB blocks in /proc/buddyinfo, order >= 9, an order-10
#                block counting two), "swap_used_kb"}
#   bench.txt    the tables, as mthpctl prints them
#   bench.json   {"kernel", "started", "seconds", "environment" (env.json),
#                 "starts" (starts.jsonl), "redis_nobgsave", "redis_bgsave",
#                 "redis_madvise", "pagefault", "pagefault_4k", "pagefault_hook", "sparse",
#                 "shell", "gups", "bloat", "arenas", "compile", "memcached", "mixed",
#                 "scale"}
#   *.json, *.err, console.log  per benchmark JSON (every round's figures),
#                progress, VM console
#   table.md     README's results table for this run (scripts/bench-table.py)
#   demo.txt, timeline.jsonl, probes.jsonl  the demo's output and timeline
#   bench-redis.png, bench-folios.png, demo-timeline.png  the plots
#
# Usage: scripts/bench.sh [-k KDIR] [-o OUT] [-r REPEATS] [-t TIMEOUT_S] [-- EXTRA-BENCH-ARGS]
#   KDIR      kernel result dir (default: scripts/kernel-build.sh, cached)
#   BENCH_MIXED_REPEATS (environment) rounds of mixed, the shared-host row
#             (default 7: 6 are the fewest whose median interval reaches
#             95% coverage, 96.9%, and the seventh keeps them when a stall
#             of the guest leaves one column of a round with no throughput,
#             which gives that round no ratio; never fewer than REPEATS)
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
	local repeats=$BENCH_REPEATS t0 rc=0
	# mixed's rounds: its row claims a ranking, which needs 95% coverage
	local mixed_repeats=$(( BENCH_MIXED_REPEATS > repeats ? BENCH_MIXED_REPEATS : repeats ))
	t0=$(date +%s)
	cd "$out" || exit 1
	# zram swap, emptied before each benchmark: what an earlier one pushed
	# out is not in the next one's swap (mthpctl-bench(8), START STATE;
	# mthpctl settles the rest itself and reports the state it found)
	zram_reset() {
		swapoff /dev/zram0 2>/dev/null
		echo 1 >/sys/block/zram0/reset &&
			echo "$BENCH_ZRAM" >/sys/block/zram0/disksize &&
			mkswap /dev/zram0 >/dev/null && swapon /dev/zram0
	}
	{
		echo "zram swap:"
		modprobe zram 2>/dev/null
		[ -e /sys/block/zram0 ] || cat /sys/class/zram-control/hot_add >/dev/null
		zram_reset && swapon --show
	} >zram.log 2>&1 || { echo "bench: zram swap setup failed:"; cat zram.log; }
	"$M" status >status.txt 2>&1
	: >starts.jsonl
	# NAME: the free 2 MiB blocks and the swap in use as NAME starts, a
	# line of starts.jsonl (mthpctl bench records its own start state too,
	# after settling; this is what the benchmark found)
	start_record() {
		awk -v name="$1" -v t="$(date +%s)" '
			FILENAME == "/proc/buddyinfo" {	# Node 0, zone Normal, then orders 0..10
				for (i = 5 + 9; i <= NF; i++)
					pmd += $i * 2 ^ (i - 5 - 9)
			}
			FILENAME == "/proc/meminfo" && $1 == "SwapTotal:" { swap_total = $2 }
			FILENAME == "/proc/meminfo" && $1 == "SwapFree:" { swap_free = $2 }
			END {
				printf "{\"benchmark\": \"%s\", \"t\": %d, \"free_pmd_blocks\": %d, " \
				       "\"swap_used_kb\": %d}\n", name, t, pmd, swap_total - swap_free
			}' /proc/buddyinfo /proc/meminfo >>starts.jsonl
	}

	run() {		# NAME BENCH-ARGS... (ROUNDS=N in the environment: not $repeats)
		local name=$1; shift
		local rounds=${ROUNDS:-$repeats}
		local s=$(date +%s)
		# rounds until the ratios' intervals are narrow, when asked
		set -- "$@" ${BENCH_UNTIL_WIDTH:+--until-width "$BENCH_UNTIL_WIDTH"} \
			${BENCH_MAX_TIME:+--max-time "$BENCH_MAX_TIME"}
		echo "bench: $name: mthpctl bench $*" >&2
		zram_reset >>zram.log 2>&1 || echo "bench: $name: zram reset failed (zram.log)" >&2
		start_record "$name"
		{
			echo "=== $name: mthpctl bench $* --repeats $rounds"
			"$M" bench "$@" --repeats "$rounds" --json-out "$out/$name.json" \
				2> >(tee "$out/$name.err" >&2)
			local r=$?
			echo "(exit $r, $(( $(date +%s) - s )) s)"
			echo
			return $r
		} | tee -a bench.txt
		[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	}
	: >bench.txt
	run redis_nobgsave redis --high max,128M --sizes "$BENCH_SIZES" \
		--settle "$BENCH_SETTLE" "$@"
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
	ROUNDS=$mixed_repeats run mixed mixed
	run redis_madvise redis --host madvise --high max,128M --sizes "$BENCH_SIZES" "$@"
	swapoff /dev/zram0 2>/dev/null
	start_record scale
	echo "bench: scale: scripts/bench-scale.sh -n $SCALE_N" >&2
	{
		echo "=== scale: scripts/bench-scale.sh -n $SCALE_N"
		"$top/scripts/bench-scale.sh" -n "$SCALE_N" -o "$out/scale.json" 2>&1
		echo "(exit $?)"
	} | tee -a bench.txt
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	# the demo last (it leaves every size at 'always'), with the swap the
	# scale run went without: its thrasher needs somewhere to go
	swapon /dev/zram0 2>/dev/null
	start_record demo
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
try:
    res["environment"] = json.load(open(os.path.join(out, "env.json")))
except Exception as e:
    res["environment"] = {"error": str(e)}
res["starts"] = [json.loads(line) for line in open(os.path.join(out, "starts.jsonl")) if line.strip()]
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
# the guest's settings, in the VM's command line and in env.json
export BENCH_REPEATS=${BENCH_REPEATS:-3} BENCH_MIXED_REPEATS=${BENCH_MIXED_REPEATS:-7} BENCH_SIZES=${BENCH_SIZES:-16K,32K,64K} \
	BENCH_SETTLE=${BENCH_SETTLE:-30s} SCALE_N=${SCALE_N:-200} \
	BENCH_UNTIL_WIDTH=${BENCH_UNTIL_WIDTH:-} BENCH_MAX_TIME=${BENCH_MAX_TIME:-}
vm_cpus=2 vm_memory=2G vm_zram=1G
# the VM runs under TCG (scripts/vm-run.sh boots it with --disable-kvm)
python3 - "$out/env.json" "$top" "$kdir" "$vm_cpus" "$vm_memory" "$vm_zram" "$timeout" "$@" <<'PY' ||
import json, os, sys
path, top, kdir, cpus, memory, zram, timeout = sys.argv[1:8]
sys.path.insert(0, os.path.join(top, "scripts"))
from bench_env import base_env, cmd
qemu = cmd(top, "qemu-system-x86_64", "--version")
env = base_env(top, os.path.basename(os.path.normpath(kdir)))
env["host"]["qemu"] = qemu.splitlines()[0] if qemu else None
env.update({
       "vm": {"cpus": int(cpus), "memory": memory, "zram_swap": zram, "accel": "tcg",
              "timeout_s": int(timeout)},
       "bench": {"repeats": int(os.environ["BENCH_REPEATS"]),
                 "mixed_repeats": max(int(os.environ["BENCH_MIXED_REPEATS"]),
                                      int(os.environ["BENCH_REPEATS"])),
                 "until_width": os.environ["BENCH_UNTIL_WIDTH"],
                 "max_time": os.environ["BENCH_MAX_TIME"], "sizes": os.environ["BENCH_SIZES"],
                 "settle": os.environ["BENCH_SETTLE"], "scale_n": int(os.environ["SCALE_N"]),
                 "extra_args": sys.argv[8:]}})
json.dump(env, open(path, "w"), indent=2)
PY
	echo "bench: warning: env.json not written" >&2
echo "bench: kernel $kdir, results in $out (about an hour under TCG: see mthpctl-bench(8))" >&2
"$top/scripts/vm-run.sh" -k "$kdir" -o "$out" -p "$vm_cpus" -m "$vm_memory" -t "$timeout" -- \
	env BENCH_REPEATS="$BENCH_REPEATS" BENCH_MIXED_REPEATS="$BENCH_MIXED_REPEATS" BENCH_SIZES="$BENCH_SIZES" BENCH_SETTLE="$BENCH_SETTLE" \
	SCALE_N="$SCALE_N" BENCH_UNTIL_WIDTH="$BENCH_UNTIL_WIDTH" \
	BENCH_MAX_TIME="$BENCH_MAX_TIME" BENCH_ZRAM="$vm_zram" \
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
# README's results table for this run; like the plots, never fatal to the tables
"$top/scripts/bench-table.py" "$out" >"$out/table.md" ||
	echo "bench: warning: no results table (scripts/bench-table.py $out)" >&2
echo "bench: finished with status $rc after $(( $(date +%s) - start )) s; tables: $out/bench.txt, JSON: $out/bench.json, plots: $out/*.png" >&2
exit $rc
