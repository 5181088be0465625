#!/usr/bin/env bash
# Build the series' in-tree selftests (tools/testing/selftests/bpf:
# test_progs with cgroup_mthp_ops, mthp_ops_mm and cgroup_psi_stall) from
# the patched tree
# and run them in the VM on the patched kernel, built with kernel/config
# plus kernel/config-selftests (the keyring test_progs needs at start).
#
# Usage: scripts/kernel-selftests.sh [--build-only] [TEST...]
#   TEST              test_progs -t names (default: cgroup_mthp_ops,
#                     mthp_ops_mm,cgroup_psi_stall);
#                     run with -v, so the log shows what each test measured;
#                     with cgroup_psi_stall, its subtest "disabled" runs
#                     once more in a boot with psi=0 (results in psi0/)
#   --build-only      build test_progs, do not boot the VM
#   KERNEL_CACHE      as for scripts/kernel-build.sh; the copy of the tree
#                     and the build output go to $KERNEL_CACHE/selftests/
#   CLANG             clang for the BPF programs (default clang-19)
#   VM_RESULTS=dir    guest output and console log (default
#                     .output/vm-results/selftests)
#
# test_progs is built as upstream builds it (its own libbpf, bpftool and
# resolve_btfids from the tree), with BPF_STRICT_BUILD=0: with Debian 12's
# clang 19 some of the suite's other BPF programs and tests do not compile
# (they need a newer clang or kernel modules, which the test kernel does not
# have) and are skipped, as the selftests' permissive mode intends; ours must
# be built, which is checked. libarena is left out because clang 19 crashes
# on it, and GNU ld replaces lld (not installed) for urandom_read.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl}
log() { printf 'kernel-selftests: %s\n' "$*" >&2; }

build_only=
if [ "${1:-}" = --build-only ]; then
	build_only=1
	shift
fi
tests=${*:-cgroup_mthp_ops,mthp_ops_mm,cgroup_psi_stall}
tests=${tests// /,}

start=$(date +%s)
# The test kernel plus kernel/config-selftests (its own object tree).
kdir=$(KERNEL_CONFIG_EXTRA="$top/kernel/config-selftests" \
	"$top/scripts/kernel-build.sh" | tail -n1)
log "kernel: $kdir (ready after $(( $(date +%s) - start )) s)"

# A private copy of the patched tree: the selftests write generated files
# into their source directory, and another kernel-build.sh may apply
# another series to the shared tree at any time; its lock is held while
# copying, and the copy is taken only if the tree has this series.
mapfile -t patches < <(grep -v '^\s*\(#\|$\)' "$top/kernel/series")
src=$cache/selftests/src
mkdir -p "$src"
copied=
for attempt in 1 2 3; do
	tree=$("$top/scripts/kernel-build.sh" --tree | tail -n1)
	if (
		flock 9
		[ "$(cat "$tree/.mthp-applied/series")" = "$(printf '%s\n' "${patches[@]}")" ] || exit 1
		for p in "${patches[@]}"; do
			cmp -s "$top/kernel/$p" "$tree/.mthp-applied/$p" || exit 1
		done
		rsync -a --delete --exclude=/.mthp-applied --exclude=/.mthp-tree \
			"$tree/" "$src/"
	) 9>"$cache/.build.lock"; then
		copied=1
		break
	fi
	log "the shared tree changed to another series; again ($attempt)"
done
[ -n "$copied" ] || { log "error: could not copy the patched tree"; exit 1; }
out=$cache/selftests/out-$(basename "$kdir")
mkdir -p "$out"

t0=$(date +%s)
log "building test_progs in $out (nice, make -j$(nproc))"
nice -n 10 make -s -C "$src/tools/testing/selftests/bpf" -j"$(nproc)" \
	OUTPUT="$out" VMLINUX_BTF="$kdir/vmlinux" \
	CLANG="${CLANG:-clang-19}" LLC=llc-19 LLVM_STRIP=llvm-strip-19 \
	LLD=bfd SKIP_LLVM=1 SKIP_DOCS=1 BPF_STRICT_BUILD=0 KDIR=/nonexistent \
	LIBARENA_SKEL= LIBARENA_ASAN_SKEL= \
	test_progs >"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log" >&2; log "build failed (log: $out/build.log)"; exit 1; }
# Permissive mode skips what fails to build: ours must not be among them.
for f in cgroup_mthp_ops.test.o mthp_ops_mm.test.o cgroup_psi_stall.test.o \
	 mthp_ops_cgroup.skel.h mthp_ops_fail_sleepable.skel.h \
	 mthp_ops_fail_signature.skel.h cgroup_psi_stall.skel.h \
	 cgroup_psi_stall_fail.skel.h mthp_ops_fault; do
	[ -e "$out/$f" ] || { log "error: $f was not built (log: $out/build.log)"; exit 1; }
done
skipped() { grep -c "SKIP-$1 " "$out/build.log" || true; }
log "test_progs built in $(( $(date +%s) - t0 )) s; skipped by permissive mode: $(skipped BPF) BPF objects, $(skipped SKEL) skeletons, $(skipped TEST) test files"
[ -n "$build_only" ] && exit 0

results=${VM_RESULTS:-$top/.output/vm-results/selftests}
rm -rf "$results"
mkdir -p "$results"
t0=$(date +%s)
log "running test_progs -t $tests in the VM"
status=0
(cd "$out" && "$top/scripts/vm-run.sh" -k "$kdir" -o "$results" -t 1800 -- \
	./test_progs -v -t "$tests") || status=$?
log "VM run took $(( $(date +%s) - t0 )) s, whole run $(( $(date +%s) - start )) s"
# test_progs exits 0 when tests or subtests skip, and when -t matches
# nothing: here, on the kernel with the series, every named test must run
# and pass (#N name:OK), and nothing may skip. Its summary reads
# "Summary: 3/18 PASSED, 0 SKIPPED, 0/0 FAILED" (tests/subtests).
if [ "$status" = 0 ]; then
	out_log=$results/guest.out
	summary=$(tr -d '\r' <"$out_log" | grep -E '^Summary: [0-9]+/[0-9]+ PASSED, [0-9]+ SKIPPED, [0-9]+(/[0-9]+)? FAILED' | tail -n1)
	if [ -z "$summary" ]; then
		log "error: no test_progs summary in $out_log"
		status=1
	elif ! grep -qE ' 0 SKIPPED, 0(/0)? FAILED$' <<<"$summary"; then
		log "error: $summary; skipped: $(tr -d '\r' <"$out_log" | grep -E '^#[0-9/]+ +[^ ]+:SKIP' | tr '\n' ' ')"
		status=1
	fi
	# grep reads a variable, not a pipe: with pipefail, grep -q quitting at
	# the first match would fail the pipe when tr gets SIGPIPE
	clean=$(tr -d '\r' <"$out_log")
	for t in ${tests//,/ }; do
		grep -qE "^#[0-9]+ +$t:OK\$" <<<"$clean" ||
			{ log "error: test $t did not run and pass (no '#N $t:OK' in $out_log)"; status=1; }
	done
fi

# The PSI kfunc under psi=0 needs its own boot: test_progs cannot change the
# command line. Only the subtest that expects it runs there.
if [[ ",$tests," == *,cgroup_psi_stall,* ]]; then
	t0=$(date +%s)
	log "running test_progs -t cgroup_psi_stall/disabled in the VM booted with psi=0"
	psi0=0
	(cd "$out" && "$top/scripts/vm-run.sh" -k "$kdir" -o "$results/psi0" -a psi=0 \
		-t 900 -- ./test_progs -v -t cgroup_psi_stall/disabled) || psi0=$?
	log "psi=0 VM run took $(( $(date +%s) - t0 )) s"
	psi0_log=$results/psi0/guest.out
	psi0_clean=$(tr -d '\r' <"$psi0_log" 2>/dev/null || true)
	if [ "$psi0" != 0 ]; then
		log "error: psi=0 run failed ($psi0)"
		status=1
	elif ! grep -qE '^#[0-9]+/[0-9]+ +cgroup_psi_stall/disabled:OK$' <<<"$psi0_clean" ||
	     ! grep -q 'test_disabled: psi=0: mem some -95' <<<"$psi0_clean"; then
		log "error: cgroup_psi_stall/disabled did not pass in the psi=0 boot (log: $psi0_log)"
		status=1
	fi
fi
exit "$status"
