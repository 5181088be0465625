#!/usr/bin/env bash
# make check-debug-kernel: build the series with kernel/config-debug merged
# after kernel/config (PROVE_LOCKING, PROVE_RCU, DEBUG_ATOMIC_SLEEP,
# DEBUG_VM, KASAN; its own object tree and result directory), boot it and
# run the kernel tests and mthpctl's integration tests on it. scripts/vm-run.sh
# fails a run on any splat on the console (lockdep, RCU, KASAN, BUG,
# WARNING, sleeping in atomic context, ...). The benchmarks are left out:
# their timing means nothing on this kernel.
#
#   VM_RESULTS=dir   where guest output and console logs go
#                    (default .output/vm-results-debug)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
results=${VM_RESULTS:-$top/.output/vm-results-debug}
log() { printf 'vm-check-debug: %s\n' "$*" >&2; }

start=$(date +%s)
kdir=$(KERNEL_CONFIG_EXTRA=kernel/config-debug scripts/kernel-build.sh | tail -n1)
log "debug kernel: $kdir ($(( $(date +%s) - start )) s)"
make -s -C tests/kernel KDIR="$kdir" OUT="$top/.output/ktest-debug"

rm -rf "$results"
mkdir -p "$results"
status=0

log "kernel tests on the debug kernel"
scripts/vm-run.sh -k "$kdir" -o "$results/ktest" -t 2400 -- \
	"$top/.output/ktest-debug/ktest" || status=1

log "mthpctl integration tests on the debug kernel"
scripts/vm-run.sh -k "$kdir" -o "$results/mthpctl" -t 3600 -- \
	"$top/tests/vm/run.sh" || status=1

log "$([ "$status" = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s"
exit "$status"
