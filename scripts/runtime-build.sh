#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Build the container runtime of the NRI end-to-end test (tests/nri-e2e/)
# from Go modules, cached beside the kernel and built once:
# containerd, its shim containerd-shim-runc-v2 and ctr (CONTAINERD_VERSION),
# and crictl (CRICTL_VERSION), with CGO_ENABLED=0 and the tags that leave
# out the snapshotters needing C libraries. runc is Debian's
# (scripts/install-deps.sh). The modules come through the machine's Go
# module proxy setting.
#
# Prints the directory holding bin/{containerd,containerd-shim-runc-v2,ctr,
# crictl} on stdout.
#   KERNEL_CACHE  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl)
set -euo pipefail

CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
CRICTL_VERSION=${CRICTL_VERSION:-v1.37.0}
cache=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
log() { printf 'runtime-build: %s\n' "$*" >&2; }

out=$cache/runtime/containerd-$CONTAINERD_VERSION-crictl-$CRICTL_VERSION
if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$cache/runtime"
# one build per cache at a time: two go installs into one directory would
# replace each other's binaries half-written
exec 9>"$cache/.runtime.lock"
if ! flock -n 9; then
	log "waiting for another runtime build using $cache"
	flock 9
fi
if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

rm -rf "$out.tmp"
mkdir -p "$out.tmp/bin"
logf=$out.tmp/build.log
# the step's log, its tail shown when it fails
step() { # what command...
	local what=$1
	shift
	log "$what"
	if ! "$@" >>"$logf" 2>&1; then
		log "error: $what failed; the end of its log ($logf):"
		tail -n 30 "$logf" >&2
		exit 1
	fi
}
start=$(date +%s)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN=$out.tmp/bin GOFLAGS=-buildvcs=false
step "building containerd $CONTAINERD_VERSION (containerd, containerd-shim-runc-v2, ctr)" \
	"$GO" install -trimpath -ldflags=-s -tags no_btrfs,no_devmapper,no_zfs \
	github.com/containerd/containerd/v2/cmd/containerd@"$CONTAINERD_VERSION" \
	github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@"$CONTAINERD_VERSION" \
	github.com/containerd/containerd/v2/cmd/ctr@"$CONTAINERD_VERSION"
step "building crictl $CRICTL_VERSION" \
	"$GO" install -trimpath -ldflags=-s sigs.k8s.io/cri-tools/cmd/crictl@"$CRICTL_VERSION"
log "built in $(( $(date +%s) - start )) s"
rm -rf "$out"
mv "$out.tmp" "$out"
touch "$out/.complete"
echo "$out"
