#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# mthpctl built with AddressSanitizer + UndefinedBehaviorSanitizer
# (`make mthpctl-asan`: .output/asan/mthpctl) on the patched kernel, as root
# in the VM (scripts/vm-check.sh; about a minute under TCG):
#
#   scripts/vm-run.sh -k KDIR -- tests/vm/asan.sh
#
# attach, status (text, -j, --cgroup), attach --replace, detach, the usual
# refusals, attach --object (status, replace, refusals), apply (plan, apply, no-op, edit, refusals), and a short
# pagefault and redis bench. A step fails on its exit
# status or on any sanitizer report (every report is fatal and exits 86;
# leaks are reported at exit). Prints `ok - NAME` / `not ok - NAME: reason`,
# then `N passed, N failed`.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
A=$top/.output/asan/mthpctl
CG=/sys/fs/cgroup/mthp-asan
out=${MTHP_RESULTS:-$(mktemp -d /tmp/mthp-asan.XXXXXX)}/asan
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer || true)}
passed=0 failed=0 n=0

[ "$(id -u)" = 0 ] || { echo "asan.sh: must run as root (inside the VM)" >&2; exit 2; }
[ -x "$A" ] || { echo "asan.sh: $A missing (make mthpctl-asan)" >&2; exit 2; }
mkdir -p "$out"
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
"$A" detach --all >/dev/null 2>&1
rmdir "$CG" 2>/dev/null
mkdir -p "$CG"

# NAME EXPECTED-EXIT ARGS...: run the ASan build; its stdout in $out/N.out
step() {
	local name=$1 want=$2 rc t0=$(date +%s%N) report
	shift 2
	n=$((n + 1))
	"$A" "$@" >"$out/$n.out" 2>"$out/$n.err"
	rc=$?
	report=$(grep -m1 -E 'runtime error|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|Sanitizer:' "$out/$n.err")
	echo "#   $name: exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	if [ -z "$report" ] && [ "$rc" = "$want" ]; then
		passed=$((passed + 1)); echo "ok - asan $name"
		return 0
	fi
	failed=$((failed + 1))
	echo "not ok - asan $name: exit $rc (want $want)${report:+, $report}"
	sed 's/^/#   /' "$out/$n.err" | head -n 40
	return 1
}

json() {	# NAME JQ-EXPR on the last step's stdout
	if jq -e "$2" "$out/$n.out" >/dev/null 2>&1; then
		passed=$((passed + 1)); echo "ok - asan $1"
	else
		failed=$((failed + 1)); echo "not ok - asan $1: $(head -c 300 "$out/$n.out")"
	fi
}

step "attach auto" 0 attach --cgroup "$CG"
step "status" 0 status
step "status -j" 0 -j status
json "status -j is the policy's JSON" '.policies | length == 1'
step "status -p --cgroup" 0 -p status --cgroup "$CG"
step "attach --replace fixed" 0 attach --cgroup "$CG" --policy fixed --max-size 64K --replace
step "attach again without --replace (state conflict)" 5 attach --cgroup "$CG"
step "attach to a missing cgroup" 4 -j attach --cgroup "$CG/nonexistent"
step "bad size" 1 attach --cgroup "$CG" --policy fixed --max-size 3K
step "detach" 0 detach --cgroup "$CG"
# a policy of the user's: attach --object, status, replace, the refusals
step "attach --object" 0 attach --cgroup "$CG" --object "$top/.output/example_vma_size.bpf.o"
step "status -j of an object" 0 -j status --cgroup "$CG"
json "status -j: the object and its counters" '.policies[0].object.ops == "vma_size_ops" and .policies[0].totals != null'
step "status of an object" 0 status
step "attach --object --ops --replace" 0 attach --cgroup "$CG" --object "$top/.output/tests/vm/ops_two.bpf.o" --ops cap16k --replace
step "status of an object without counters" 0 -p status --cgroup "$CG"
step "attach --object without --ops (two maps)" 1 attach --cgroup "$CG" --object "$top/.output/tests/vm/ops_two.bpf.o" --replace
step "attach --object without a bpf_mthp_ops map" 1 -j attach --cgroup "$CG" --object "$top/.output/tests/vm/ops_none.bpf.o" --replace
step "detach an object" 0 detach --cgroup "$CG"
step "detach --all (none left)" 0 detach --all
step "status -j without policies" 0 -j status
json "status -j: none" '.policies | length == 0'
# apply: a configuration of two paths (one a cgroup with a space), its
# plan, the apply, a no-op, an edit (replace, detach), a refused file and a
# unit without systemd
mkdir -p "$CG/ap 1" "$CG/ap2"
printf '[%s]\nthreshold = 50ms\n[%s]\npolicy = fixed\nmax-size = 64K\nprivate = yes\n' \
	"$CG/ap 1" "$CG/ap2" >"$out/apply.conf"
step "apply --dry-run -p" 0 -p apply --config "$out/apply.conf" --dry-run
json "apply --dry-run JSON" '.changes == 2 and (.actions | length == 2)'
step "apply" 0 apply --config "$out/apply.conf"
step "apply again -j" 0 -j apply --config "$out/apply.conf"
json "apply again: no change" '.changes == 0'
printf '[%s]\npolicy = never\n' "$CG/ap2" >"$out/apply.conf"
step "apply edited" 0 apply --config "$out/apply.conf"
printf '[%s]\npolicy = never\n[%s]\nmax-size = 5K\n' "$CG/ap2" "$CG/ap 1" >"$out/apply.conf"
step "apply a refused file" 8 -j apply --config "$out/apply.conf"
printf '[x.service]\n' >"$out/apply.conf"
step "apply a unit without systemd" 4 apply --config "$out/apply.conf"
"$A" detach --all >/dev/null 2>&1
rmdir "$CG/ap 1" "$CG/ap2"
step "bench pagefault" 0 -j bench pagefault --size 8M --iterations 1 --repeats 1 --quiet
json "bench pagefault JSON" '.modes | length >= 2'
step "bench redis" 0 -j bench redis --keys 500 --requests 500 --clients 2 --pipeline 8 \
	--high max --modes never,policy --repeats 1 --port 16392 --quiet
json "bench redis JSON" '.levels[0].modes | length >= 1 and all(.rps > 0)'

"$A" detach --all >/dev/null 2>&1
rmdir "$CG" 2>/dev/null
echo "$passed passed, $failed failed"
[ $failed = 0 ]
