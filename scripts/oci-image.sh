#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# An OCI image archive from a staged directory, offline: ROOT is the
# image's one layer as it is, written by src/nri/deploy/image
# (go-containerregistry's Go library, from the Go module proxy at the
# version its go.sum pins). Nothing of this machine is added: the
# binaries in ROOT must be static (tests/check-nri-image.sh checks the
# plugin's image).
#
#   scripts/oci-image.sh -r ROOT -n NAME:TAG -o OUT.tar [-e ENTRYPOINT,ARG...]
#                        [-c ARG,...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
root= name= out= entry= cmd=
while getopts r:n:o:e:c: opt; do
	case $opt in
	r) root=$OPTARG ;;
	n) name=$OPTARG ;;
	o) out=$OPTARG ;;
	e) entry=$OPTARG ;;
	c) cmd=$OPTARG ;;
	*) echo "oci-image: see the header of $0" >&2; exit 2 ;;
	esac
done
[ -n "$root" ] && [ -n "$name" ] && [ -n "$out" ] ||
	{ echo "oci-image: give -r ROOT -n NAME:TAG -o OUT.tar" >&2; exit 2; }

mkimage=$top/.output/mkimage
if [ ! -x "$mkimage" ] || [ -n "$(find "$top/src/nri/deploy/image" -newer "$mkimage" -type f)" ]; then
	mkdir -p "$top/.output"
	(cd "$top/src/nri/deploy/image" &&
	 CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly "$GO" build -trimpath -o "$mkimage" .)
fi
"$mkimage" -root "$root" -name "$name" -o "$out" -entrypoint "$entry" -cmd "$cmd"
