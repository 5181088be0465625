# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 3: --replace without a gap, detach, --cgroup-id, --all ------------

t_replace_detach() {
	local r f id link out t0 t1 line i n x1 x2
	r=$(mkcg r) || return 1
	id=$(cg_id "$r")
	out=$("$M" -j attach --cgroup "$r") || fail "attach: $out" || return 1
	link=$(jq -r .link_id <<<"$out")
	f=$logs/s3-probes.out
	"$H/faulter" -c "$r" -b 24 -s 4 -n 0 -d 120000 -i 50 >"$f" 2>&1 &
	wait_line "$f" '^ready' 20 || fail "faulter not ready" || return 1
	t0=$(now_ms)
	wait_probe "$f" "$t0" 10000 'v["o9"] * 2 >= v["pages"]' >/dev/null ||
		fail "auto: no large folios: $(tail -n1 "$f")" || return 1

	# auto -> fixed 64K: the same link, folios of at most 64K at once
	t0=$(now_ms)
	out=$("$M" -j attach --cgroup "$r" --policy fixed --max-size 64K --replace) ||
		fail "replace: $out" || return 1
	t1=$(now_ms)
	jq -e --argjson l "$link" '.action == "replaced" and .link_id == $l and .policy == "fixed" and
	       .params.max_size_bytes == 65536' <<<"$out" >/dev/null || fail "replace printed: $out" || return 1
	wait_probe "$f" "$t1" 3000 'v["o4"] > 0' >/dev/null || fail "fixed 64K: no 64K folios: $(tail -n1 "$f")" || return 1
	line=$(probes "$f" "$t1" 'v["max_order"] > 4' | head -n1)
	[ -z "$line" ] || fail "fixed 64K: larger folio after the replace: $line" || return 1

	# never <-> fixed 64K, 4 times, probing all along: a gap would show 2M
	t0=$(now_ms)
	for i in 1 2 3 4; do
		"$M" attach --cgroup "$r" --policy never --replace >/dev/null || fail "replace never" || return 1
		sleep 0.3
		"$M" attach --cgroup "$r" --policy fixed --max-size 64K --replace >/dev/null || fail "replace fixed" || return 1
		sleep 0.3
	done
	t1=$(now_ms)
	sleep 0.3
	n=$(probes "$f" "$t0" "v[\"end_ms\"] <= $t1" | wc -l)
	line=$(probes "$f" "$t0" 'v["max_order"] > 4' | head -n1)
	[ -z "$line" ] || fail "a folio above 64K during 8 replaces: $line" || return 1
	[ -n "$(probes "$f" "$t0" "v[\"end_ms\"] <= $t1 && v[\"max_order\"] == 0")" ] ||
		fail "never never took effect during the replaces" || return 1
	[ "$(link_of_cgroup "$id")" = "$link" ] || fail "links of the cgroup: $(link_of_cgroup "$id"), want only $link" || return 1
	note "10 replaces kept link $link; $n probes during 8 never<->fixed swaps, none above 64K"

	# detach: the global settings (2M) again, nothing left
	out=$("$M" detach --cgroup "$r") || fail "detach: $out" || return 1
	t1=$(now_ms)
	wait_probe "$f" "$t1" 3000 'v["o9"] * 2 >= v["pages"]' >/dev/null ||
		fail "no 2M folios after detach: $(tail -n1 "$f")" || return 1
	[ ! -e "$PINS/cg-$id" ] || fail "pins left: $(ls "$PINS/cg-$id")" || return 1
	[ -z "$(link_of_cgroup "$id")" ] || fail "link left after detach" || return 1
	out=$("$M" detach --cgroup "$r" 2>&1)
	[ $? = 5 ] || fail "second detach: $out" || return 1

	# a removed cgroup's policy, by its id; the others stay
	local g gid
	g=$(mkcg gone) && gid=$(cg_id "$g") || return 1
	"$M" attach --cgroup "$g" --policy never >/dev/null &&
		"$M" attach --cgroup "$r" --policy never >/dev/null || fail "attach gone, r" || return 1
	rmdir "$g" || fail "rmdir $g" || return 1
	out=$("$M" detach --cgroup "$g" 2>&1)
	[ $? = 4 ] || fail "detach of a removed cgroup's path: $out" || return 1
	out=$("$M" detach --cgroup-id "$gid") && [ "$out" = "detached the policy of cgroup id $gid" ] ||
		fail "detach --cgroup-id: $out" || return 1
	[ ! -e "$PINS/cg-$gid" ] || fail "pins of the removed cgroup left: $(ls "$PINS/cg-$gid")" || return 1
	[ -e "$PINS/cg-$id" ] || fail "detach --cgroup-id took another cgroup's policy" || return 1
	out=$("$M" detach --cgroup-id "$gid" 2>&1)
	[ $? = 5 ] || fail "second detach --cgroup-id: $out" || return 1
	out=$("$M" detach --cgroup-id 0x1 2>&1)
	[ $? = 1 ] || fail "detach --cgroup-id 0x1: $out" || return 1
	"$M" detach --cgroup "$r" >/dev/null || fail "detach r" || return 1

	# detach --all
	x1=$(mkcg x1) && x2=$(mkcg x2) || return 1
	"$M" attach --cgroup "$x1" >/dev/null && "$M" attach --cgroup "$x2" --policy never >/dev/null &&
		"$M" attach --cgroup "$r" --policy fixed --max-size 16K >/dev/null || fail "attach x1/x2/r" || return 1
	[ "$(bpfobjs | grep -c '^link ')" = 3 ] || fail "want 3 links: $(bpfobjs)" || return 1
	out=$("$M" detach --all) || fail "detach --all: $out" || return 1
	[ "$out" = "detached 3 policies" ] || fail "detach --all printed: $out" || return 1
	[ -z "$(ls -A "$PINS" 2>/dev/null)" ] || fail "pins left: $(ls -A "$PINS")" || return 1
	[ -z "$(bpfobjs | grep '^link ')" ] || fail "links left: $(bpfobjs)" || return 1
	"$H/faulter" -c "$x2" -s 8 >"$logs/s3-x2.out" 2>&1 || fail "faulter x2" || return 1
	[ -n "$(probes "$logs/s3-x2.out" 0 'v["o9"] * 2 >= v["pages"]')" ] ||
		fail "x2 (was never) has no 2M folios after detach --all: $(tail -n1 "$logs/s3-x2.out")" || return 1
	out=$("$M" detach --all) && [ "$out" = "detached 0 policies" ] || fail "empty detach --all: $out" || return 1
}
