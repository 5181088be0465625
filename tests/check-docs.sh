#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Check that --help, the man pages and the bash completion name the same
# commands and options, that the completion of --cgroup offers the cgroups
# `mthpctl -j status` lists, that every man page renders without a groff
# warning, and that README.md stays within 300 lines.
# Usage: tests/check-docs.sh [path/to/mthpctl [dir of the rendered pages]]
# (without the directory the pages are rendered with rst2man here)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$top/mthpctl}
mandir=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
comp=$top/scripts/mthpctl.bash-completion
fail=0

norm() { tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' '; }
longopts() { grep -o -- '--[a-z][a-z-]*' | norm; }
# options listed by argp --help (the option table, not the examples)
helpopts() { grep -E '^ +(-[^ ], )?--[a-z]' | sed -E 's/^ +(-[^ ], )?(--[a-z][a-z-]*).*/\2/' | norm; }
minus() { comm -23 <(tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -u) \
		    <(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -u) | norm; }
compvar() { sed -n "s/^[[:space:]]*local $1=\"\(.*\)\"/\1/p" "$comp" | norm; }
section() { sed -n "/^$2\$/,/^$3\$/p" "$1"; }
same() {
	local what=$1 a=$2 b=$3 c=$4
	if [ "$a" = "$b" ] && [ "$b" = "$c" ]; then
		echo "ok: $what: $a"
	else
		echo "MISMATCH: $what"
		echo "  --help:     $a"
		echo "  man:        $b"
		echo "  completion: $c"
		fail=1
	fi
}

# commands
h=$("$bin" --help | sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z]\+\) .*/\1/p' | norm)
m=$(section "$top/man/mthpctl.8.rst" COMMANDS 'EXIT STATUS' |
    sed -n 's/^\*\*\([a-z]\+\)\*\* .*/\1/p' | norm)
c=$(compvar cmds)
same commands "$h" "$m" "$c"
cmds=$h

# global options
hg=$("$bin" --help | helpopts)
mg=$(section "$top/man/mthpctl.8.rst" 'GLOBAL OPTIONS' COMMANDS | longopts)
cg=$(compvar global_opts)
same "global options" "$hg" "$mg" "$cg"

# per-command options (global ones removed)
for cmd in $cmds; do
	page=$top/man/mthpctl-$cmd.8.rst
	[ -f "$page" ] || { echo "MISSING: $page"; fail=1; continue; }
	h=$(minus "$("$bin" "$cmd" --help | helpopts)" "$hg")
	m=$(minus "$(section "$page" OPTIONS EXAMPLES | longopts)" "$hg")
	c=$(compvar "opts_$cmd")
	same "$cmd options" "$h" "$m" "$c"
done

# policies: the names of the policies the BPF program and mthpctl know
# (the names of MTHPCTL_POLICIES in include/mthp_policy.h) and the list in mthpctl's
# refusal of an unknown policy, against attach --help, the section titles
# of mthpctl-policies(7)'s DESCRIPTION and the completion; no list of names
# here, so a policy added to mthpctl and missing from one of them fails
names() { sed 's/([^)]*)//g; s/,/ /g; s/\bor\b/ /g' | grep -o '[a-z][a-z0-9-]*' | norm; }
k=$(sed -n 's/^[[:space:]]*X(MTHPCTL_POLICY_[A-Z0-9_]*, *"\([a-z0-9-]*\)").*/\1/p' \
	"$top/include/mthp_policy.h" | norm)
rc=0
a=$("$bin" attach --cgroup "$tmp/no-such-cgroup" --policy=no-such-policy 2>&1 >/dev/null) || rc=$?
[ "$rc" = 1 ] || { echo "attach --policy=no-such-policy: exit $rc, not 1 (usage): $a"; fail=1; }
a=$(sed -n "s/.*unknown policy 'no-such-policy' (use \(.*\))\$/\1/p" <<<"$a" | names)
h=$("$bin" attach --help | sed -n 's/.*--policy=NAME *\(.*\)/\1/p' | names)
m=$(section "$top/man/mthpctl-policies.7.rst" DESCRIPTION '[A-Z][A-Z ]*' |
	awk 'prev != "" && /^-+$/ { split(prev, w, " "); print w[1] } { prev = $0 }' | norm)
c=$(sed -n '/--policy|-P)/{n;p}' "$comp" | sed -n 's/.*compgen -W "\([^"]*\)".*/\1/p' | norm)
same policies "$h" "$m" "$c"
if [ -z "$k" ] || [ "$k" != "$h" ] || [ "$a" != "$h" ]; then
	echo "MISMATCH: policies of include/mthp_policy.h: $k; in mthpctl's refusal: $a; attach --help: $h"
	fail=1
fi
for p in $k; do	# each one accepted by name
	out=$("$bin" attach --cgroup "$tmp/no-such-cgroup" --policy="$p" 2>&1) || :
	if grep -q 'unknown policy' <<<"$out"; then
		echo "MISMATCH: attach refuses --policy=$p"
		fail=1
	fi
done

# --cgroup of detach and status: the cgroups with a policy, from `mthpctl -j
# status` (here a stand-in printing what status prints: a removed cgroup's
# path is null, sample_cgroup is not a policy's cgroup); attach, and a
# status that fails or lists none, fall back to directories.
fake=$tmp/mthpctl-fake
printf '%s\n' '#!/bin/sh' 'cat "$0.json"; exit "$(cat "$0.rc")"' >"$fake"
chmod +x "$fake"
printf '%s\n' '{"kernel":{"btf":true},"policies_readable":true,"policies":[' \
	'{"cgroup":"/sys/fs/cgroup/redis","cgroup_id":20,"sample_cgroup":"/sys/fs/cgroup/redis/w"},' \
	'{"cgroup":null,"cgroup_id":21,"sample_cgroup":null},' \
	'{"cgroup":"/sys/fs/cgroup/batch.slice/my job","cgroup_id":22}]}' | tr -d '\n' >"$fake.json"
echo 0 >"$fake.rc"
comp_case() {	# WANT WORD...: the candidates, joined with '|'
	local want=$1 got
	shift
	got=$("$top/tests/complete.sh" "$fake" "$@" | paste -sd '|')
	if [ "$got" = "$want" ]; then
		echo "ok: completion of '$*': $got"
	else
		echo "MISMATCH: completion of '$*': '$got', want '$want'"
		fail=1
	fi
}
comp_case '/sys/fs/cgroup/batch.slice/my job|/sys/fs/cgroup/redis' detach --cgroup ''
comp_case '/sys/fs/cgroup/redis' -j status -c /sys/fs/cgroup/r
comp_case '/sys/fs/cgroup/redis' st --cgroup /sys/fs/cgroup/r
comp_case 'DIRS' attach --cgroup /sys/fs/cgroup/r
comp_case 'version' ver
# --object: BPF objects; --ops: the struct_ops maps of the object named
# before it (the example policy's, when it is built)
comp_case 'FILES.bpf.o' attach --cgroup /sys/fs/cgroup/a --object ''
for ex in "$top"/.output/example_vma_size.bpf.o; do
	[ -f "$ex" ] || { echo "MISSING: $ex (make examples)"; fail=1; continue; }
	comp_case 'vma_size_ops' attach --object "$ex" --ops ''
	comp_case 'vma_size_ops' attach --object="$ex" --cgroup /sys/fs/cgroup/a --ops v
	comp_case '' attach --object "$ex" --ops x
done
comp_case '' attach --ops ''
echo '{"kernel":{},"policies_readable":false,"policies":[]}' >"$fake.json"
comp_case 'DIRS' detach --cgroup ''
echo 2 >"$fake.rc"
comp_case 'DIRS' status --cgroup ''

# Rendered man pages: no warning from groff with tbl and every warning on,
# nor from man(1), at several line lengths, since where a page breaks (and
# so whether a boxed tbl table is split, losing its lines: "character
# above first line discarded") depends on the width.
command -v groff >/dev/null || { echo "MISSING: groff (scripts/install-deps.sh)"; exit 1; }
if [ -z "$mandir" ]; then
	mandir=$tmp/man
	mkdir -p "$mandir"
	for rst in "$top"/man/*.rst; do
		rst2man --exit-status=2 "$rst" "$mandir/$(basename "$rst" .rst)"
	done
fi
pages=0
for rst in "$top"/man/*.rst; do
	page=$mandir/$(basename "$rst" .rst)
	[ -f "$page" ] || { echo "MISSING: $page (not rendered)"; fail=1; continue; }
	pages=$((pages + 1))
	for width in 60 80 100 132; do
		warn=$(groff -ww -t -man -Tutf8 -rLL="${width}n" "$page" 2>&1 >/dev/null)
		if command -v man >/dev/null; then
			warn+=${warn:+$'\n'}$(LC_ALL=C.UTF-8 MANWIDTH=$width man --warnings -l "$page" 2>&1 >/dev/null)
		fi
		if [ -n "$warn" ]; then
			echo "WARNINGS: $(basename "$page") at width $width:"
			sed 's/^/  /' <<<"$warn" | head -n 5
			fail=1
		fi
	done
done
echo "rendered man pages checked at widths 60 80 100 132: $pages"

# README is for users: what, why, install, quick start and one results
# table; method and history go to the man pages
readme_max=300
readme_lines=$(wc -l <"$top/README.md")
if [ "$readme_lines" -le $readme_max ]; then
	echo "ok: README.md: $readme_lines lines (at most $readme_max)"
else
	echo "TOO LONG: README.md: $readme_lines lines, at most $readme_max (move details to the man pages)"
	fail=1
fi

[ $fail = 0 ] && echo "check-docs: all consistent" || echo "check-docs: FAILED"
exit $fail
