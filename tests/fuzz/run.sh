#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Run libFuzzer targets (`make fuzz`, `make fuzz-short`):
#
#   tests/fuzz/run.sh SECONDS NAME...
#
# Each .output/fuzz/fuzz_NAME runs SECONDS (nice 19) on its committed seeds
# and regression inputs (tests/fuzz/corpus/NAME, read only) plus the inputs
# earlier runs found (.output/fuzz/corpus/NAME, where new ones go), with
# tests/fuzz/NAME.dict if there is one. A crash, a sanitizer report, a leak
# or a timeout fails the target; the input is kept as
# .output/fuzz/artifacts/NAME-crash-* (add it to the corpus once fixed).
# Prints `ok - fuzz NAME: ...` / `not ok - ...`, then `N passed, N failed`.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/.output/fuzz
secs=${1:?usage: run.sh SECONDS NAME...}
shift
passed=0 failed=0

max_len() {	# the largest input worth trying: what mthpctl reads at most
	case $1 in
	parse) echo 128 ;;		# a command-line value
	conf) echo 4096 ;;		# a configuration file, a state file
	redis_csv) echo 2048 ;;		# a few CSV rows
	*) echo 8192 ;;			# a sysfs/procfs text (memory.stat, mountinfo)
	esac
}

for name; do
	bin=$out/fuzz_$name
	seeds=$top/tests/fuzz/corpus/$name
	work=$out/corpus/$name
	log=$out/$name.log
	mkdir -p "$work" "$out/artifacts"
	opts=(-max_total_time="$secs" -max_len="$(max_len "$name")" -timeout=10
	      -rss_limit_mb=2048 -artifact_prefix="$out/artifacts/$name-")
	[ -f "$top/tests/fuzz/$name.dict" ] && opts+=(-dict="$top/tests/fuzz/$name.dict")
	ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		nice -n 19 "$bin" "${opts[@]}" "$work" "$seeds" >"$log" 2>&1
	rc=$?
	stats=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -n1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n1)
	if [ $rc = 0 ] && ! grep -q 'ERROR: \|runtime error' "$log"; then
		passed=$((passed + 1))
		echo "ok - fuzz $name: ${stats% second} s, $cov, seeds $(ls "$seeds" | wc -l)"
	else
		failed=$((failed + 1))
		echo "not ok - fuzz $name: exit $rc (log $log)"
		grep -m1 -A12 'ERROR: \|runtime error\|fuzz_assert' "$log" | sed 's/^/#   /'
	fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
