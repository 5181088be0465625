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
#
# The result directory (keyed by base + patches + config) holds bzImage,
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

if [ -n "${KERNEL_SRC:-}" ]; then
	[ -f "$KERNEL_SRC/Makefile" ] || { log "error: KERNEL_SRC=$KERNEL_SRC is not a kernel tree"; exit 1; }
	pristine=$(cd "$KERNEL_SRC" && pwd)
	base_id=local-$(printf '%s' "$pristine" | sha256sum | cut -c1-12)
else
	pristine=$("$top/scripts/kernel-fetch.sh")
	base_id=$(basename "$pristine")
fi

mapfile -t patches < <(grep -v '^\s*\(#\|$\)' "$top/kernel/series")
# The configuration: kernel/config, then the optional extra fragment.
fragments=("$top/kernel/config")
obj_suffix=
if [ -n "${KERNEL_CONFIG_EXTRA:-}" ]; then
	[ -f "$KERNEL_CONFIG_EXTRA" ] || { log "error: KERNEL_CONFIG_EXTRA=$KERNEL_CONFIG_EXTRA does not exist"; exit 1; }
	fragments+=("$(cd "$(dirname "$KERNEL_CONFIG_EXTRA")" && pwd)/$(basename "$KERNEL_CONFIG_EXTRA")")
	obj_suffix=-$(sha256sum <"$KERNEL_CONFIG_EXTRA" | cut -c1-8)
fi
config_all=$(cat "${fragments[@]}")

key=$( { echo "$base_id"; echo "$config_all";
	 for p in "${patches[@]}"; do cat "$top/kernel/$p"; done; } |
       sha256sum | cut -c1-16)
out=$cache/images/$key
if [ -f "$out/.complete" ] && [ "${1:-}" != --tree ]; then
	log "cached build $key"
	echo "$out"
	exit 0
fi

# One build at a time per cache: two makes in one object tree delete each
# other's files (seen as a missing net/packet/af_packet.o). A finished
# result (.complete) is never written again, so the check above needs no
# lock and a cached kernel does not wait for another series' build.
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
	log "waiting for another kernel build using $cache"
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
tree=$cache/tree/$base_id
applied=$tree/.mthp-applied
if [ ! -f "$tree/.mthp-tree" ]; then
	log "copying $pristine to $tree"
	rm -rf "$tree"
	mkdir -p "$(dirname "$tree")"
	cp -a "$pristine" "$tree"
	rm -rf "$applied"
	mkdir -p "$applied"
	touch "$tree/.mthp-tree"
fi
same=1
if [ "$(cat "$applied/series" 2>/dev/null)" != "$(printf '%s\n' "${patches[@]}")" ]; then
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
	keep=$cache/tree/.keep-$base_id
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
	rm -rf "$cache/obj/$base_id"*/bpf-toolchain
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

obj=$cache/obj/$base_id$obj_suffix
mkdir -p "$obj"
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.mthp-config" 2>/dev/null)" != "$config_all" ]; then
	log "configuring (allnoconfig + ${fragments[*]#"$top/"})"
	make -s -C "$tree" O="$obj" allnoconfig >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"${fragments[@]}" >/dev/null
	make -s -C "$tree" O="$obj" olddefconfig >/dev/null
	printf '%s\n' "$config_all" >"$obj/.mthp-config"
fi
# Every option the fragments ask for must have survived olddefconfig.
missing=$(grep -hE '^CONFIG_[A-Z0-9_]+=[ym]$' "${fragments[@]}" |
	  while read -r line; do grep -qx "$line" "$obj/.config" || echo "$line"; done)
[ -z "$missing" ] || { log "error: options lost by olddefconfig:"; echo "$missing" >&2; exit 1; }

log "building in $obj (make -j$jobs)"
start=$(date +%s)
make -s -C "$tree" O="$obj" -j"$jobs" bzImage
log "kernel built in $(( $(date +%s) - start )) s"

# The patched tree's own libbpf and bpftool: a matched pair that knows the
# series' UAPI, for the kernel tests.
KERNEL_SRC=$tree BPF_TOOLCHAIN_DIR=$obj/bpf-toolchain \
	"$top/scripts/bpf-toolchain.sh" >/dev/null

mkdir -p "$out.tmp"
cp "$obj/arch/x86/boot/bzImage" "$obj/vmlinux" "$obj/.config" "$out.tmp/"
cp -r "$obj/bpf-toolchain/include" "$obj/bpf-toolchain/lib" \
	"$obj/bpf-toolchain/bin" "$out.tmp/"
printf '%s\n' "${patches[@]}" >"$out.tmp/series"
rm -rf "$out"; mv "$out.tmp" "$out"
touch "$out/.complete"
echo "$out"
