#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make check-arm64`: the series, the tool and the tests on an arm64 guest.
# Cross-builds the arm64 kernel (ARCH=arm64 scripts/kernel-build.sh, cached
# apart from x86's), mthpctl, its BPF objects and the VM test helpers
# (make ARCH=arm64), the kernel tests (tests/kernel); makes the guest's root
# once (scripts/arm64-rootfs.sh); boots it under virtme-ng (QEMU virt, TCG,
# one VM at a time with the x86 runs) and runs the kernel tests (and the PSI
# kfunc's with psi=0), then the integration tests that check folio sizes.
#
#   scripts/arm64-check.sh [TEST...]   (TEST: a tests/vm/run.sh test; default
#                                       the folio-size ones below)
#   VM_RESULTS=dir   where guest output and console logs go (under /tmp:
#                    the arm64 guest writes only there;
#                    default /tmp/mthpctl-arm64-results)
#   JOBS=N           make jobs of the builds (default: nproc)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
results=${VM_RESULTS:-/tmp/mthpctl-arm64-results}
jobs=${JOBS:-$(nproc)}
log() { printf 'arm64-check: %s\n' "$*" >&2; }
# the integration tests that measure folio sizes: attach, grant on a
# madvise host, the ladder, khugepaged and the collapse (auto_fill)
vm_tests=("$@")
[ ${#vm_tests[@]} -gt 0 ] || vm_tests=(faults madvise_host auto_pressure auto_fill thp_off)

start=$(date +%s)
kdir=$(ARCH=arm64 JOBS=$jobs scripts/kernel-build.sh | tail -n1)
log "kernel: $kdir (ready after $(( $(date +%s) - start )) s)"
make -s ARCH=arm64 -j"$jobs" mthpctl examples vm-tests
make -s -C tests/kernel ARCH=arm64 KDIR="$kdir" OUT="$top/.output-arm64/ktest"
root=$(scripts/arm64-rootfs.sh | tail -n1)
log "root: $root; built after $(( $(date +%s) - start )) s"

rm -rf "$results"
mkdir -p "$results"
status=0
log "kernel tests on the arm64 guest (2 vCPUs, 2G)"
scripts/vm-run.sh --arch arm64 -k "$kdir" -o "$results/ktest" -t 3600 -- \
	"$top/.output-arm64/ktest/ktest" || status=1
log "PSI kfunc with psi=0 on the arm64 guest"
scripts/vm-run.sh --arch arm64 -k "$kdir" -o "$results/ktest-psi0" -a psi=0 -- \
	"$top/.output-arm64/ktest/ktest" psi_disabled || status=1
log "mthpctl integration tests on the arm64 guest: ${vm_tests[*]}"
scripts/vm-run.sh --arch arm64 -k "$kdir" -o "$results/mthpctl" -t 3600 -- \
	"$top/tests/vm/run.sh" "${vm_tests[@]}" || status=1

log "$([ "$status" = 0 ] && echo "all arm64 tests passed" ||
	echo "arm64 tests FAILED (logs in $results)") in $(( $(date +%s) - start )) s"
exit "$status"
