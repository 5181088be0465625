#!/usr/bin/env bash
# Build a matched libbpf (static) + bootstrap bpftool from the kernel tree
# named by kernel/BASE, into a cache directory outside the repository.
#
# Why: Debian 12's libbpf 1.1 / bpftool 7.1 cannot handle .struct_ops.link
# skeletons, and bookworm-backports pairs libbpf-dev 1.4.6 with a bpftool 7.5
# built on libbpf 1.5, whose skeletons do not compile against the 1.4.6
# headers. The kernel tree carries a matched pair (libbpf 1.8, bpftool).
#
# Prints the toolchain directory on stdout; it contains
#   include/bpf/*.h   lib/libbpf.a   bin/bpftool
# Environment:
#   KERNEL_SRC        use this kernel tree instead of fetching one
#   BPF_TOOLCHAIN_DIR where to build (default: $cache/bpf-toolchain/<tree name>)
#   KERNEL_CACHE      cache root, as for scripts/kernel-fetch.sh
#   ARCH=arm64        libbpf cross-compiled for arm64 (CROSS_COMPILE, default
#                     aarch64-linux-gnu- on another host; the arm64 libelf
#                     and zlib headers: scripts/install-deps.sh --arm64);
#                     bpftool still runs on the build host. Default
#                     directory: <tree name>-arm64.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl}
log() { printf 'bpf-toolchain: %s\n' "$*" >&2; }

src=${KERNEL_SRC:-}
if [ -z "$src" ]; then
	src=$("$top/scripts/kernel-fetch.sh")
fi
[ -f "$src/tools/lib/bpf/libbpf.c" ] || { log "error: $src is not a kernel tree with tools/lib/bpf"; exit 1; }

cross= suffix=
case ${ARCH:-x86} in
x86|x86_64) ;;
arm64|aarch64)
	suffix=-arm64
	if [ "$(uname -m)" != aarch64 ]; then
		cross=${CROSS_COMPILE:-aarch64-linux-gnu-}
	fi ;;
*) log "error: ARCH=$ARCH: only x86 and arm64 are supported"; exit 1 ;;
esac
out=${BPF_TOOLCHAIN_DIR:-$cache/bpf-toolchain/$(basename "$src")$suffix}
stamp=$out/.built

# The UAPI headers libbpf 1.8 expects are newer than Debian 12's
# linux-libc-dev: ship the tree's copies next to libbpf's headers.
install_uapi() {
	mkdir -p "$out/include/linux"
	for h in bpf.h bpf_common.h btf.h; do
		cmp -s "$src/tools/include/uapi/linux/$h" "$out/include/linux/$h" ||
			cp "$src/tools/include/uapi/linux/$h" "$out/include/linux/$h"
	done
}

built() { [ -f "$stamp" ] && [ -x "$out/bin/bpftool" ] && [ -f "$out/lib/libbpf.a" ]; }
if built; then
	install_uapi
	echo "$out"
	exit 0
fi
# One build per toolchain directory at a time: two makes (two checkouts'
# `make` at once) in one object tree break each other's bootstrap bpftool.
mkdir -p "$out"
exec 7>"$out.lock"
if ! flock -n 7; then
	log "waiting for another build of $out"
	flock 7
fi
if built; then
	install_uapi
	echo "$out"
	exit 0
fi

jobs=${JOBS:-$(nproc 2>/dev/null || echo 1)}
mkdir -p "$out/obj/libbpf" "$out/obj/bpftool" "$out/bin"
logf=$out/build.log
: >"$logf"
# a step's output goes to the log; a failure shows its end
step() { # what command...
	local what=$1
	shift
	if ! "$@" >>"$logf" 2>&1; then
		log "error: $what failed; the end of its log ($logf):"
		tail -n 30 "$logf" >&2
		exit 1
	fi
}
log "building libbpf from $src"
# (ARCH and CROSS_COMPILE are the kernel's names: tools/ reads them too)
libbpf_cc=()
[ -z "$cross" ] || libbpf_cc=(CC="${cross}gcc" AR="${cross}ar" LD="${cross}ld" ARCH=arm64 CROSS_COMPILE="$cross")
step "libbpf build" env -u ARCH -u CROSS_COMPILE make -s -C "$src/tools/lib/bpf" -j"$jobs" "${libbpf_cc[@]}" BUILD_STATIC_ONLY=1 \
	OUTPUT="$out/obj/libbpf/" DESTDIR="$out" prefix= \
	EXTRA_CFLAGS="-O2 -g -fPIC" install
# libbpf installs into lib or lib64 depending on the host; normalise.
if [ ! -f "$out/lib/libbpf.a" ]; then
	mkdir -p "$out/lib"
	cp "$(find "$out" -path "$out/obj" -prune -o -name libbpf.a -print | head -n1)" "$out/lib/"
fi
log "building bootstrap bpftool"
step "bpftool bootstrap build" env -u ARCH -u CROSS_COMPILE make -s -C "$src/tools/bpf/bpftool" -j"$jobs" OUTPUT="$out/obj/bpftool/" \
	bootstrap
cp "$out/obj/bpftool/bootstrap/bpftool" "$out/bin/bpftool"
install_uapi
echo "$src" >"$stamp"
echo "$out"
