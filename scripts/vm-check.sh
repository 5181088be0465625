#!/usr/bin/env bash
# The VM half of `make check`: build the patched kernel (cached), build the
# kernel tests, boot the kernel under virtme-ng and run them; then boot with
# psi=0 and check the PSI kfunc's answer there; then mthpctl's integration
# tests, the ASan/UBSan build of mthpctl (tests/vm/asan.sh), a short run of
# each benchmark and the restore-on-interrupt test.
#
#   VM_RESULTS=dir   where guest output and console logs go
#                    (default .output/vm-results)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
results=${VM_RESULTS:-$top/.output/vm-results}
log() { printf 'vm-check: %s\n' "$*" >&2; }

kdir=$(scripts/kernel-build.sh | tail -n1)
log "kernel: $kdir"
make -s -C tests/kernel KDIR="$kdir" OUT="$top/.output/ktest"

rm -rf "$results"
mkdir -p "$results"
status=0

log "kernel tests (2 vCPUs, 2G)"
scripts/vm-run.sh -k "$kdir" -o "$results/ktest" -- \
	"$top/.output/ktest/ktest" || status=1

log "PSI kfunc with psi=0"
scripts/vm-run.sh -k "$kdir" -o "$results/ktest-psi0" -a psi=0 -- \
	"$top/.output/ktest/ktest" psi_disabled || status=1

log "mthpctl integration tests"
scripts/vm-run.sh -k "$kdir" -o "$results/mthpctl" -- \
	"$top/tests/vm/run.sh" || status=1

log "mthpctl built with ASan+UBSan: attach, status, detach, a short bench"
scripts/vm-run.sh -k "$kdir" -o "$results/asan" -- \
	"$top/tests/vm/asan.sh" || status=1

log "mthpctl bench, short run of every benchmark"
scripts/vm-run.sh -k "$kdir" -o "$results/bench-short" -- \
	"$top/tests/vm/bench-short.sh" || status=1

log "mthpctl bench restores everything when interrupted"
scripts/vm-run.sh -k "$kdir" -o "$results/bench-interrupt" -- \
	"$top/tests/vm/bench-interrupt.sh" || status=1

[ "$status" = 0 ] && log "all VM tests passed" || log "VM tests FAILED (logs in $results)"
exit "$status"
