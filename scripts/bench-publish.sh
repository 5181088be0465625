#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Publish a finished `make bench` run: copy its JSON and plots into
# tests/results/RUN-ID/, to be committed, so that every figure README,
# the man pages and the cover letter quote can be checked against data in
# the tree. RUN-ID is the run folder's name (the UTC time it started;
# .output/bench/latest is followed). Copied: env.json (commit, kernel key,
# host and VM settings), starts.jsonl (free 2 MiB blocks and swap as each
# benchmark started), each benchmark's JSON (every round's figures),
# the demo's timeline and the PNG plots; not bench.json, which only
# gathers the others, nor the text tables and logs. Then RESULTS.md, every
# figure of the JSON as tables (scripts/bench-results.py), written there.
# Then: scripts/bench-table.py tests/results/RUN-ID prints README's
# results table, and `make check-docs` checks README against the newest
# published run.
#
# Usage: scripts/bench-publish.sh RUNDIR
#   BENCH_RESULTS_DIR (environment) where runs are published (default
#   tests/results; the tests use a temporary one)
# Exit status: 0 published; 1 not a finished run, already published or
# too large; 2 usage.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
results=${BENCH_RESULTS_DIR:-$top/tests/results}
# a published run is JSON and plots: a few hundred KiB; more means
# something else was picked up
max_kib=1024

die() { echo "bench-publish: $*" >&2; exit 1; }
[ $# = 1 ] && [ "${1#-}" = "$1" ] || { echo "usage: scripts/bench-publish.sh RUNDIR" >&2; exit 2; }
[ -d "$1" ] || die "$1: no such directory"
rundir=$(cd "$1" && pwd -P)
[ -f "$rundir/env.json" ] || die "$rundir: not a run folder of make bench (no env.json)"
[ -f "$rundir/bench.json" ] ||
	die "$rundir: not finished (no bench.json: scripts/bench.sh writes it after the last benchmark)"
id=$(basename "$rundir")
dest=$results/$id
[ ! -e "$dest" ] || die "$dest exists: run $id is published already"

mapfile -t files < <(cd "$rundir" && find . -maxdepth 1 -type f \
	\( \( -name '*.json' ! -name bench.json \) -o -name '*.jsonl' -o -name '*.png' \) |
	sed 's|^\./||' | sort)
kib=$(( ($(cd "$rundir" && cat "${files[@]}" | wc -c) + 1023) / 1024 ))
[ "$kib" -le "$max_kib" ] ||
	die "$rundir: ${#files[@]} files, $kib KiB, more than $max_kib KiB: not published"

mkdir -p "$results"
results=$(cd "$results" && pwd)	# absolute: the copy runs in the run folder
dest=$results/$id
tmp=$(mktemp -d "$results/.publish.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$rundir" && cp -- "${files[@]}" "$tmp/")
chmod 755 "$tmp"
mv -T "$tmp" "$dest"
trap - EXIT
# every figure of the JSON as tables, the document prose quotes from
"$top/scripts/bench-results.py" --write "$dest" ||
	{ rm -rf "$dest"; die "$dest: scripts/bench-results.py failed: not published"; }
echo "bench-publish: run $id: ${#files[@]} files, $kib KiB in $dest, and RESULTS.md"
echo "next: scripts/bench-table.py $dest, into README's Results table; commit both"
