#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# An OCI image archive from a staged directory, offline: the shared
# libraries of the named binaries (as this machine's dynamic linker
# resolves them) are copied in beside the files, then
# src/nri/deploy/image (go-containerregistry's Go library, from the Go
# module proxy at the version its go.sum pins) writes the archive.
#
#   scripts/oci-image.sh -r ROOT -n NAME:TAG -o OUT.tar [-e ENTRYPOINT,ARG...]
#                        [-c ARG,...] [-l BINARY]...
#   -l BINARY   a binary in ROOT (path inside it) whose libraries to add
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
root= name= out= entry= cmd=
libs_of=()
while getopts r:n:o:e:c:l: opt; do
	case $opt in
	r) root=$OPTARG ;;
	n) name=$OPTARG ;;
	o) out=$OPTARG ;;
	e) entry=$OPTARG ;;
	c) cmd=$OPTARG ;;
	l) libs_of+=("$OPTARG") ;;
	*) echo "oci-image: see the header of $0" >&2; exit 2 ;;
	esac
done
[ -n "$root" ] && [ -n "$name" ] && [ -n "$out" ] ||
	{ echo "oci-image: give -r ROOT -n NAME:TAG -o OUT.tar" >&2; exit 2; }

for bin in "${libs_of[@]}"; do
	[ -x "$root$bin" ] || { echo "oci-image: $root$bin is not an executable" >&2; exit 1; }
	# "libelf.so.1 => /lib/x86_64-linux-gnu/libelf.so.1 (0x...)" and the
	# interpreter's own line, "/lib64/ld-linux-x86-64.so.2 (0x...)"
	ldd "$root$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done

mkimage=$top/.output/mkimage
if [ ! -x "$mkimage" ] || [ -n "$(find "$top/src/nri/deploy/image" -newer "$mkimage" -type f)" ]; then
	mkdir -p "$top/.output"
	(cd "$top/src/nri/deploy/image" &&
	 CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly "$GO" build -trimpath -o "$mkimage" .)
fi
"$mkimage" -root "$root" -name "$name" -o "$out" -entrypoint "$entry" -cmd "$cmd"
