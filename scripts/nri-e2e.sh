#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The NRI plugin on a real containerd, in the VM (make nri-e2e): builds
# what the guest needs, then boots the patched kernel and runs
# tests/nri-e2e/run.sh there.
#
#   containerd, its shim and ctr, and crictl: scripts/runtime-build.sh
#     (Go modules, cached in the kernel's cache, built once)
#   runc: Debian's (scripts/install-deps.sh)
#   images, built offline by scripts/oci-image.sh: the plugin's (make
#     nri-image), a pause image (busybox-static sleeping), a workload
#     image (tests/vm/faulter linked statically, and busybox), and for the
#     upgrade case the plugin's image again with an mthpctl whose built-in
#     policy object differs (bpf/mthp.bpf.c with MTHPCTL_OBJECT_VARIANT,
#     built in .output/nri-e2e/object2), tagged mthpctl-nri:e2e-object2
#   the plugin's pod and container: the Helm chart rendered by Helm's own
#     engine and translated to crictl's configs
#     (src/nri/deploy/check/e2econfig)
#   the run, once per cgroup driver: cgroupfs (virtme's init), then systemd
#     (systemd as PID 1: scripts/vm-run.sh --systemd; runc's
#     SystemdCgroup); each prints its ok / not ok lines, and the target
#     fails if either run fails
#   NRI_E2E_RESULTS=DIR  where guest output goes (default .output/nri-e2e/vm),
#     one directory per driver
#   NRI_E2E_DRIVERS="cgroupfs systemd"  the drivers to run (default both)
#   NRI_E2E_TESTS="NAME..."  only these of run.sh's tests (default all)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
log() { printf 'nri-e2e: %s\n' "$*" >&2; }
out=$top/.output/nri-e2e
results=${NRI_E2E_RESULTS:-$out/vm}
start=$(date +%s)

command -v runc >/dev/null || { log "error: runc missing: run scripts/install-deps.sh"; exit 2; }
case " ${NRI_E2E_DRIVERS:-systemd} " in *" systemd "*)
	[ -x /sbin/init ] && command -v dbus-daemon >/dev/null ||
		{ log "error: the systemd driver's run needs systemd-sysv and dbus: run scripts/install-deps.sh"; exit 2; } ;;
esac
[ -x /bin/busybox ] || { log "error: /bin/busybox missing (busybox-static): run scripts/install-deps.sh"; exit 2; }
runtime=$(scripts/runtime-build.sh)

rm -rf "$out/images" "$out/plugin" "$out/plugin2" "$out/pause" "$out/workload"
mkdir -p "$out/images" "$out/plugin"
[ -f .output/mthpctl-nri-image.tar ] || { log "error: no plugin image: make nri-image"; exit 2; }
cp .output/mthpctl-nri-image.tar "$out/images/plugin.tar"
# the upgrade's image: make nri-image's files, another mthpctl
make -s OUTPUT=.output/nri-e2e/object2 BPF_EXTRA_CFLAGS=-DMTHPCTL_OBJECT_VARIANT=2 \
	.output/nri-e2e/object2/static/mthpctl
mkdir -p "$out/plugin2"
cp -a .output/nri-image/root "$out/plugin2/root"
install -m 0755 -s .output/nri-e2e/object2/static/mthpctl "$out/plugin2/root/usr/local/sbin/mthpctl"
scripts/oci-image.sh -r "$out/plugin2/root" -n mthpctl-nri:e2e-object2 -o "$out/images/plugin-object2.tar" \
	-e /usr/local/bin/mthpctl-nri
tests/check-nri-image.sh "$out/images/plugin-object2.tar" >/dev/null
.output/nri-e2e/object2/static/mthpctl -j version | jq -r .builtin_object_hash >"$out/plugin2/object_hash"
[ "$(cat "$out/plugin2/object_hash")" != "$(./mthpctl -j version | jq -r .builtin_object_hash)" ] ||
	{ log "error: the upgrade's mthpctl attaches the same object as ./mthpctl"; exit 2; }
mkdir -p "$out/pause/root/bin"
cp /bin/busybox "$out/pause/root/bin/busybox"
scripts/oci-image.sh -r "$out/pause/root" -n e2e/pause:1 -o "$out/images/pause.tar" \
	-e /bin/busybox,sleep,2147483647
mkdir -p "$out/workload/root/bin"
cp /bin/busybox "$out/workload/root/bin/busybox"
# static: the image has no C library
${CC:-cc} -static -O2 -Wall -o "$out/workload/root/bin/faulter" tests/vm/faulter.c
scripts/oci-image.sh -r "$out/workload/root" -n e2e/workload:1 -o "$out/images/workload.tar" \
	-e /bin/faulter
(cd src/nri/deploy/check && GOTOOLCHAIN=local GOFLAGS=-mod=readonly "$GO" run ./e2econfig \
	-chart ../helm/mthpctl-nri -o "$out/plugin" -empty-dirs /run/mthpctl-nri-e2e/empty \
	-uid 4e524900-0000-4000-8000-00000000ffff)
kdir=$(scripts/kernel-build.sh | tail -n1)
log "built in $(( $(date +%s) - start )) s; booting the VM"

rc=0 failed=
for driver in ${NRI_E2E_DRIVERS:-cgroupfs systemd}; do
	case $driver in
	cgroupfs) vm=() ;;
	systemd) vm=(--systemd) ;;
	*) log "error: NRI_E2E_DRIVERS: $driver: cgroupfs or systemd"; exit 2 ;;
	esac
	t0=$(date +%s) drc=0
	log "the $driver cgroup driver"
	scripts/vm-run.sh "${vm[@]}" -k "$kdir" -m 2G -t 1800 -o "$results/$driver" -- \
		"$top/tests/nri-e2e/run.sh" --driver "$driver" "$runtime/bin" "$out" ${NRI_E2E_TESTS:-} || drc=$?
	log "$driver driver: $([ "$drc" = 0 ] && echo passed || echo "FAILED (logs in $results/$driver)") in $(( $(date +%s) - t0 )) s"
	[ "$drc" = 0 ] || { rc=$drc; failed+=" $driver"; }
done
log "$([ "$rc" = 0 ] && echo passed || echo "FAILED:$failed") in $(( $(date +%s) - start )) s"
exit "$rc"
