# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 11: a policy of the user's (attach --object) --------------------------

# The pins of cgroup id ID, by name, on one line.
pins_of() { ls "$PINS/cg-$1" 2>/dev/null | tr '\n' ' '; }

# The example policy (bpf/example_vma_size.bpf.c: 4 KiB pages in mappings
# below 64 MiB, folios of at most 64K in larger ones) attached with
# --object, as the kernel's folios and counters show; status, --replace
# between objects and the built-in policies, a second cgroup with an
# object of its own, detach; bad objects refused with exit 1 and nothing
# changed.
t_object() {
	local a b ida idb ex two none ex_real out j link f line a64 n64 folios obj_a
	ex=$OUT/example_vma_size.bpf.o two=$H/ops_two.bpf.o none=$H/ops_none.bpf.o
	[ -f "$ex" ] && [ -f "$two" ] && [ -f "$none" ] || fail "objects missing (make vm-tests)" || return 1
	ex_real=$(readlink -f "$ex")
	a=$(mkcg obj-a) && b=$(mkcg obj-b) || return 1
	ida=$(cg_id "$a") idb=$(cg_id "$b")
	refusal_ok=() refusal_fail=()

	# without a policy: 2M folios in a small mapping (all sizes 'always')
	f=$logs/s11-none.out
	"$H/faulter" -c "$a" -s 8 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o9"] * 2 >= v["pages"]')" ] || fail "no 2M folios without a policy: $(tail -n1 "$f")" || return 1

	# bad objects and option mixes: exit 1, one line, nothing changed
	refuse obj-no-mthp-ops 1 "$M" attach --cgroup "$a" --object "$none"
	refuse obj-two-no-ops 1 "$M" attach --cgroup "$a" --object "$two"
	refuse obj-ops-missing 1 "$M" attach --cgroup "$a" --object "$two" --ops cap5k
	refuse obj-not-a-file 1 "$M" attach --cgroup "$a" --object "$logs/no-such.bpf.o"
	refuse obj-with-policy 1 "$M" attach --cgroup "$a" --object "$ex" --policy never
	refuse obj-with-max-size 1 "$M" attach --cgroup "$a" --object "$ex" --max-size 16K
	refuse ops-without-object 1 "$M" attach --cgroup "$a" --ops cap16k
	out=$("$M" attach --cgroup "$a" --object "$two" 2>&1)
	grep -q "has 2 bpf_mthp_ops maps (cap16k, cap4k): name the one to attach with --ops" <<<"$out" ||
		refusal_fail+=("two maps, no --ops: $out")
	out=$("$M" attach --cgroup "$a" --object "$none" 2>&1)
	grep -q "has no struct_ops map of struct bpf_mthp_ops (declare one in" <<<"$out" ||
		refusal_fail+=("no bpf_mthp_ops map: $out")
	[ ${#refusal_fail[@]} = 0 ] || fail "$(printf '%s; ' "${refusal_fail[@]}")" || return 1

	# attach the example
	out=$("$M" -j attach --cgroup "$a" --object "$ex") || fail "attach --object: $out" || return 1
	jq -e --arg f "$ex" '.action == "attached" and .policy == "object" and .object == $f and
	       .ops == "vma_size_ops" and .shared == false' <<<"$out" >/dev/null ||
		fail "attach --object printed: $out" || return 1
	link=$(jq .link_id <<<"$out")
	[ "$(pins_of "$ida")" = "link object prog totals " ] || fail "pins: $(pins_of "$ida")" || return 1
	[ "$(link_of_cgroup "$ida")" = "$link" ] || fail "links of $a: $(link_of_cgroup "$ida")" || return 1

	# a small mapping: 4 KiB pages only
	f=$logs/s11-small.out
	"$H/faulter" -c "$a" -s 8 -n 2 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	[ "$(probes "$f" 0 'v["max_order"] == 0 && v["pages"] == 2048' | wc -l)" = 2 ] ||
		fail "8M mapping under the example: $(tail -n1 "$f")" || return 1
	# a large one: 64K folios, none larger, in the faulter's own memory
	# (pagemap + kpageflags; the global hugepages-64kB counters count
	# every process and prove nothing about this cgroup)
	f=$logs/s11-large.out
	"$H/faulter" -c "$a" -s 96 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	line=$(probes "$f" 0 | head -n1)
	[ "$(field "$line" max_order)" = 4 ] && [ "$(field "$line" o4)" -gt 0 ] ||
		fail "96M mapping under the example: $line" || return 1
	folios=$(( $(field "$line" o4) / 16 ))
	note "example: 8M mapping 2/2 probes all 4K; 96M mapping max order 4, $folios 64K folios (kpageflags)"

	# status: the object, its counters (it has the convention's totals)
	j=$("$M" -j status --cgroup "$a")
	echo "$j" >>"$logs/status.json"
	jq -e --arg f "$ex_real" '.policies[0] | .policy == "object" and .attached and
	       .object.file == $f and .object.ops == "vma_size_ops" and .object.counters_known and
	       .totals.calls.pagefault > 0 and .totals.fallbacks.cap.pagefault > 0' <<<"$j" >/dev/null ||
		fail "status -j: $j" || return 1
	"$M" status --cgroup "$a" >"$logs/s11-status.txt"
	grep -qx "    policy:        object $ex_real (ops vma_size_ops)" "$logs/s11-status.txt" &&
		grep -q "^    decisions: " "$logs/s11-status.txt" ||
		fail "status: $(cat "$logs/s11-status.txt")" || return 1
	"$M" status >"$logs/s11-status-all.txt"
	grep -q "^  $a (cgroup id $ida)" "$logs/s11-status-all.txt" ||
		fail "status does not list $a" || return 1

	# while attached: another object without --replace (5), a bad one
	# with --replace (1); the policy stays
	refusal_ok=() refusal_fail=()
	refuse obj-attached 5 "$M" attach --cgroup "$a" --object "$two" --ops cap16k
	refuse obj-replace-bad 1 "$M" attach --cgroup "$a" --object "$none" --replace
	refuse obj-replace-ops-missing 1 "$M" attach --cgroup "$a" --object "$two" --ops x --replace
	[ ${#refusal_fail[@]} = 0 ] || fail "$(printf '%s; ' "${refusal_fail[@]}")" || return 1

	# --replace by the other object's cap16k map: same link, 16K folios,
	# counters unknown (it has no totals map)
	out=$("$M" -j attach --cgroup "$a" --object "$two" --ops cap16k --replace) || fail "replace: $out" || return 1
	jq -e --argjson l "$link" '.action == "replaced" and .link_id == $l and .ops == "cap16k"' <<<"$out" >/dev/null ||
		fail "replace printed: $out" || return 1
	[ "$(pins_of "$ida")" = "link object prog " ] || fail "pins after replace: $(pins_of "$ida")" || return 1
	f=$logs/s11-cap16k.out
	"$H/faulter" -c "$a" -s 8 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	line=$(probes "$f" 0 | head -n1)
	[ "$(field "$line" max_order)" = 2 ] || fail "cap16k: $line" || return 1
	j=$("$M" -j status --cgroup "$a")
	jq -e '.policies[0] | .object.ops == "cap16k" and (.object.counters_known | not) and .totals == null' \
		<<<"$j" >/dev/null || fail "status after replace: $j" || return 1
	"$M" status --cgroup "$a" >"$logs/s11-status2.txt"
	grep -q "^    counters:      unknown" "$logs/s11-status2.txt" ||
		fail "status text: $(cat "$logs/s11-status2.txt")" || return 1

	# to the built-in policy and back: the other kind's pins go
	"$M" attach --cgroup "$a" --policy fixed --max-size 32K --replace >/dev/null || fail "replace by fixed" || return 1
	[ "$(pins_of "$ida")" = "cgstate conf link pending prog sampler totals " ] ||
		fail "pins of fixed: $(pins_of "$ida")" || return 1
	"$M" attach --cgroup "$a" --object "$ex" --replace >/dev/null || fail "replace by the object" || return 1
	[ "$(pins_of "$ida")" = "link object prog totals " ] || fail "pins back: $(pins_of "$ida")" || return 1
	[ "$(link_of_cgroup "$ida")" = "$link" ] || fail "link after 3 replaces: $(link_of_cgroup "$ida")" || return 1

	# a second cgroup: an object of its own, never shared
	obj_a=$("$M" -j status --cgroup "$a" | jq .policies[0].hook.struct_ops_map_id)
	out=$("$M" -j attach --cgroup "$b" --object "$ex") || fail "attach b: $out" || return 1
	jq -e --argjson o "$obj_a" '(.shared | not) and .object_id != $o' <<<"$out" >/dev/null ||
		fail "b shares a's object $obj_a: $out" || return 1

	# detach: link and pins gone, 2M folios again
	"$M" detach --cgroup "$a" >/dev/null || fail "detach" || return 1
	[ -z "$(link_of_cgroup "$ida")" ] && [ ! -e "$PINS/cg-$ida" ] ||
		fail "left after detach: link $(link_of_cgroup "$ida"), pins $(pins_of "$ida")" || return 1
	f=$logs/s11-after.out
	"$H/faulter" -c "$a" -s 8 >"$f" 2>&1 || fail "faulter: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o9"] * 2 >= v["pages"]')" ] || fail "no 2M folios after detach: $(tail -n1 "$f")" || return 1
	"$M" detach --cgroup "$b" >/dev/null && [ -z "$(link_of_cgroup "$idb")" ] && [ ! -e "$PINS/cg-$idb" ] ||
		fail "detach b" || return 1
	note "3 replaces kept link $link (object -> object -> fixed -> object); b got an object of its own (not map $obj_a); detach left nothing"
}
