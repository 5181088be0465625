# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 6: races: two attaches at once, attach against detach ---------------

# Two `mthpctl attach` on one cgroup at once: exactly one wins, the other
# exits 5 (already attached); the kernel holds one link, bpffs one pin
# directory. Then attach and detach at once: whichever order, no stray
# link or pin is left after a final detach.
t_races() {
	local c id i p1 p2 r1 r2 out
	c=$(mkcg race) || return 1
	id=$(cg_id "$c")
	for i in 1 2 3; do
		"$M" attach --cgroup "$c" --policy never >/dev/null 2>"$logs/s6-a$i.err" & p1=$!
		"$M" attach --cgroup "$c" --policy fixed --max-size 64K >/dev/null 2>"$logs/s6-b$i.err" & p2=$!
		wait "$p1"; r1=$?
		wait "$p2"; r2=$?
		[ "$(printf '%s\n' "$r1" "$r2" | sort | tr '\n' ' ')" = "0 5 " ] ||
			fail "round $i: exits $r1 and $r2, want 0 and 5 ($(cat "$logs/s6-a$i.err" "$logs/s6-b$i.err"))" || return 1
		out=$("$M" -j status --cgroup "$c")
		jq -e '(.policies | length) == 1 and (.policies[0].hook.effective_map_ids | length) == 1' \
			<<<"$out" >/dev/null || fail "round $i: not one policy in effect: $out" || return 1
		[ "$(link_of_cgroup "$id" | wc -l)" = 1 ] || fail "round $i: links $(link_of_cgroup "$id")" || return 1
		[ -z "$(ls -d /sys/fs/bpf/mthpctl/*_new* 2>/dev/null)" ] ||
			fail "round $i: half-made pin directories left" || return 1
		"$M" detach --cgroup "$c" >/dev/null || fail "round $i: detach" || return 1
	done
	for i in 1 2 3; do
		"$M" attach --cgroup "$c" >/dev/null 2>&1 &
		"$M" detach --cgroup "$c" >/dev/null 2>&1 &
		wait
		"$M" detach --cgroup "$c" >/dev/null 2>&1
		[ -z "$(link_of_cgroup "$id")" ] && [ ! -e "/sys/fs/bpf/mthpctl/cg-$id" ] ||
			fail "attach against detach, round $i: link $(link_of_cgroup "$id") or pins left" || return 1
	done
	note "3 rounds of two attaches at once: one won, one exited 5; 3 rounds of attach against detach left nothing"
}
