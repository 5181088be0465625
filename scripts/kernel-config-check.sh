#!/usr/bin/env bash
# Check that the series builds outside the test configuration: for each
# variant below, configure kernel/config with one option turned off, compile
# every object in the directories the series touches, and check that each
# symbol the series introduces that these objects reference is also defined
# by one of them (what the final link would otherwise catch).
#
# Usage: scripts/kernel-config-check.sh [VARIANT...]
#   VARIANT is an option name from the list below (default: all of them).
#   KERNEL_CACHE, KERNEL_SRC, JOBS as for scripts/kernel-build.sh.
# Object trees are kept in $KERNEL_CACHE/obj-variants/ so reruns are
# incremental. Exits 1 if any variant fails.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mthpctl}
jobs=${JOBS:-$(nproc)}
log() { printf 'kernel-config-check: %s\n' "$*" >&2; }

all_variants=(PSI BPF_SYSCALL TRANSPARENT_HUGEPAGE MEMCG CGROUP_BPF BPF_MTHP)
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=("${all_variants[@]}")

tree=$("$top/scripts/kernel-build.sh" --tree | tail -n1)
# Directories holding the C files the series changes (tools/ is user space),
# and the main users of the headers it changes (bpf-cgroup.h, psi.h).
mapfile -t dirs < <({ sed -n 's|^+++ b/\(.*\)/[^/]*\.c$|\1/|p' "$top"/kernel/*.patch |
		      grep -v '^tools/'; echo kernel/cgroup/; echo net/core/; } | sort -u)
# Symbols the series adds, as they appear in object files.
new_syms='mthp|cgroup_bpf_struct_ops|bpf_cgroup_psi_stall'

failed=()
for v in "${variants[@]}"; do
	obj=$cache/obj-variants/$v
	mkdir -p "$obj"
	frag=$obj/.mthp-fragment
	{ cat "$top/kernel/config"; echo "# CONFIG_$v is not set"; } >"$frag.new"
	if ! cmp -s "$frag.new" "$frag" || [ ! -f "$obj/.config" ]; then
		make -s -C "$tree" O="$obj" allnoconfig >/dev/null
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
			"$frag.new" >/dev/null
		make -s -C "$tree" O="$obj" olddefconfig >/dev/null
	fi
	mv "$frag.new" "$frag"
	if grep -q "^CONFIG_$v=" "$obj/.config"; then
		log "$v: cannot be turned off with kernel/config (selected by another option)"
		failed+=("$v"); continue
	fi
	log "$v=n: building ${dirs[*]}"
	if ! make -s -C "$tree" O="$obj" -j"$jobs" "${dirs[@]}" >"$obj/build.log" 2>&1; then
		log "$v=n: build FAILED:"; grep -E 'error|Error' "$obj/build.log" | head -n 20 >&2
		failed+=("$v"); continue
	fi
	if grep -E 'warning:' "$obj/build.log" >&2; then
		log "$v=n: compiler warnings"; failed+=("$v"); continue
	fi
	objs=()
	for d in "${dirs[@]}"; do
		while IFS= read -r o; do objs+=("$o"); done < <(find "$obj/$d" -name '*.o' ! -name '*.mod.o')
	done
	undefined=$(nm -u "${objs[@]}" 2>/dev/null | awk '{print $NF}' | grep -E "$new_syms" | sort -u || true)
	defined=$(nm --defined-only "${objs[@]}" 2>/dev/null | awk '{print $NF}' | grep -E "$new_syms" | sort -u || true)
	missing=$(comm -23 <(echo "$undefined") <(echo "$defined") | grep . || true)
	if [ -n "$missing" ]; then
		log "$v=n: referenced but not defined: $(echo "$missing" | tr '\n' ' ')"
		failed+=("$v"); continue
	fi
	log "$v=n: ok (${#objs[@]} objects)"
done

if [ ${#failed[@]} -gt 0 ]; then
	log "FAILED: ${failed[*]}"
	exit 1
fi
log "all variants build: ${variants[*]}"
