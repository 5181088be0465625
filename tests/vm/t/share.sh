# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 7: equal parameters share one policy object ----------------------------

# Two cgroups attached with equal parameters are linked to one loaded
# object (one struct_ops map, two links); --private and other parameters
# load their own. The shared object decides for both, survives the detach
# of the cgroup that loaded it, and is freed with its last link.
t_share() {
	local a b c d ida idb out oa ob oc od obj calls0 calls1 f
	a=$(mkcg sh-a) && b=$(mkcg sh-b) && c=$(mkcg sh-c) && d=$(mkcg sh-d) || return 1
	ida=$(cg_id "$a") idb=$(cg_id "$b")
	oa=$("$M" -j attach --cgroup "$a" --policy fixed --max-size 64K) || fail "attach a: $oa" || return 1
	# linking to a loaded object reads no BTF: its program is pinned
	ob=$(MTHPCTL_DEBUG_TIMING=1 "$M" -j attach --cgroup "$b" --policy fixed --max-size 64K 2>"$logs/s7-b.timing") ||
		fail "attach b: $ob" || return 1
	! grep -q 'timing: probe ' "$logs/s7-b.timing" && [ -e "$PINS/cg-$idb/prog" ] ||
		fail "shared attach of b read the BTF or pinned no program: $(cat "$logs/s7-b.timing")" || return 1
	oc=$("$M" -j attach --cgroup "$c" --policy fixed --max-size 64K --private) || fail "attach c: $oc" || return 1
	od=$("$M" -j attach --cgroup "$d" --policy fixed --max-size 32K) || fail "attach d: $od" || return 1
	obj=$(jq -r .object_id <<<"$oa")
	jq -e '.shared == false' <<<"$oa" >/dev/null || fail "a shares: $oa" || return 1
	jq -e --argjson o "$obj" '.shared and .object_id == $o' <<<"$ob" >/dev/null ||
		fail "b does not share a's object $obj: $ob" || return 1
	jq -e --argjson o "$obj" '(.shared | not) and .object_id != $o' <<<"$oc" >/dev/null ||
		fail "--private c shares: $oc" || return 1
	jq -e --argjson o "$obj" --argjson oc "$(jq .object_id <<<"$oc")" \
		'(.shared | not) and .object_id != $o and .object_id != $oc' <<<"$od" >/dev/null ||
		fail "d (32K) shares: $od" || return 1
	# the kernel: the links of a and b on one struct_ops map
	[ "$(bpfobjs | grep -c "^link .* map_id=$obj ")" = 2 ] ||
		fail "links on map $obj: $(bpfobjs | grep '^link')" || return 1
	out=$(status_json)
	jq -e --arg a "$a" --arg b "$b" --arg c "$c" --arg d "$d" '[.policies[] |
		select(.cgroup == $a or .cgroup == $b) | .object_cgroups] == [2, 2] and
		([.policies[] | select(.cgroup == $c or .cgroup == $d) | .object_cgroups] == [1, 1])' \
		<<<"$out" >/dev/null || fail "status object_cgroups: $out" || return 1
	# every policy runs this build's object, the one version names
	jq -e --arg h "$("$M" -j version | jq -r .builtin_object_hash)" '.builtin_object_hash == $h and
		($h | test("^[0-9a-f]{16}$")) and ([.policies[].object_hash] | all(. == $h))' \
		<<<"$out" >/dev/null || fail "status object_hash: $out" || return 1
	out=$("$M" -j status --cgroup "$b")
	jq -e '.policies[0].object_cgroups == 2' <<<"$out" >/dev/null || fail "status --cgroup b: $out" || return 1
	# (into files first: grep -q stops reading early, and pipefail would
	# count the writer's SIGPIPE as a failure)
	"$M" status --cgroup "$b" >"$logs/s7-status-b.txt"
	grep -q "^    object: .*shared by 2 cgroups" "$logs/s7-status-b.txt" ||
		fail "status --cgroup b text: $(cat "$logs/s7-status-b.txt")" || return 1
	"$M" status --format=prometheus >"$logs/s7-metrics.prom"
	grep -q "^mthpctl_policy_attached{.*object=\"$obj\"} 1" "$logs/s7-metrics.prom" ||
		fail "no object label in prometheus output (see $logs/s7-metrics.prom)" || return 1

	# the shared object decides for b, and counts in both views
	calls0=$(policy_json "$a" | jq .totals.calls.pagefault)
	f=$logs/s7-b.out
	"$H/faulter" -c "$b" -s 8 >"$f" 2>&1 || fail "faulter b: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o4"] > 0')" ] && [ -z "$(probes "$f" 0 'v["max_order"] > 4')" ] ||
		fail "b under the shared 64K cap: $(tail -n1 "$f")" || return 1
	calls1=$(policy_json "$a" | jq .totals.calls.pagefault)
	[ "$calls1" -gt "$calls0" ] || fail "a's (shared) counters did not move: $calls0 -> $calls1" || return 1

	# detach a: b keeps the object, and its cap
	"$M" detach --cgroup "$a" >/dev/null || fail "detach a" || return 1
	[ ! -e "$PINS/cg-$ida" ] || fail "a's pins left" || return 1
	[ "$(bpfobjs | grep -c "^link .* map_id=$obj cgroup_id=$idb\$")" = 1 ] ||
		fail "b's link after detach a: $(bpfobjs | grep '^link')" || return 1
	jq -e '.policies[0].object_cgroups == 1' <<<"$("$M" -j status --cgroup "$b")" >/dev/null ||
		fail "b still counted as shared" || return 1
	f=$logs/s7-b2.out
	"$H/faulter" -c "$b" -s 8 >"$f" 2>&1 || fail "faulter b: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o4"] > 0')" ] && [ -z "$(probes "$f" 0 'v["max_order"] > 4')" ] ||
		fail "b after a's detach: $(tail -n1 "$f")" || return 1

	# replace b by the parameters of d: b joins d's object
	out=$("$M" -j attach --cgroup "$b" --policy fixed --max-size 32K --replace) || fail "replace b: $out" || return 1
	jq -e --argjson od "$(jq .object_id <<<"$od")" '.shared and .object_id == $od' <<<"$out" >/dev/null ||
		fail "b did not join d's object: $out" || return 1
	# object $obj had its last link in b: freed
	for _ in $(seq 30); do
		grep -q "^map id=$obj " <<<"$(bpfobjs)" || break
		sleep 0.1
	done
	! grep -q "^map id=$obj " <<<"$(bpfobjs)" || fail "map $obj outlived its last link" || return 1
	"$M" detach --all >/dev/null || fail "detach --all" || return 1
	[ -z "$(bpfobjs | grep '^link ')" ] && [ -z "$(ls -A "$PINS" 2>/dev/null)" ] ||
		fail "left after detach --all: $(bpfobjs)" || return 1
	note "a and b on struct_ops map $obj (2 links), --private and 32K apart; b kept the 64K cap after a's detach; map freed with its last link"

	# apply attaches its cgroups in one process (an attach session):
	# equal parameters link to the object it loaded for the first, each
	# with its pins (the program's too); private = yes loads its own
	local e1 e2 e3 ep conf ids f
	e1=$(mkcg sh-e1) && e2=$(mkcg sh-e2) && e3=$(mkcg sh-e3) && ep=$(mkcg sh-ep) || return 1
	conf=$logs/s7-apply.conf
	printf '[%s]\npolicy = fixed\nmax-size = 64K\n\n' "$e1" "$e2" "$e3" >"$conf"
	printf '[%s]\npolicy = fixed\nmax-size = 64K\nprivate = yes\n' "$ep" >>"$conf"
	out=$(MTHPCTL_DEBUG_TIMING=1 "$M" apply --config "$conf" 2>"$logs/s7-apply.timing") ||
		fail "apply: $out $(cat "$logs/s7-apply.timing")" || return 1
	# one session: the kernel probed once, the skeleton opened once for
	# the three of equal parameters and once for the private one
	[ "$(grep -c 'timing: probe ' "$logs/s7-apply.timing")" = 1 ] &&
		[ "$(grep -c 'timing: open ' "$logs/s7-apply.timing")" = 2 ] ||
		fail "apply's steps (one probe, two opens): $(grep -c 'timing: probe ' "$logs/s7-apply.timing") probes, $(grep -c 'timing: open ' "$logs/s7-apply.timing") opens" ||
		return 1
	out=$(status_json)
	jq -e --arg ep "$ep" '[.policies[] | select(.cgroup | test("/sh-e[123]$"))] as $e |
		($e | length) == 3 and ($e | map(.hook.struct_ops_map_id) | unique | length) == 1 and
		($e | all(.object_cgroups == 3 and .attached and (.hook.prog_id | type) == "number")) and
		(.policies[] | select(.cgroup == $ep) | .object_cgroups == 1 and
		 .hook.struct_ops_map_id != $e[0].hook.struct_ops_map_id)' <<<"$out" >/dev/null ||
		fail "apply's objects: $(jq -c '[.policies[] | {cgroup, object_cgroups, hook}]' <<<"$out")" || return 1
	[ "$(bpfobjs | grep -c "^link .* map_id=$(jq '.policies[] | select(.cgroup | test("/sh-e3$")) | .hook.struct_ops_map_id' <<<"$out") ")" = 3 ] ||
		fail "links of apply's shared object: $(bpfobjs | grep '^link')" || return 1
	for f in "$e1" "$e2" "$e3" "$ep"; do
		[ -e "$PINS/cg-$(cg_id "$f")/prog" ] || fail "no prog pin for $f" || return 1
	done
	f=$logs/s7-e3.out
	"$H/faulter" -c "$e3" -s 8 >"$f" 2>&1 || fail "faulter e3: $(tail -n2 "$f")" || return 1
	[ -n "$(probes "$f" 0 'v["o4"] > 0')" ] && [ -z "$(probes "$f" 0 'v["max_order"] > 4')" ] ||
		fail "e3 under apply's shared 64K cap: $(tail -n1 "$f")" || return 1
	: >"$logs/s7-empty.conf"
	"$M" apply --config "$logs/s7-empty.conf" >/dev/null || fail "apply of an empty file" || return 1
	[ -z "$(bpfobjs | grep '^link ')" ] && [ -z "$(ls -A "$PINS" 2>/dev/null)" ] ||
		fail "left after apply of an empty file: $(bpfobjs)" || return 1
	note "apply: 3 cgroups of equal parameters on one object, private = yes on its own"
}
