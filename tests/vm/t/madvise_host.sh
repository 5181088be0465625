# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- madvise host: a policy grants the sizes left at madvise ----------------

# Every size at madvise (the safe host default): a cgroup with a policy
# gets large folios for a process that never calls madvise(), up to the
# policy's cap; a sibling without a policy gets 4 KiB pages; a process
# with PR_SET_THP_DISABLE in the granting cgroup gets 4 KiB pages (the
# prctl is a hard limit); status counts the madvise sizes as allowed.
t_madvise_host() {
	local g2 g64 s o2= o64= os= op= allowed= err= diff= prom= diff64=
	g2=$(mkcg grant-2m) && g64=$(mkcg grant-64k) && s=$(mkcg no-policy) || return 1
	thp_all madvise
	# measured first, the host put back before any check can return
	if ! "$M" attach --cgroup "$g2" --policy fixed --max-size 2M >/dev/null ||
	   ! "$M" attach --cgroup "$g64" --policy fixed --max-size 64K >/dev/null; then
		err="attach fixed 2M / 64K"
	else
		o2=$("$H/faulter" -c "$g2" -s 8 | grep '^probe=')
		o64=$("$H/faulter" -c "$g64" -s 8 | grep '^probe=')
		os=$("$H/faulter" -c "$s" -s 8 | grep '^probe=')
		op=$("$H/faulter" -c "$g2" -s 8 -P | grep '^probe=')
		allowed=$("$M" -j status --cgroup "$g2" | jq -c '.policies[0].allowed_sizes_kb')
		diff=$("$M" -j status --cgroup "$g2" | jq -c '.policies[0] | [.granted_sizes_kb, .taken_away_sizes_kb]')
		prom=$("$M" status --format=prometheus | grep -F "$g2")
	fi
	thp_all always
	# on the always host the same 64K cap takes the sizes above 64K away
	diff64=$("$M" -j status --cgroup "$g64" | jq -c '.policies[0] | [.granted_sizes_kb, .taken_away_sizes_kb]')
	[ -z "$err" ] || fail "$err" || return 1
	[[ $o2 == *" max_order=9 "* && $o2 == *" o9=2048 "* ]] ||
		fail "fixed 2M on a madvise host, no madvise(): want all 2048 pages in 2M folios: $o2" || return 1
	[[ $o64 == *" max_order=4 "* && $o64 == *" o4=2048 "* ]] ||
		fail "fixed 64K on a madvise host: want all 2048 pages in 64K folios: $o64" || return 1
	[[ $os == *" max_order=0 "* ]] || fail "a sibling without a policy got large folios: $os" || return 1
	[[ $op == *" max_order=0 "* ]] ||
		fail "PR_SET_THP_DISABLE in a granting cgroup got large folios: $op" || return 1
	jq -e 'index(2048) != null' <<<"$allowed" >/dev/null ||
		fail "status: the madvise host's 2M size is not among the sizes fixed 2M allows: $allowed" || return 1
	[ "$diff" = '[[16,32,64,128,256,512,1024,2048],[]]' ] ||
		fail "status on the madvise host: fixed 2M should grant every size and take none: $diff" || return 1
	grep -q '^mthpctl_size_granted{.*size_bytes="2097152"} 1$' <<<"$prom" &&
		! grep -q '^mthpctl_size_taken_away{' <<<"$prom" ||
		fail "prometheus on the madvise host: 2M granted, no size at always: $prom" || return 1
	[ "$diff64" = '[[],[128,256,512,1024,2048]]' ] ||
		fail "status on the always host: fixed 64K should take 128K..2M away: $diff64" || return 1
	note "madvise host: fixed 2M $(grep -o 'o9=[0-9]*' <<<"$o2"), fixed 64K $(grep -o 'o4=[0-9]*' <<<"$o64"), no policy $(grep -o 'max_order=[0-9]*' <<<"$os"), prctl $(grep -o 'max_order=[0-9]*' <<<"$op"); status allowed: $allowed"
}
