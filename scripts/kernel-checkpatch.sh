#!/usr/bin/env bash
# Run the base tree's scripts/checkpatch.pl --strict on every patch of the
# series; fail on any error or warning (CHECKs are reported, not fatal).
# Also check that the series applies to the base with no fuzz.
#   KERNEL_SRC, KERNEL_CACHE as for scripts/kernel-build.sh.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
log() { printf 'kernel-checkpatch: %s\n' "$*" >&2; }
src=${KERNEL_SRC:-$("$top/scripts/kernel-fetch.sh")}

status=0
mapfile -t patches < <(grep -v '^\s*\(#\|$\)' "$top/kernel/series")
for p in "${patches[@]}"; do
	out=$(cd "$src" && perl scripts/checkpatch.pl --strict "$top/kernel/$p" 2>&1 || true)
	total=$(grep '^total:' <<<"$out" || echo "total: checkpatch gave no verdict")
	printf '%s: %s\n' "$p" "${total#total: }"
	if ! grep -q '^total: 0 errors, 0 warnings' <<<"$out"; then
		grep -E '^(ERROR|WARNING):' -A3 <<<"$out" >&2 || true
		status=1
	fi
done

# The series applies in order, exactly (git apply has no fuzz).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=$(grep -h '^--- a/' "${patches[@]/#/$top/kernel/}" | sed 's|^--- a/||' | sort -u)
for f in $files; do
	# a file an earlier patch of the series creates is not in the base
	[ -f "$src/$f" ] || continue
	mkdir -p "$tmp/$(dirname "$f")"
	cp "$src/$f" "$tmp/$f"
done
for p in "${patches[@]}"; do
	if ! (cd "$tmp" && git apply --whitespace=error-all "$top/kernel/$p"); then
		log "$p does not apply cleanly to $(basename "$src")"
		status=1
		break
	fi
done
[ "$status" = 0 ] && log "series clean: ${#patches[@]} patches" || log "series has problems"
exit "$status"
