#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Install mthpctl's build and test dependencies on Debian/Ubuntu.
#   scripts/install-deps.sh [--arm64]
#   --arm64  also what `make check-arm64` needs: the aarch64 cross compiler,
#            QEMU for arm64, mmdebstrap (the guest's root) and the arm64
#            libelf/zlib (dpkg's arm64 architecture is added for them)
# Idempotent and quiet; runs `apt-get update` once, only if something is
# missing. Needs root (or sudo).
#
# libbpf/bpftool are NOT installed from the distribution: Debian 12 has
# libbpf 1.1 / bpftool 7.1 (too old for .struct_ops.link skeletons), and
# bookworm-backports pairs libbpf-dev 1.4.6 with a bpftool 7.5 built on
# libbpf 1.5 whose skeletons do not compile against the 1.4.6 headers.
# scripts/bpf-toolchain.sh builds the matched pair of the kernel tree
# instead (the Makefile runs it); it needs the build tools below.
set -euo pipefail

log() { printf 'install-deps: %s\n' "$*" >&2; }
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

pkgs=(
	# build: user space and BPF
	make gcc pkg-config clang-19 llvm-19 libelf-dev zlib1g-dev libcap-dev
	# tests and docs; libclang-rt-19-dev: ASan/UBSan and libFuzzer runtimes;
	# groff-base and man-db: check-docs renders every man page with both
	libcmocka-dev python3-docutils jq libclang-rt-19-dev groff-base man-db
	# promtool (package prometheus) checks status --format=prometheus
	prometheus
	# systemd-analyze (package systemd): make check-units verifies the units
	systemd
	# scripts/bench-plots.py (make bench, make plots, make check-plots);
	# it runs /usr/bin/python3, the interpreter this package is built for
	python3-matplotlib
	# VM integration tests and the benchmark
	redis-server redis-tools qemu-system-x86 pahole bc bison flex libssl-dev
	# bench memcached: the server and its load generator (memcaslap)
	memcached libmemcached-tools
	cpio busybox-static kmod python3-pip xz-utils dpkg-dev
	# make kernel-selftests: the selftests' Makefile copies test_progs'
	# extra files into its output directory with rsync
	rsync
	# make nri-e2e: containerd's OCI runtime (containerd and crictl are
	# built from their Go modules by scripts/runtime-build.sh); its
	# systemd-driver run boots systemd as PID 1 (/sbin/init: systemd-sysv,
	# as vm-check's systemd tests do) and runc asks it for the containers'
	# scopes over D-Bus (dbus)
	runc systemd-sysv dbus
)

if [ "${1:-}" = --arm64 ]; then
	if [ "$(dpkg --print-architecture)" != arm64 ] &&
	   ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "adding dpkg architecture arm64"
		$SUDO dpkg --add-architecture arm64
	fi
	pkgs+=(gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
	       qemu-system-arm qemu-user-static mmdebstrap libelf-dev:arm64 zlib1g-dev:arm64)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get -qq update
	$SUDO apt-get -qq install -y --no-install-recommends "${missing[@]}" >/dev/null
fi

# virtme-ng (vng) runs the patched kernel under QEMU; not packaged in Debian 12.
if ! command -v vng >/dev/null 2>&1; then
	log "installing virtme-ng from PyPI"
	$SUDO python3 -m pip install --quiet --break-system-packages virtme-ng ||
		$SUDO python3 -m pip install --quiet virtme-ng
fi
# make nri-check: Go >= 1.24 for the NRI plugin (src/nri); its modules
# come from the Go module proxy when the tests build. Debian 12's golang-go
# is 1.19: the machines have a newer Go in /usr/local/go (the Makefile
# looks there when go is not on PATH); elsewhere Debian's package is
# tried (1.24 from Debian 13 on).
gobin=$(command -v go || echo /usr/local/go/bin/go)
if ! [ -x "$gobin" ]; then
	log "installing golang-go"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get -qq update
	$SUDO apt-get -qq install -y --no-install-recommends golang-go >/dev/null
	gobin=$(command -v go)
fi
gover=$("$gobin" env GOVERSION 2>/dev/null | sed 's/^go//')
if [ "$(printf '%s\n' 1.24 "$gover" | sort -V | head -n1)" != 1.24 ]; then
	log "error: make nri-check needs Go >= 1.24, found ${gover:-none} ($gobin)"
	exit 1
fi
log "ok"
