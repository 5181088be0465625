#!/usr/bin/env bash
# Build the patched test kernel, cached and incremental.
#
# Usage: scripts/kernel-build.sh [--tree]
#   --tree             only prepare the patched source tree and print its path
#   KERNEL_SRC=/path   use this 7.3 tree instead of fetching Debian's package
#   KERNEL_CACHE=/dir  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl)
#   JOBS=N             parallel make jobs (default: nproc)
#   KERNEL_CONFIG_EXTRA=file  a fragment merged after kernel/config (e.g.
#                      kernel/config-debug); its own object tree and results
#   ARCH=arm64         cross-build for arm64 (CROSS_COMPILE, default
#                      aarch64-linux-gnu- on another host): kernel/config
#                      plus kernel/config-arm64; the result holds Image.
#                      Its tree, objects, results and lock are under
#                      $KERNEL_CACHE/arm64/, apart from x86's; only the
#                      pristine source (src/) is shared.
#   KERNEL_SERIES=none the base kernel without the series (built from the
#                      pristine source in its own object tree), to measure
#                      what the series costs against it (kernel/README.md)
#
# The result directory (keyed by base + the patches' diffs + config) holds bzImage (arm64: Image),
# vmlinux, .config, and the patched tree's libbpf and bpftool (lib/,
# include/, bin/); its path is printed
# on the last line of stdout. An existing result is reused without building.
# The object tree is kept per base + config so a patch change rebuilds only
# what it touches.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl}
jobs=${JOBS:-$(nproc)}
log() { printf 'kernel-build: %s\n' "$*" >&2; }
export KERNEL_CACHE=$cache
mkdir -p "$cache"

# The target architecture. x86 keeps the cache layout and keys it always had;
# another one gets its own subdirectory (tree, objects, results, lock), so a
# cross-build never waits for or writes into an x86 build.
arch=${ARCH:-x86}
case $arch in
x86|x86_64) arch=x86; work=$cache; kmake=(); image=arch/x86/boot/bzImage ;;
arm64|aarch64)
	arch=arm64; work=$cache/arm64
	cross=${CROSS_COMPILE-}
	[ -n "$cross" ] || [ "$(uname -m)" = aarch64 ] || cross=aarch64-linux-gnu-
	command -v "${cross}gcc" >/dev/null ||
		{ log "error: ${cross}gcc not found (scripts/install-deps.sh --arm64)"; exit 1; }
	kmake=(ARCH=arm64 CROSS_COMPILE="$cross"); image=arch/arm64/boot/Image ;;
*) log "error: ARCH=$arch: only x86 and arm64 are supported"; exit 1 ;;
esac
mkdir -p "$work"

if [ -n "${KERNEL_SRC:-}" ]; then
	[ -f "$KERNEL_SRC/Makefile" ] || { log "error: KERNEL_SRC=$KERNEL_SRC is not a kernel tree"; exit 1; }
	pristine=$(cd "$KERNEL_SRC" && pwd)
	base_id=local-$(printf '%s' "$pristine" | sha256sum | cut -c1-12)
else
	pristine=$("$top/scripts/kernel-fetch.sh")
	base_id=$(basename "$pristine")
fi

series=${KERNEL_SERIES:-kernel/series}
case $series in
kernel/series) mapfile -t patches < <(grep -v '^\s*\(#\|$\)' "$top/kernel/series") ;;
none) patches=() ;;
*) log "error: KERNEL_SERIES=$series: only none (the base kernel) is supported"; exit 1 ;;
esac
# The configuration: kernel/config, then the optional extra fragment.
fragments=("$top/kernel/config")
[ "$arch" = x86 ] || fragments+=("$top/kernel/config-$arch")
obj_suffix=
if [ -n "${KERNEL_CONFIG_EXTRA:-}" ]; then
	[ -f "$KERNEL_CONFIG_EXTRA" ] || { log "error: KERNEL_CONFIG_EXTRA=$KERNEL_CONFIG_EXTRA does not exist"; exit 1; }
	fragments+=("$(cd "$(dirname "$KERNEL_CONFIG_EXTRA")" && pwd)/$(basename "$KERNEL_CONFIG_EXTRA")")
	obj_suffix=-$(sha256sum <"$KERNEL_CONFIG_EXTRA" | cut -c1-8)
fi
config_all=$(cat "${fragments[@]}")

# The key covers what the build reads: the base, the configuration and the
# patches' diffs. A changelog is not compiled (git apply reads the diff,
# and kernel/config sets no LOCALVERSION_AUTO), so rewording one reuses
# the images already built from the same code.
key=$( { echo "$base_id"; [ "$arch" = x86 ] || echo "arch $arch";
	 [ "$series" = none ] && echo "series none"; echo "$config_all";
	 for p in "${patches[@]}"; do sed -n '/^diff --git /,$p' "$top/kernel/$p"; done; } |
       sha256sum | cut -c1-16)
out=$work/images/$key
if [ -f "$out/.complete" ] && [ "${1:-}" != --tree ]; then
	log "cached build $key"
	echo "$out"
	exit 0
fi

# One build at a time per cache: two makes in one object tree delete each
# other's files (seen as a missing net/packet/af_packet.o). A finished
# result (.complete) is never written again, so the check above needs no
# lock and a cached kernel does not wait for another series' build.
exec 9>"$work/.build.lock"
if ! flock -n 9; then
	log "waiting for another kernel build using $work"
	flock 9
fi
if [ -f "$out/.complete" ] && [ "${1:-}" != --tree ]; then
	log "cached build $key (built while waiting)"
	echo "$out"
	exit 0
fi

# The patched source: a private copy of the base tree with the series
# applied. Patches applied before are kept beside it so that a changed
# series is reverted exactly and only the files it touches get new times.
tree=$work/tree/$base_id
applied=$tree/.mthp-applied
if [ "$series" = none ]; then
	# the pristine source itself: O= builds leave it clean, and the
	# patched tree keeps its files and times for the next series build
	tree=$pristine
	obj_suffix=-base$obj_suffix
elif [ ! -f "$tree/.mthp-tree" ]; then
	log "copying $pristine to $tree"
	rm -rf "$tree"
	mkdir -p "$(dirname "$tree")"
	cp -a "$pristine" "$tree"
	rm -rf "$applied"
	mkdir -p "$applied"
	touch "$tree/.mthp-tree"
fi
same=1
if [ "$series" = none ]; then
	:
elif [ "$(cat "$applied/series" 2>/dev/null)" != "$(printf '%s\n' "${patches[@]}")" ]; then
	same=0
else
	for p in "${patches[@]}"; do
		cmp -s "$top/kernel/$p" "$applied/$p" || same=0
	done
fi
if [ "$same" = 0 ]; then
	# Remember every file the old series touched, with its content, so
	# that files the new series leaves as they were keep their times
	# (a header such as cgroup-defs.h with a new time rebuilds everything).
	keep=$work/tree/.keep-$base_id
	rm -rf "$keep"; mkdir -p "$keep"
	if [ -f "$applied/series" ]; then
		sed -n 's|^+++ b/||p' "$applied"/*.patch | sort -u |
		while read -r f; do
			[ -f "$tree/$f" ] || continue
			mkdir -p "$keep/$(dirname "$f")"
			cp -p "$tree/$f" "$keep/$f"
		done
		log "reverting the previously applied series"
		tac "$applied/series" | while read -r p; do
			git -C "$tree" apply -R --whitespace=nowarn "$applied/$p"
		done
	fi
	rm -rf "$applied"; mkdir -p "$applied"
	# the tree's libbpf/bpftool below are built once per tree: a changed
	# series changes them too (e.g. a libbpf patch)
	rm -rf "$work/obj/$base_id"*/bpf-toolchain
	for p in "${patches[@]}"; do
		log "applying $p"
		# git apply has no fuzz: a patch that does not apply exactly fails.
		git -C "$tree" apply --whitespace=error-all "$top/kernel/$p"
		cp "$top/kernel/$p" "$applied/$p"
		echo "$p" >>"$applied/series"
	done
	(cd "$keep" && find . -type f) | while read -r f; do
		if cmp -s "$keep/$f" "$tree/$f"; then
			touch -r "$keep/$f" "$tree/$f"
		fi
	done
	rm -rf "$keep"
fi

if [ "${1:-}" = --tree ]; then
	echo "$tree"
	exit 0
fi

obj=$work/obj/$base_id$obj_suffix
mkdir -p "$obj"
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.mthp-config" 2>/dev/null)" != "$config_all" ]; then
	log "configuring (allnoconfig + ${fragments[*]#"$top/"})"
	make -s -C "$tree" O="$obj" "${kmake[@]}" allnoconfig >/dev/null
	env "${kmake[@]}" "$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"${fragments[@]}" >/dev/null
	make -s -C "$tree" O="$obj" "${kmake[@]}" olddefconfig >/dev/null
	printf '%s\n' "$config_all" >"$obj/.mthp-config"
fi
# Every option the fragments ask for must have survived olddefconfig: the
# last fragment that names an option decides (kernel/config-arm64 turns off
# what arm64 does not have with "# CONFIG_X is not set").
missing=$(sed -n -e 's/^\(CONFIG_[A-Z0-9_]*\)=\(.*\)$/\1 \2/p' \
		 -e 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1 n/p' "${fragments[@]}" |
	  awk '{ v[$1] = $2; if (!($1 in o)) { o[$1] = n++; k[n - 1] = $1 } }
	       END { for (i = 0; i < n; i++) if (v[k[i]] == "y" || v[k[i]] == "m") print k[i] "=" v[k[i]] }' |
	  while read -r line; do grep -qx "$line" "$obj/.config" || echo "$line"; done)
# The base kernel does not have the series' own options (BPF_MTHP).
if [ "$series" = none ] && [ -n "$missing" ]; then
	missing=$(while read -r line; do
		sym=${line%%=*}
		! grep -rqsx --include='Kconfig*' "config ${sym#CONFIG_}" "$tree" || echo "$line"
	done <<<"$missing")
fi
[ -z "$missing" ] || { log "error: options lost by olddefconfig:"; echo "$missing" >&2; exit 1; }

log "building in $obj (make -j$jobs ${kmake[*]} $(basename "$image"))"
start=$(date +%s)
make -s -C "$tree" O="$obj" "${kmake[@]}" -j"$jobs" "$(basename "$image")"
log "kernel built in $(( $(date +%s) - start )) s"

# The patched tree's own libbpf and bpftool: a matched pair that knows the
# series' UAPI, for the kernel tests.
# For arm64, libbpf is cross-compiled and bpftool runs on the build host.
KERNEL_SRC=$tree BPF_TOOLCHAIN_DIR=$obj/bpf-toolchain ARCH=$arch \
	"$top/scripts/bpf-toolchain.sh" >/dev/null

mkdir -p "$out.tmp"
cp "$obj/$image" "$obj/vmlinux" "$obj/.config" "$out.tmp/"
cp -r "$obj/bpf-toolchain/include" "$obj/bpf-toolchain/lib" \
	"$obj/bpf-toolchain/bin" "$out.tmp/"
printf '%s\n' "${patches[@]}" >"$out.tmp/series"
rm -rf "$out"; mv "$out.tmp" "$out"
touch "$out/.complete"
echo "$out"
