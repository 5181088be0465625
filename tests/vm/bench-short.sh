#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A short run of every `mthpctl bench` benchmark (tiny sizes, one repeat) on
# the patched kernel, as root in the VM (< 3 minutes under TCG):
#
#   scripts/vm-run.sh -k KDIR -- tests/vm/bench-short.sh
#
# Checks the JSON of each (modes present, figures sane) and that every
# setting is restored and nothing is left behind. Prints `ok - NAME` /
# `not ok - NAME: reason`, then `N passed, N failed`; exits 1 on failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/bench-lib.sh"
M=$top/mthpctl
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
policy_ok=1
"$M" status -j 2>/dev/null | grep -q "\"bpf_mthp_ops\": *true" || policy_ok=0

run() {		# NAME ARGS... : run bench with -j, check restore
	local name=$1; shift
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

# the policy rows are there, or skipped with a note (kernel without
# bpf_mthp_ops, or the policy failed to load)
modes="(len(m) == 3 or (len(m) == 2 and len(j['notes']) == 1))"
[ $policy_ok = 1 ] || echo "#   kernel without bpf_mthp_ops: policy rows must be skipped"

if run redis redis --keys 3000 --requests 3000 --clients 4 --pipeline 8 --high max,64M --port 16390; then
	check redis "$out/redis.json" "all(len(m := l['modes']) and $modes and all(x['rps'] > 0 and x['p99_ms'] >= 0 and x['runs'] == 1 for x in m) for l in j['levels']) and len(j['levels']) == 2 and j['levels'][1]['memory_high'] == 64 << 20"
	result "redis JSON" $? "unexpected JSON (above)"
fi
if run pagefault pagefault --size 16M --iterations 2; then
	check pf "$out/pagefault.json" "($modes for m in [j['modes']]) and all(x['ns_per_4k'] > 0 for x in j['modes']) and (j['policy_overhead_pct'] is not None) == (len(j['modes']) == 3)"
	result "pagefault JSON" $? "unexpected JSON (above)"
	check pf2 "$out/pagefault.json" "[x for x in j['modes'] if x['mode'] == 'always'][0]['ns_per_4k'] < [x for x in j['modes'] if x['mode'] == 'never'][0]['ns_per_4k']"
	result "pagefault: always faults cheaper per 4K than never" $? "not cheaper"
fi
if run sparse sparse --procs 4 --map-size 16M --stride 256K --dense-size 32M --dense-passes 1; then
	check sp "$out/sparse.json" "($modes for m in [j['modes']]) and all(x['small_memory_peak'] > 0 and x['large_seconds'] > 0 for x in j['modes'])"
	result "sparse JSON" $? "unexpected JSON (above)"
	check sp2 "$out/sparse.json" "[x for x in j['modes'] if x['mode'] == 'always'][0]['small_memory_current'] > [x for x in j['modes'] if x['mode'] == 'never'][0]['small_memory_current']"
	result "sparse: always uses more memory than never" $? "not more"
fi

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

echo "$passed passed, $failed failed"
[ $failed = 0 ]
