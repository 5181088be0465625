#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make check-bench-deps`: no two files of src/bench/ call into each other,
# directly or round a longer circle. Reads the built objects: an edge
# A -> B for every symbol A uses that B defines; tsort refuses a graph
# with a loop and names the files on it.
#
# Usage: tests/check-bench-deps.sh OBJDIR   (.output/src/bench)
set -euo pipefail

dir=${1:?usage: $0 OBJDIR (the built src/bench objects, e.g. .output/src/bench)}
shopt -s nullglob
objs=("$dir"/*.o)
[ ${#objs[@]} -gt 0 ] || { echo "check-bench-deps: no objects in $dir: build them first (make mthpctl)" >&2; exit 2; }

edges=$(
	for o in "${objs[@]}"; do
		nm --defined-only -g "$o" | awk -v f="$(basename "$o" .o)" 'NF == 3 {print "D", $3, f}'
		nm -u "$o" | awk -v f="$(basename "$o" .o)" '{print "U", $2, f}'
	done | awk '$1 == "D" {def[$2] = $3; next}
		    {use[NR] = $2; by[NR] = $3}
		    END {for (i in use) if ((use[i] in def) && def[use[i]] != by[i])
			     print by[i], def[use[i]]}' | sort -u
)
if ! err=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null) || [ -n "$err" ]; then
	echo "check-bench-deps: FAIL: src/bench files call into each other:" >&2
	echo "$err" >&2
	exit 1
fi
echo "check-bench-deps: ok: $(printf '%s\n' "$edges" | wc -l) calls between ${#objs[@]} files, no circle"
