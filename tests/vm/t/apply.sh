# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 11: apply, a configuration of cgroup paths and units ----------------------

APPLIED=/run/mthpctl/applied

# snapshot plus apply's record of what it attached
apply_snapshot() { snapshot; cat "$APPLIED" 2>/dev/null; }

t_apply() {
	local a b h conf out rc before ida idb idh link j
	a=$(mkcg ap-a) && b=$(mkcg ap-b) && h=$(mkcg ap-hand) || return 1
	ida=$(cg_id "$a") idb=$(cg_id "$b") idh=$(cg_id "$h")
	rm -f "$APPLIED"
	conf=$logs/apply.conf
	printf '# two cgroups by path\n[%s]\npolicy = auto\nthreshold = 50ms\n\n[%s]\npolicy = fixed\nmax-size = 64K\n' \
		"$a" "$b" >"$conf"
	# attached by hand, named nowhere in the file: apply leaves it alone
	"$M" attach --cgroup "$h" --policy never >/dev/null || fail "attach by hand" || return 1

	# --dry-run: the plan, text and JSON; nothing changes
	before=$(apply_snapshot)
	out=$("$M" -j apply --config "$conf" --dry-run) || fail "dry run -j: $out" || return 1
	jq -e --arg a "$a" --arg b "$b" --arg src "$conf:2" '.dry_run and .changes == 2 and
	       ([.actions[].action] == ["attach", "attach"]) and .actions[0].target == $a and
	       .actions[0].source == $src and .actions[0].params.threshold_ns == 50000000 and
	       .actions[1].cgroup == $b and .actions[1].params.max_size_bytes == 65536 and
	       (.actions | all(.done == false)) and .dropins == []' <<<"$out" >/dev/null ||
		fail "dry run JSON: $out" || return 1
	out=$("$M" apply --config "$conf" --dry-run) || fail "dry run: $out" || return 1
	grep -q "^attach    $a: auto (window 1s, threshold 50ms, min-usage 16M)$" <<<"$out" &&
		grep -q '^dry run, nothing changed: 2 to attach, 0 to replace, 0 to detach, 0 unchanged$' <<<"$out" ||
		fail "dry run printed: $out" || return 1
	same_as "$before" apply_snapshot || fail "--dry-run changed something" || return 1

	# apply: both attached, as status reads them back
	out=$("$M" apply --config "$conf") || fail "apply: $out" || return 1
	grep -q "^attached  $b: fixed (max-size 64K)$" <<<"$out" &&
		grep -q '^2 to attach, 0 to replace, 0 to detach, 0 unchanged (done)$' <<<"$out" ||
		fail "apply printed: $out" || return 1
	policy_json "$a" | jq -e '.attached and .policy == "auto" and .params.threshold_ns == 50000000' >/dev/null &&
		policy_json "$b" | jq -e '.attached and .policy == "fixed" and .params.max_size_bytes == 65536' >/dev/null ||
		fail "status after apply: $(status_json | jq -c '[.policies[] | {cgroup, policy, params}]')" || return 1
	grep -q "^$ida [0-9]* 0 .* $a\$" "$APPLIED" && ! grep -q " $h\$" "$APPLIED" ||
		fail "state file: $(cat "$APPLIED")" || return 1

	# again: nothing to change, nothing changes
	before=$(apply_snapshot)
	out=$("$M" apply --config "$conf") || fail "second apply: $out" || return 1
	[ "$(tail -n1 <<<"$out")" = "nothing to change (2 policies as configured)" ] ||
		fail "second apply printed: $out" || return 1
	out=$("$M" -j apply --config "$conf") && jq -e '.changes == 0 and ([.actions[].action] == ["keep", "keep"])' <<<"$out" >/dev/null ||
		fail "second apply -j: $out" || return 1
	same_as "$before" apply_snapshot || fail "a second apply changed something" || return 1

	# edited: b's cap changes (replaced, same link), a is gone (detached),
	# the hand-attached policy stays
	link=$(link_of_cgroup "$idb")
	printf '[%s]\npolicy = fixed\nmax-size = 16K\n' "$b" >"$conf"
	out=$("$M" apply --config "$conf") || fail "apply edited: $out" || return 1
	grep -q "^replaced  $b: fixed (max-size 16K), was fixed (max-size 64K)$" <<<"$out" &&
		grep -q "^detached  $a (cgroup id $ida): no longer in the configuration$" <<<"$out" ||
		fail "apply edited printed: $out" || return 1
	[ "$(link_of_cgroup "$idb")" = "$link" ] || fail "replace made a new link" || return 1
	[ -z "$(link_of_cgroup "$ida")" ] && [ ! -e "$PINS/cg-$ida" ] || fail "$a still has a policy" || return 1
	policy_json "$b" | jq -e '.params.max_size_bytes == 16384' >/dev/null || fail "b not 16K" || return 1
	policy_json "$h" | jq -e '.attached and .policy == "never"' >/dev/null || fail "hand-attached policy gone" || return 1

	# a policy attached by hand to a cgroup apply detached: not apply's now
	"$M" attach --cgroup "$a" --policy never >/dev/null || fail "attach a by hand" || return 1
	out=$("$M" apply --config "$conf") && [ "$(tail -n1 <<<"$out")" = "nothing to change (1 policy as configured)" ] ||
		fail "apply after a hand attach: $out" || return 1
	policy_json "$a" | jq -e '.attached' >/dev/null || fail "apply detached a hand-attached policy" || return 1

	# a bad file is refused whole, with FILE:LINE, and nothing changes
	before=$(apply_snapshot)
	printf '[%s]\npolicy = never\n\n[%s]\nwindow = 5x\n' "$b" "$h" >"$logs/bad.conf"
	out=$("$M" apply --config "$logs/bad.conf" 2>&1)
	rc=$?
	[ "$rc" = 8 ] && [ "$out" = "mthpctl: error: $logs/bad.conf:5: [$h]: bad window '5x' (a duration from 10ms to 60s, e.g. 1s) (nothing changed)" ] ||
		fail "bad window: exit $rc: $out" || return 1
	printf '[%s]\npolicy = never\nmax_size = 2M\n' "$b" >"$logs/bad.conf"
	out=$("$M" -j apply --config "$logs/bad.conf")
	rc=$?
	[ "$rc" = 8 ] && jq -e --arg f "$logs/bad.conf:3: " '.exit_code == 8 and (.error | startswith($f + "unknown key '"'"'max_size'"'"'"))' <<<"$out" >/dev/null ||
		fail "unknown key: exit $rc: $out" || return 1
	# a path that is no cgroup: refused before anything changes (exit 4)
	printf '[%s]\npolicy = never\n[%s/nonexistent]\n' "$b" "$CG" >"$logs/bad.conf"
	out=$("$M" apply --config "$logs/bad.conf" 2>&1)
	rc=$?
	[ "$rc" = 4 ] && grep -q "^mthpctl: error: $logs/bad.conf:3: \[$CG/nonexistent\]: .*does not exist" <<<"$out" ||
		fail "missing cgroup: exit $rc: $out" || return 1
	same_as "$before" apply_snapshot || fail "a refused file changed something" || return 1

	# units without systemd: one line, exit 4, nothing changed
	[ ! -e /run/systemd/system ] || fail "/run/systemd/system exists in the VM" || return 1
	printf '[%s]\npolicy = never\n[redis.service]\npolicy = never\n' "$b" >"$logs/unit.conf"
	out=$("$M" apply --config "$logs/unit.conf" 2>&1)
	rc=$?
	[ "$rc" = 4 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
		grep -q "^mthpctl: error: $logs/unit.conf:3: \[redis.service\]: systemd is not running" <<<"$out" ||
		fail "unit without systemd: exit $rc: $out" || return 1
	same_as "$before" apply_snapshot || fail "the unit refusal changed something" || return 1

	# units with systemd as PID 1 (restarts, drop-ins, MemoryTHP=):
	# tests/vm/systemd.sh
	note "apply: dry run, attach 2, no-op, replace+detach, hand attach kept, 3 refusals (exit 8, 8, 4), no systemd (exit 4)"
}
