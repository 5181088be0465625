#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Make the arm64 guest's root file system once: Debian 12 arm64 packages
# from the machine's own Debian mirror, extracted by mmdebstrap (variant
# extract: no maintainer script runs, so no arm64 emulation of the build
# host is needed, binfmt_misc or not), plus what those scripts would have
# written that the guest needs (passwd, group; no library cache: the
# dynamic loader searches the multiarch directories).
#
# Prints the directory on stdout. Cached under
# $KERNEL_CACHE/arm64/rootfs/<key> (key: suite, packages and this script);
# an existing one is reused.
#   KERNEL_CACHE            cache root, as for scripts/kernel-build.sh
#   MTHPCTL_DEBIAN_MIRROR   Debian mirror URL (default: the first one in
#                           the machine's apt sources)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl}
log() { printf 'arm64-rootfs: %s\n' "$*" >&2; }

suite=bookworm
# virtme-ng's bash init (virtme-init: bash, mount, coreutils, util-linux),
# busybox for the tests' small tools, libelf/zlib/zstd for the tools linked
# against libbpf, jq and python3 for the integration tests, redis for those
# that run it.
pkgs=(libc6 libc-bin base-files base-passwd bash dash coreutils util-linux mount
      procps busybox-static findutils grep sed gawk kmod iproute2
      libelf1 zlib1g libzstd1 libcap2 jq python3-minimal redis-server redis-tools)

key=$( { echo "$suite"; printf '%s\n' "${pkgs[@]}"; cat "$0"; } | sha256sum | cut -c1-16)
out=$cache/arm64/rootfs/$key
if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi
command -v mmdebstrap >/dev/null ||
	{ log "error: mmdebstrap not found (scripts/install-deps.sh --arm64)"; exit 1; }
mkdir -p "$cache/arm64/rootfs"
exec 9>"$cache/arm64/rootfs/.lock"
flock 9
if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi

# shellcheck source=scripts/debian-mirror.sh
. "$top/scripts/debian-mirror.sh"
mirror=${MTHPCTL_DEBIAN_MIRROR:-$(debian_mirror)}
[ -n "$mirror" ] || { log "error: no Debian mirror in the apt sources; set MTHPCTL_DEBIAN_MIRROR=URL"; exit 1; }

rm -rf "$out.tmp"
log "extracting $suite arm64 from $mirror into $out"
start=$(date +%s)
mmdebstrap --quiet --variant=extract --arch=arm64 \
	--include="$(IFS=,; echo "${pkgs[*]}")" "$suite" "$out.tmp" "$mirror" >&2
# what base-passwd's and base-files' scripts would have done
cp "$out.tmp/usr/share/base-passwd/passwd.master" "$out.tmp/etc/passwd"
cp "$out.tmp/usr/share/base-passwd/group.master" "$out.tmp/etc/group"
echo mthp-vm >"$out.tmp/etc/hostname"
: >"$out.tmp/etc/fstab"
# links the packages' scripts would have made (dash's /bin/sh, gawk's
# awk alternative)
[ -e "$out.tmp/bin/sh" ] || ln -s dash "$out.tmp/bin/sh"
[ -e "$out.tmp/usr/bin/awk" ] || ln -s gawk "$out.tmp/usr/bin/awk"
# virtme-init powers the guest off with poweroff (systemd's, not installed
# here): busybox's, or PID 1's exit panics the guest
for a in poweroff reboot halt; do
	[ -e "$out.tmp/sbin/$a" ] || ln -s /bin/busybox "$out.tmp/sbin/$a"
done
# busybox's applets, as links in a directory of their own (a test puts it
# at the end of PATH); the list from the static busybox under qemu-user
mkdir -p "$out.tmp/usr/local/busybox"
if command -v qemu-aarch64-static >/dev/null; then
	for a in $(qemu-aarch64-static "$out.tmp/bin/busybox" --list); do
		ln -sf /bin/busybox "$out.tmp/usr/local/busybox/$a"
	done
fi
mv "$out.tmp" "$out"
touch "$out/.complete"
log "made in $(( $(date +%s) - start )) s ($(du -sh "$out" | cut -f1))"
echo "$out"
