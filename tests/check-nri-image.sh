#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The plugin's image holds nothing of the machine that built it (make
# nri-image runs this on the archive it wrote): its layers have no shared
# library (no *.so, *.so.N) and no dynamic linker, every ELF executable
# in them is statically linked (no program interpreter, no DT_NEEDED) and
# stripped (no .symtab), and the two binaries the DaemonSet runs are there.
#
#   tests/check-nri-image.sh IMAGE.tar
set -euo pipefail

img=${1:?IMAGE.tar}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
err() { printf 'check-nri-image: %s\n' "$*" >&2; bad=1; }

tar -xf "$img" -C "$tmp"
blob() { echo "$tmp/blobs/${1%%:*}/${1#*:}"; }
mkdir "$tmp/root"
for m in $(jq -r '.manifests[].digest' "$tmp/index.json"); do
	for l in $(jq -r '.layers[].digest' "$(blob "$m")"); do
		tar -xf "$(blob "$l")" -C "$tmp/root"
	done
done

while IFS= read -r -d '' f; do
	rel=${f#"$tmp/root"}
	case $(basename "$f") in
	*.so | *.so.[0-9]* | ld-linux*) err "$rel: a shared library (or the dynamic linker) in the image" ;;
	esac
	[ -f "$f" ] && [ ! -L "$f" ] && [ "$(head -c4 "$f" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || continue
	# relocatable objects (the example BPF policies) are data, not programs
	readelf -h "$f" | grep -q 'Type:.*EXEC\|Type:.*DYN' || continue
	if readelf -lW "$f" | grep -q 'Requesting program interpreter'; then
		err "$rel: dynamically linked ($(readelf -lW "$f" | sed -n 's/.*interpreter: \(.*\)]/\1/p'))"
	fi
	if readelf -dW "$f" 2>/dev/null | grep -q '(NEEDED)'; then
		err "$rel: needs $(readelf -dW "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
	fi
	if readelf -SW "$f" | grep -q ' \.symtab '; then
		err "$rel: not stripped (.symtab)"
	fi
done < <(find "$tmp/root" -print0)

for need in /usr/local/sbin/mthpctl /usr/local/bin/mthpctl-nri; do
	[ -x "$tmp/root$need" ] || err "$need missing"
done
[ "$bad" = 0 ] || exit 1
echo "check-nri-image: $(basename "$img"): $(find "$tmp/root" -type f | wc -l) files, no shared library, static and stripped binaries"
