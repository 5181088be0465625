#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Part of `make check-docs`: README's results table is generated from a
# published run (tests/results/RUN-ID/, scripts/bench-publish.sh) by
# scripts/bench-table.py.
#   - the generator against its fixtures, a synthetic run folder and a
#     synthetic anchor run (synthetic-stock, make bench-stock's layout)
#     (tests/fixtures/bench-table: its README), its --check on a README
#     with that table (passes), with one figure changed and with no table
#     (fail, 1), and on a folder that is no run (2);
#   - bench-results.py (RESULTS.md) on a copy of the fixture: --check passes
#     on what --write wrote, fails on a changed figure or a changed JSON;
#   - bench-publish.sh on a copy of the fixture: refuses an unfinished run,
#     copies JSON and plots only, refuses to publish a run twice;
#   - when a run is published: README's table against the newest one
#     (RUN-IDs are UTC times: the last in order), and its anchor table
#     against the newest of tests/hardware/ (make bench-stock). Without
#     one there is nothing to check and that part is skipped.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
table=$top/scripts/bench-table.py
publish=$top/scripts/bench-publish.sh
fixture=$top/tests/fixtures/bench-table
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { echo "check-results: ok: $*"; passed=$((passed + 1)); }
fail() { echo "check-results: FAIL: $*"; failed=$((failed + 1)); }
status() {	# WANT WHAT COMMAND...: COMMAND exits WANT
	local want=$1 what=$2 rc=0
	shift 2
	"$@" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" = "$want" ]; then
		ok "$what: exit $rc"
	else
		fail "$what: exit $rc, want $want"
		sed 's/^/  /' "$tmp/out" | head -n 8
	fi
}

table_is() {	# RUN EXPECTED WHAT: the table of fixture RUN is the file EXPECTED
	if "$table" "$fixture/$1" >"$tmp/table.md" &&
	   diff -u "$fixture/$2" "$tmp/table.md" >"$tmp/diff"; then
		ok "$3 is the expected one"
	else
		fail "$3 differs from tests/fixtures/bench-table/$2:"
		head -n 20 "$tmp/diff"
	fi
}
changed_fails() {	# RUN FROM TO WHAT: --check of fixture RUN fails on the
			# README with FROM (a sed pattern) made TO
	sed "s/$2/$3/" "$fixture/readme-with-table.md" >"$tmp/changed.md"
	if cmp -s "$tmp/changed.md" "$fixture/readme-with-table.md"; then
		fail "the fixture README has no '$2' to change"
		return 1
	fi
	status 1 "--check, $4" "$table" --check "$fixture/$1" "$tmp/changed.md"
}

table_is synthetic-run expected-table.md "the fixture's table"
status 0 "--check, README with the run's table" \
	"$table" --check "$fixture/synthetic-run" "$fixture/readme-with-table.md"
if changed_fails synthetic-run 'peak memory +4.9% of' 'peak memory +5.0% of' "one figure changed"; then
	grep -q 'README: .*+5.0%' "$tmp/out" && ok "--check names the line that differs" ||
		fail "--check does not name the line that differs"
fi
grep -v '^|' "$fixture/readme-with-table.md" >"$tmp/none.md"
status 1 "--check, README without a table" "$table" --check "$fixture/synthetic-run" "$tmp/none.md"
# the anchor's table (make bench-stock): from its fixture, and beside the
# run's table in the same README
table_is synthetic-stock expected-anchor-table.md "the anchor fixture's table"
status 0 "--check, the anchor's table beside the run's" \
	"$table" --check "$fixture/synthetic-stock" "$fixture/readme-with-table.md"
changed_fails synthetic-stock '| 1.160 \[1.100..1.190\] 96.9% |$' '| 1.161 [1.100..1.190] 96.9% |' \
	"one anchor figure changed"
mkdir "$tmp/empty"
status 2 "a folder that is no run" "$table" "$tmp/empty"
status 2 "no run folder given" "$table" --check

# bench-results.py: RESULTS.md written from the fixture's JSON, then
# checked against it; a changed figure, or a changed JSON, fails --check
results=$top/scripts/bench-results.py
cp -r "$fixture/synthetic-run" "$tmp/results-run"
status 0 "bench-results --write" "$results" --write "$tmp/results-run"
status 0 "bench-results --check, as written" "$results" --check "$tmp/results-run"
grep -q '0.959 \[0.862..1.082\] 75% unranked' "$tmp/results-run/RESULTS.md" &&
	ok "RESULTS.md gives a 3-round ratio its 75% and no ranking" ||
	fail "RESULTS.md lacks the fixture's '0.959 [0.862..1.082] 75% unranked'"
sed -i 's/0\.959 \[0\.862/0.960 [0.862/' "$tmp/results-run/RESULTS.md"
status 1 "bench-results --check, one figure changed" "$results" --check "$tmp/results-run"
"$results" --write "$tmp/results-run" >/dev/null 2>&1
sed -i 's/"run": 6/"run": 5/' "$tmp/results-run/mixed.json"
status 1 "bench-results --check, the JSON changed since" "$results" --check "$tmp/results-run"
status 2 "bench-results, a folder that is no run" "$results" "$tmp/empty"

# bench-publish.sh into a temporary results folder
run=$tmp/20261128T000000Z
cp -r "$fixture/synthetic-run" "$run"
touch "$run/bench.txt" "$run/console.log" "$run/shell.err"
status 1 "publish: a run without bench.json (unfinished)" \
	env BENCH_RESULTS_DIR="$tmp/results" "$publish" "$run"
echo '{}' >"$run/bench.json"
printf 'PNG' >"$run/bench-redis.png"
status 0 "publish: a finished run" env BENCH_RESULTS_DIR="$tmp/results" "$publish" "$run"
want=$( (cd "$run" && ls -- *.json *.png | grep -vx bench.json; echo RESULTS.md) | sort | tr '\n' ' ')
got=$(ls "$tmp/results/20261128T000000Z" 2>/dev/null | sort | tr '\n' ' ')
[ "$got" = "$want" ] && ok "publish: JSON, plots and RESULTS.md only, not bench.json: $got" ||
	fail "publish: copied '$got', want '$want'"
status 1 "publish: the same run again" env BENCH_RESULTS_DIR="$tmp/results" "$publish" "$run"
status 2 "publish: no run folder given" "$publish"

# README against the newest published run, if there is one
newest=$(ls -d "$top"/tests/results/*/ 2>/dev/null | sort | tail -n 1)
if [ -n "$newest" ]; then
	status 0 "README's table is the one of ${newest%/}" "$table" --check "${newest%/}" "$top/README.md"
else
	echo "check-results: no run published under tests/results: README's table not checked"
fi
# and against the newest hardware-MMU anchor (make bench-stock), if any
newest=$(ls -d "$top"/tests/hardware/*/ 2>/dev/null | sort | tail -n 1)
if [ -n "$newest" ]; then
	status 0 "README's anchor table is the one of ${newest%/}" "$table" --check "${newest%/}" "$top/README.md"
else
	echo "check-results: no anchor run published under tests/hardware: README's anchor table not checked"
fi

echo "check-results: $passed passed, $failed failed"
[ "$failed" = 0 ]
