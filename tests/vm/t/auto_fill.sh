# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- auto tells a dense fill from a sparse toucher by its fault addresses ---

# A fresh cgroup with auto, no limit: a large mapping written once in
# random order (a hash table, a GUPS array) or in order gets PMD folios in
# >= 90% of it, on a madvise host and on an always host; a toucher of one
# page per 256 KiB stays at 4 KiB (the sparse rule), also when its process
# outgrows the sparse rule half-way (6 MiB of ballast, 2 MiB touched of
# 256 MiB: its fill was followed from its first faults); on the madvise
# host a sibling without a policy gets nothing.
fill_o9() { grep -o ' o9=[0-9]*' <<<"$1" | cut -d= -f2; }
t_auto_fill() {
	local host g out o9 want=$((256 * 256 * 9 / 10)) seq= sib= sp= rnd= spb=
	for host in madvise always; do
		rnd= seq= sp= spb=
		thp_all "$host"
		g=$(mkcg "fill-rnd-$host") && "$M" attach --cgroup "$g" --policy auto >/dev/null &&
			rnd=$("$H/faulter" -c "$g" -s 256 -r | grep '^probe=')
		g=$(mkcg "fill-seq-$host") && "$M" attach --cgroup "$g" --policy auto >/dev/null &&
			seq=$("$H/faulter" -c "$g" -s 64 | grep '^probe=')
		g=$(mkcg "fill-sparse-$host") && "$M" attach --cgroup "$g" --policy auto >/dev/null &&
			sp=$("$H/faulter" -c "$g" -s 64 -t 256 | grep '^probe=')
		g=$(mkcg "fill-sparse-big-$host") && "$M" attach --cgroup "$g" --policy auto >/dev/null &&
			spb=$("$H/faulter" -c "$g" -b 6 -s 256 -t 256 | grep '^probe=')
		[ "$host" = madvise ] && sib=$("$H/faulter" -c "$(mkcg fill-nopolicy)" -s 64 -r | grep '^probe=')
		thp_all always
		o9=$(fill_o9 "$rnd")
		[ "${o9:-0}" -ge "$want" ] ||
			fail "$host host: 256M written in random order, want >= $want pages in 2M folios: $rnd" || return 1
		[ "$(fill_o9 "$seq")" -ge $((64 * 256 * 9 / 10)) ] ||
			fail "$host host: 64M written in order, want >= 90% in 2M folios: $seq" || return 1
		[[ $sp == *" pages=256 "* && $sp == *" max_order=0 "* ]] ||
			fail "$host host: one page per 256K of 64M, want 256 pages of 4K: $sp" || return 1
		[[ $spb == *" pages=1024 "* && $spb == *" max_order=0 "* ]] ||
			fail "$host host: one page per 256K of 256M beside 6M of ballast, want 1024 pages of 4K: $spb" || return 1
		note "$host host, auto: random fill $o9/65536 pages in 2M, in order $(fill_o9 "$seq")/16384, strided $(grep -o 'max_order=[0-9]*' <<<"$sp")"
	done
	[[ $sib == *" max_order=0 "* ]] || fail "madvise host: a sibling without a policy got large folios: $sib" || return 1
}
