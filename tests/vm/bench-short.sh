#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A short run of every `mthpctl bench` benchmark (tiny sizes, one repeat;
# redis with one per-size cap, pagefault also with --hook-cost, with
# --host madvise and with a policy object of the user's own) on
# the patched kernel, as root in the VM (about 10 minutes under TCG; compile
# alone 1.5 min):
#
#   scripts/vm-run.sh -k KDIR -- tests/vm/bench-short.sh
#
# Checks the JSON of each (modes present, figures sane) and that every
# setting is restored and nothing is left behind. Prints `ok - NAME` /
# `not ok - NAME: reason`, then `N passed, N failed`; exits 1 on failure.
#
# MTHPCTL=PATH tests another build; BENCH_SHORT_ONLY=NAME,... runs only
# those parts (the run names below, "rounds" and "errors").
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/bench-lib.sh"
M=${MTHPCTL:-$top/mthpctl}
# is part NAME selected (BENCH_SHORT_ONLY, default all)?
only() { [ -z "${BENCH_SHORT_ONLY:-}" ] || [[ ",$BENCH_SHORT_ONLY," == *",$1,"* ]]; }
out=${MTHP_RESULTS:-$(mktemp -d /tmp/mthp-bench-short.XXXXXX)}/bench-short
mkdir -p "$out"
passed=0 failed=0

check() {	# NAME FILE PYTHON-EXPR-ON-j (must be true)
	python3 - "$2" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2], {"j": j})
if not ok:
    print(json.dumps(j)[:2000])
sys.exit(0 if ok else 1)
PY
}

result() {	# NAME STATUS WHY
	if [ "$2" = 0 ]; then
		passed=$((passed + 1)); echo "ok - $1"
	else
		failed=$((failed + 1)); echo "not ok - $1: $3"
	fi
}

bench_perturb
before=$(bench_settings)
# The VM's kernel has the series: the policy rows must run (a kernel
# without bpf_mthp_ops fails here, and the JSON checks below want the rows).
st=$("$M" -j status 2>&1)
jq -e '.kernel.bpf_mthp_ops == true' <<<"$st" >/dev/null
result "the kernel has bpf_mthp_ops" $? "mthpctl -j status: $st"

run() {		# NAME ARGS... : run bench with -j, check restore
	local name=$1; shift
	only "$name" || return 1
	local t0=$(date +%s) rc
	"$M" -j bench "$@" --repeats 1 >"$out/$name.json" 2>"$out/$name.err"
	rc=$?
	echo "#   $name: exit $rc, $(( $(date +%s) - t0 )) s"
	if [ $rc != 0 ]; then
		sed 's/^/#   /' "$out/$name.err" | tail -n 15
		result "$name" 1 "exit $rc"
		return 1
	fi
	result "$name" 0
	local after
	after=$(bench_settings)
	if [ "$before" != "$after" ]; then
		diff <(echo "$before") <(echo "$after") | sed 's/^/#   /'
		result "$name restores settings" 1 "settings differ"
	else
		result "$name restores settings" 0
	fi
	local left
	left=$(bench_leftovers)
	result "$name leaves nothing behind" $? "$left"
	return 0
}

# the policy rows are there: bench attaches in-process with attach's own
# code, and a failure would only show as a skipped row with a note
modes="(len(m) == 4 and not j['notes'])"
# redis with one cap (--sizes 64K): 5 rows
rmodes="(len(m) == 5)"
# every timing with its spread, the companions attributable to the cgroup
spread="all(set(x['spread'][k]) >= {'median', 'min', 'max', 'lo', 'hi', 'coverage', 'n'} for k in ('rps', 'avg_ms', 'p50_ms', 'p99_ms'))"
companions="len(x['folio_bytes']) == 10 and 'pmd_bytes' in x and set(x['memory_stat_delta']) == {'pswpout', 'pswpin', 'thp_swpout', 'thp_swpout_fallback', 'workingset_refault_anon', 'pgmajfault'} and isinstance(x['swap_attribution']['agree'], bool)"

if run redis redis --keys 3000 --requests 3000 --clients 4 --pipeline 8 --high max,64M --port 16390 --sizes 64K; then
	check redis "$out/redis.json" "all(len(m := l['modes']) and $rmodes and all(x['rps'] > 0 and x['p99_ms'] >= 0 and x['runs'] == 1 for x in m) for l in j['levels']) and len(j['levels']) == 2 and j['levels'][1]['memory_high'] == 64 << 20"
	result "redis JSON" $? "unexpected JSON (above)"
	check redis2 "$out/redis.json" "all($spread and $companions and 'distinguishable' in x['rps_ratio_vs_always'] for l in j['levels'] for x in l['modes']) and all([s['mode'] for s in x['vs_each_static']] == [y['mode'] for y in l['modes'] if y['static']] and all('distinguishable' in s['rps'] for s in x['vs_each_static']) and isinstance(x['beats_every_static'], bool) for l in j['levels'] for x in l['modes'] if not x['static'])"
	result "redis JSON: spreads, ratios against each static setting, folio sizes, memory.stat" $? "unexpected JSON (above)"
	# redis-server holds ~5 MiB of values: its anon folios are seen
	check redis3 "$out/redis.json" "all(sum(f['bytes'] for f in x['folio_bytes']) > 1 << 20 for l in j['levels'] for x in l['modes'])"
	result "redis: folio sizes of redis-server read from kpageflags" $? "no anon memory seen"
	check redis4 "$out/redis.json" "all(x['memory_stat_delta']['pgmajfault'] is not None for l in j['levels'] for x in l['modes'])"
	result "redis: memory.stat keys read" $? "pgmajfault absent"
fi
if run pagefault pagefault --size 16M --iterations 2; then
	check pf "$out/pagefault.json" "($modes for m in [j['modes']]) and all(x['ns_per_4k'] > 0 and x['ns_per_4k_spread']['n'] == 1 for x in j['modes']) and (j['policy_overhead_pct'] is not None) == (len(j['modes']) == 4)"
	result "pagefault JSON" $? "unexpected JSON (above)"
	# counts, not time: one run of 2 iterations under TCG cannot order the
	# modes' ns per 4K (CI saw always 53,440 ns vs never 25,528 ns once).
	# The evidence is the bench cgroup's own folios (kpageflags of its
	# process), not the machine's mTHP counters, which others move.
	check pf2 "$out/pagefault.json" "(f := {x['mode']: x for x in j['modes']}) and f['always']['pmd_bytes'] > 0 and f['always']['largest_folio_kb'] == 2048 and f['never']['largest_folio_kb'] == 4 and {b['size_kb']: b['bytes'] for b in f['never']['folio_bytes']}[4] >= 16 << 20"
	result "pagefault: the workload's folios: always 2M, never none above 4K" $? "unexpected folio sizes (above)"
	# auto's last mapping is a refill of a dense fill at the same address:
	# its first 2 MiB range too in a PMD folio, as under always
	check pf3 "$out/pagefault.json" "(f := {x['mode']: x for x in j['modes']}) and f['always']['pmd_bytes'] == 16 << 20 and f['always+auto']['pmd_bytes'] == f['always']['pmd_bytes']"
	result "pagefault: auto's last fill all in PMD folios, as always's" $? "fewer PMD bytes (above)"
fi
if run pagefault_hook pagefault --size 16M --iterations 2 --modes always,policy --hook-cost; then
	check pfh "$out/pagefault_hook.json" "(h := j['hook_cost'])['policy_calls'] > 0 and h['floor_calls'] > 0 and h['policy_ns_per_call']['median'] > 0 and h['floor_ns_per_call']['median'] > 0 and isinstance(h['policy_vs_floor']['distinguishable'], bool)"
	result "pagefault --hook-cost: policy and floor ns/call" $? "unexpected JSON (above)"
fi
# --policy with attach's options, read into a typed spec: the policy rows
# under a 16K cap; a bad option skips them with attach's reason in the note
if run pagefault_fixed pagefault --size 16M --iterations 2 --modes never,policy \
	--policy "fixed --max-size 16K"; then
	# the policy row's workload (its mapping, in the bench's cgroup): 16K
	# folios, none larger (pagemap + kpageflags)
	check pff "$out/pagefault_fixed.json" "[x['mode'] for x in j['modes']] == ['never', 'always+fixed'] and not j['notes'] and j['modes'][1]['largest_folio_kb'] == 16 and {b['size_kb']: b['bytes'] for b in j['modes'][1]['folio_bytes']}[16] >= 8 << 20"
	result "pagefault --policy 'fixed --max-size 16K': policy rows, the workload's folios 16K, none larger" $? "unexpected JSON (above)"
fi
if run pagefault_bad pagefault --size 16M --iterations 2 --modes never,policy \
	--policy "auto --min-usage 3X"; then
	check pfb "$out/pagefault_bad.json" "[x['mode'] for x in j['modes']] == ['never'] and len(j['notes']) == 1 and 'min-usage' in j['notes'][0] and '3X' in j['notes'][0]"
	result "pagefault --policy with a bad size: rows skipped, attach's reason noted" $? "unexpected JSON (above)"
fi
# 512 touches of 64M each: the small processes outgrow the small-process
# rule half-way (fork gave them mthpctl's memory), so auto holds them at
# never's memory only by following their fills (mthpctl_fill_strided())
if run sparse sparse --procs 4 --map-size 64M --stride 128K --dense-size 32M --dense-passes 1; then
	check sp "$out/sparse.json" "($modes for m in [j['modes']]) and all(x['small_memory_peak'] > 0 and x['large_seconds'] > 0 and len(x['folio_bytes']) == 10 and x['large_seconds_spread']['n'] == 1 for x in j['modes'])"
	result "sparse JSON" $? "unexpected JSON (above)"
	check sp2 "$out/sparse.json" "[x for x in j['modes'] if x['mode'] == 'always'][0]['small_memory_current'] > [x for x in j['modes'] if x['mode'] == 'never'][0]['small_memory_current']"
	result "sparse: always uses more memory than never" $? "not more"
	check sp3 "$out/sparse.json" "[x for x in j['modes'] if x['mode'] == 'always+auto'][0]['small_memory_peak'] <= 1.25 * [x for x in j['modes'] if x['mode'] == 'never'][0]['small_memory_peak']"
	result "sparse: auto's small processes within 1.25 x never's memory" $? "more (above)"
fi
# every mode, simple beside auto: always, never, always+auto, always+simple
wmodes="[x['mode'] for x in j['modes']] == ['always', 'never', 'always+auto', 'always+simple'] and not j['notes'] and all([s['mode'] for s in x['vs_each_static']] == ['always', 'never'] and isinstance(x['beats_every_static'], bool) for x in j['modes'] if not x['static'])"
# the deterministic companions of every row
wfig="all(x['memory_peak']['median'] > 0 and x['pgfault'] > 0 and x['seconds']['median'] > 0 and len(x['folio_bytes']) == 10 and 'pswpout' in x['memory_stat_delta'] for x in j['modes'])"
wf="(f := {x['mode']: x for x in j['modes']}) and"
if run shell shell --pipelines 4 --loops 2; then
	check sh "$out/shell.json" "$wmodes and $wfig"
	result "shell JSON: every mode, time, peak, faults" $? "unexpected JSON (above)"
fi
if run gups gups --array-size 32M --updates 100000; then
	check gu "$out/gups.json" "$wmodes and $wfig and all(x['fill_seconds']['median'] > 0 for x in j['modes'])"
	result "gups JSON: every mode, fill and update time, peak, faults" $? "unexpected JSON (above)"
	# the array is all there while held: at least 32M of anon folios;
	# always fills it with 2M folios, never with 4K ones only
	check gu2 "$out/gups.json" "$wf all(sum(b['bytes'] for b in x['folio_bytes']) >= 32 << 20 for x in j['modes']) and f['always']['pmd_bytes'] >= 16 << 20 and f['never']['pmd_bytes'] == 0"
	result "gups: the array's folios, always 2M, never 4K" $? "unexpected folio sizes (above)"
fi
if run bloat bloat --threads 16 --per-thread 64K; then
	check bl "$out/bloat.json" "$wmodes and $wfig"
	result "bloat JSON: every mode, time, peak, faults" $? "unexpected JSON (above)"
	check bl2 "$out/bloat.json" "$wf f['always']['memory_peak']['median'] >= f['never']['memory_peak']['median']"
	result "bloat: always' peak at least never's" $? "less (above)"
fi
# arenas: each first touch of a 2M range of an arena faults a 2M folio
# under always; never holds the touched 4K pages only (16 x 8M arenas, 4
# pages per 2M: 128 MiB against 256 KiB, the whole run under a second);
# the arenas merge into one mapping whose faults, all threads together,
# jump both ways: auto stays at never's memory only by following each
# thread's fill on its own (115.5 MiB when it followed the process's)
if run arenas arenas --arenas 16 --arena-size 8M --touch-pages 4; then
	# a few dozen faults a run: memory.stat's pgfault, flushed lazily
	# (rstat), may still read 0 (never, once, in the VM): faults >= 0 here
	wfig_any=${wfig/"x['pgfault'] > 0"/"x['pgfault'] >= 0"}
	check ar "$out/arenas.json" "$wmodes and $wfig_any"
	result "arenas JSON: every mode, time, peak, faults" $? "unexpected JSON (above)"
	check ar2 "$out/arenas.json" "$wf f['always']['memory_current_held']['median'] >= f['never']['memory_current_held']['median'] + (8 << 20) and f['always']['pmd_bytes'] >= 8 << 20 and f['never']['pmd_bytes'] == 0"
	result "arenas: always bloats (2M folios, 8 MiB more held), never does not" $? "no bloat (above)"
	check ar3 "$out/arenas.json" "$wf f['always+auto']['memory_current_held']['median'] <= 1.25 * f['never']['memory_current_held']['median'] and f['always+auto']['pmd_bytes'] == 0"
	result "arenas: auto within 1.25 x never's memory, no 2M folio" $? "more (above)"
	# auto's small-process rule counts what the workload inherits from
	# mthpctl: forked after a policy load it must not start with more than
	# never's child (0.8 against 0.2 MiB made auto cross 2 MiB at random),
	# nor in any mode with a 2M folio of mthpctl's own (2.2 MiB)
	check ar4 "$out/arenas.json" "$wf 0 < f['always+auto']['start_anon_bytes'] <= f['never']['start_anon_bytes'] + (256 << 10) and all(x['start_anon_bytes'] < (1 << 20) for x in j['modes'])"
	result "arenas: the workload starts with never's memory under auto, below 1 MiB" $? "more (above)"
fi
# compile: make -j2 of this tree's compile-bench target, 4 files
if run compile compile --files 4 --jobs 2; then
	check cc "$out/compile.json" "$wmodes and $wfig and j['config']['files'] == 4 and j['config']['jobs'] == 2"
	result "compile JSON: every mode, time, peak, faults" $? "unexpected JSON (above)"
fi
if only rounds; then
	# rounds: --max-time stops a round that would end past it (one round of
	# pagefault is longer than the 1 s cap: one round, "time cap reached");
	# with one mode there is no ratio to narrow: converged after --repeats
	"$M" -j bench pagefault --size 16M --iterations 2 --repeats 1 --until-width 1 \
		--max-time 1s >"$out/rounds_cap.json" 2>"$out/rounds_cap.err"; rc=$?
	check rc1 "$out/rounds_cap.json" "(r := j['rounds'])[0]['stop'] == 'time cap reached' and r[0]['run'] == 1 and not r[0]['converged'] and r[0]['max_time_s'] == 1 and r[0]['until_width_pct'] == 1 and r[0]['widest_interval_pct'] is None and r[0]['widest']" && [ $rc = 0 ]
	result "rounds: --max-time 1s stops after one round, 'time cap reached'" $? "exit $rc"
	"$M" -j bench pagefault --size 16M --iterations 2 --repeats 2 --modes always --until-width 5 \
		>"$out/rounds_one.json" 2>"$out/rounds_one.err"; rc=$?
	check rc2 "$out/rounds_one.json" "(r := j['rounds'])[0]['stop'] == 'converged' and r[0]['run'] == 2 and r[0]['converged'] and j['modes'][0]['runs'] == 2" && [ $rc = 0 ]
	result "rounds: one mode, no ratio: converged after --repeats 2" $? "exit $rc"
	# a width any two rounds meet (100%: the interval as wide as the median):
	# converged with a finite widest interval, the rounds counted in the rows
	"$M" -j bench pagefault --size 16M --iterations 2 --repeats 2 --modes always,never \
		--until-width 100 --max-time 10min >"$out/rounds_w.json" 2>"$out/rounds_w.err"; rc=$?
	check rc3 "$out/rounds_w.json" "(r := j['rounds'][0])['stop'] == 'converged' and r['run'] >= 2 and 0 <= r['widest_interval_pct'] <= 100 and all(x['runs'] == r['run'] and len(x['ns_per_4k_runs']) == r['run'] for x in j['modes'])" && [ $rc = 0 ]
	result "rounds: --until-width 100: converged, widest interval and runs reported" $? "exit $rc"
	# without --until-width and --max-time: exactly --repeats, "fixed"
	if only pagefault; then
		check rc4 "$out/pagefault.json" "j['rounds'][0]['stop'] == 'fixed' and j['rounds'][0]['run'] == 1"
		result "rounds: fixed --repeats by default" $? "not fixed (above)"
	fi
fi
# mixed: a service (redis), a batch job (buffers of 32M mapped, filled,
# processed and unmapped over and over) and small processes (pipelines) at
# once under their parent's memory.high (40M: a buffer and the values are
# 34M, redis and the shells' own memory more), each over a 5 s window; one
# size alone (64K) beside always and never. Counts, not timings: one round
# of 5 s under TCG cannot order the modes, and on a busy host a column's
# first fill may outlast the window (then no cycle, and no geometric mean:
# null): work done is >= 0, faults and memory > 0.
mcols="['always', 'never', 'always+auto', 'always+simple', 'only-64K']"
if run mixed mixed --window 5s --keys 2000 --clients 4 --pipeline 8 \
	--port 16392 --array-size 32M --pipelines 2 --sizes 64K --node-high 40M; then
	mf="(f := {x['mode']: x for x in j['modes']}) and"
	check mx "$out/mixed.json" "[x['mode'] for x in j['modes']] == $mcols and not j['notes'] and j['config']['node_high'] == 40 << 20 and j['config']['window_s'] == 5 and all(x['rounds'] == 1 and (x['static'] or ([g['mode'] for g in x['vs_each_global']] == ['always', 'never', 'only-64K'] and all('coverage' in g['geomean'] and isinstance(g['geomean']['distinguishable'], bool) for g in x['vs_each_global']) and isinstance(x['beats_every_global'], bool) and set(x['beats_every_static']) == {'service', 'batch', 'small'})) and set(x['workloads']) == {'service', 'batch', 'small'} and all(w['throughput']['median'] >= 0 and w['memory_peak']['median'] > 0 and w['pgfault'] > 0 for w in x['workloads'].values()) and all(x['workloads'][k]['done'] >= 0 for k in ('service', 'small')) and (b := x['workloads']['batch'])['unit'] == 'MiB/s' and 'done' not in b and b['cycles'] >= 0 and b['fill_seconds_per_cycle']['median'] > 0 and b['fill_pgfault_per_cycle'] > 0 for x in j['modes']) and j['config']['batch_updates_per_cycle'] == (32 << 20) // 128"
	result "mixed JSON: every column, three workloads each faulting and holding memory, throughput, the policies against each global setting" $? "unexpected JSON (above)"
	# the service is counted by redis (INFO commandstats): a count in every
	# column, 0 allowed (redis-benchmark's start under TCG can take all of
	# a 5 s window: 0 SETs in every column, seen); the node limit bound
	check mx2 "$out/mixed.json" "all(x['workloads']['service']['done'] >= 0 and x['workloads']['service']['throughput']['median'] >= 0 and x['node']['memory_peak'] > 0 for x in j['modes']) and any(x['node']['memory_high_events'] > 0 for x in j['modes'])"
	result "mixed: redis' SETs counted, the node's memory.high reached" $? "unexpected JSON (above)"
	# the batch's last buffer (part of it swapped out under the node
	# limit): 2M folios under always, none under never, 64K folios and no
	# 2M under 64K alone. Under never, less than 1 MiB of 64K (0.1 MiB seen): the
	# batch's process is forked from mthpctl and maps what mthpctl faulted
	# under the column before
	check mx3 "$out/mixed.json" "$mf (b := {m: {s['size_kb']: s['bytes'] for s in x['workloads']['batch']['folio_bytes']} for m, x in f.items()}) and b['always'][2048] > 0 and b['never'][2048] == 0 and b['never'][64] < 1 << 20 and b['only-64K'][2048] == 0 and b['only-64K'][64] > 0"
	result "mixed: the batch's folios, always 2M, never 4K, only-64K 64K" $? "unexpected folio sizes (above)"
	# the batch cycled (a cycle of 32M took 0.9-2.3 s on a quiet host; on
	# one busy with a kernel build a column still finished 3 in 5 s, where
	# others finished none), and each fill under always, its buffer in 2M
	# folios (mx3), took far fewer faults than never's, one per 4K page
	check mx6 "$out/mixed.json" "$mf any(x['workloads']['batch']['cycles'] >= 2 for x in j['modes']) and (nf := f['never']['workloads']['batch']['fill_pgfault_per_cycle']) >= (32 << 20) // 4096 and f['always']['workloads']['batch']['fill_pgfault_per_cycle'] * 8 < nf"
	result "mixed: the batch cycled through its buffers, with far fewer faults per fill under always than never" $? "unexpected cycles or fill faults (above)"
	# the state the benchmark and each run started from
	check mx4 "$out/mixed.json" "(s := j['start_state']) and all(set(s[k]) >= {'free_pmd_blocks', 'swap_used', 'page_cache', 'mem_free', 'khugepaged_full_scans'} for k in ('found', 'settled')) and s['settled']['free_pmd_blocks'] > 0 and s['khugepaged'] in ('a full pass done', 'idle', 'still busy when the wait ended') and all(x['free_pmd_blocks_at_start'] > 0 for x in j['modes'])"
	result "mixed: the start state (free 2M blocks, swap, page cache, khugepaged) and each run's free 2M blocks" $? "unexpected JSON (above)"
	# the policies' own counters over the window, the static columns none
	check mx5 "$out/mixed.json" "$mf all(('policy_decisions' in x) != x['static'] for x in j['modes']) and all(f[m]['policy_decisions']['calls'] > 0 and set(f[m]['policy_decisions']['fallbacks']) >= {'pressure', 'low-usage', 'sparse'} for m in ('always+auto', 'always+simple'))"
	result "mixed: the policies' decisions (calls, fallbacks by reason), none on a global setting" $? "unexpected JSON (above)"
fi
# mixed --stock (for a kernel without the series): no policy, the global
# settings and madvise+batch (a madvise host, only the batch advises),
# which is compared with each global setting; here with the memory
# controller, so under the node limit. The batch's 2M folios come from its
# advice alone: none under the host's madvise column
if run mixed_stock mixed --stock --window 5s --keys 2000 --clients 4 --pipeline 8 \
	--port 16395 --array-size 32M --pipelines 2 --sizes 64K --node-high 40M; then
	mf="(f := {x['mode']: x for x in j['modes']}) and"
	check mxs "$out/mixed_stock.json" "$mf [x['mode'] for x in j['modes']] == ['always', 'never', 'madvise', 'only-64K', 'madvise+batch'] and j['config']['stock'] and j['config']['memory_controller'] and j['config']['node_high'] == 40 << 20 and not f['madvise+batch']['static'] and [g['mode'] for g in f['madvise+batch']['vs_each_global']] == ['always', 'never', 'madvise', 'only-64K'] and all('policy_decisions' not in x for x in j['modes']) and (b := {m: {s['size_kb']: s['bytes'] for s in x['workloads']['batch']['folio_bytes']} for m, x in f.items()}) and b['madvise+batch'][2048] > 0 and b['madvise'][2048] == 0"
	result "mixed --stock: the global settings and madvise+batch against each, no policy, the batch's 2M folios from its advice" $? "unexpected JSON (above)"
fi
if only mixed_stock; then
	"$M" bench mixed --stock --policy auto >/dev/null 2>"$out/stock-refused.err"
	rc=$?
	[ $rc = 1 ] && grep -q 'drop --policy' "$out/stock-refused.err"
	result "mixed --stock --policy: refused, exit 1, the fix named" $? "exit $rc: $(cat "$out/stock-refused.err")"
fi
# memcached loaded by memaslap from outside its cgroup: 2000 keys of 1K
if run memcached memcached --keys 2000 --requests 20000 --clients 4 --port 16394; then
	check mc "$out/memcached.json" "$wmodes and $wfig and all(x['ops_per_second']['median'] > 0 for x in j['modes'])"
	result "memcached JSON: every mode, ops/s, peak, faults" $? "unexpected JSON (above)"
	# memcached holds its items when its folios are read: 2000 x 1K
	check mc2 "$out/memcached.json" "all(sum(b['bytes'] for b in x['folio_bytes']) >= 2 << 20 for x in j['modes'])"
	result "memcached: its items' memory seen by size" $? "less than 2 MiB (above)"
fi
# --host madvise: the host row keeps 4K pages (nothing advised), the
# always row gets 2M; simple and auto grant on the madvise host
if run pf_madvise pagefault --size 16M --iterations 2 --host madvise; then
	check pfm "$out/pf_madvise.json" "$wf j['config']['host'] == 'madvise' and sorted(f) == ['always', 'madvise', 'madvise+auto', 'madvise+simple', 'never'] and not j['notes'] and f['madvise']['largest_folio_kb'] == 4 and f['always']['largest_folio_kb'] == 2048 and f['madvise+simple']['largest_folio_kb'] == 2048"
	result "pagefault --host madvise: host row 4K, always 2M, simple grants 2M" $? "unexpected JSON (above)"
fi
# a policy of the user's own: the example object (4K below 64M mappings)
obj=$top/.output/example_vma_size.bpf.o
if run pf_object pagefault --size 16M --iterations 2 --modes policy --policy "--object $obj"; then
	check pfo "$out/pf_object.json" "[x['mode'] for x in j['modes']] == ['always+example_vma_size.bpf.o'] and not j['notes'] and j['modes'][0]['largest_folio_kb'] == 4"
	result "pagefault --policy '--object FILE': its rows, 4K below 64M as it says" $? "unexpected JSON (above)"
fi
if only errors; then
	"$M" bench pagefault --policy "--object /nonexistent.bpf.o" >/dev/null 2>"$out/noobj.err"; rc=$?
	result "an unreadable --policy object is a usage error" $([ $rc = 1 ] && grep -q nonexistent "$out/noobj.err"; echo $?) "exit $rc: $(cat "$out/noobj.err")"

	# errors: not a benchmark, busy port
	"$M" bench nosuch >/dev/null 2>&1; rc=$?
	result "unknown benchmark is a usage error" $([ $rc = 1 ]; echo $?) "exit $rc"
	redis-server --port 16391 --bind 127.0.0.1 --save "" --daemonize no >/dev/null 2>&1 &
	holder=$!
	for _ in $(seq 50); do redis-cli -p 16391 ping >/dev/null 2>&1 && break; sleep 0.2; done
	timeout 120 "$M" bench redis --port 16391 --repeats 1 --keys 100 --requests 100 --high max \
		>/dev/null 2>"$out/busy.err"; rc=$?
	kill $holder 2>/dev/null; wait $holder 2>/dev/null
	result "busy port is refused (exit 5)" $([ $rc = 5 ] && grep -q busy "$out/busy.err"; echo $?) "exit $rc: $(cat "$out/busy.err")"
fi

echo "$passed passed, $failed failed"
[ $failed = 0 ]
