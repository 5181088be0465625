# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 9: SIGKILL at each step of attach ---------------------------------------

# No pin left half-made that a later attach or detach cannot handle:
# mthpctl kills itself (MTHPCTL_DEBUG_KILL_AT) where each step of attach
# ends, a new attach, a replace, and a link to a shared object. Whatever
# the kill left, the cgroup has at most one policy, the next attach and
# detach succeed, and a final detach --all leaves no link and no pin.
# No leftover pin directory may hold a link: removing it must never
# detach a live policy.
kill_check() {	# CGROUP ID WHAT: the state after a kill is one a later run handles
	local c=$1 id=$2 what=$3 n d
	n=$(link_of_cgroup "$id" | wc -l)
	[ "$n" -le 1 ] || fail "$what: $n links on the cgroup" || return 1
	for d in "$PINS/cg-${id}"_*; do
		[ -e "$d" ] || continue
		[ ! -e "$d/link" ] || fail "$what: leftover $d holds a link" || return 1
	done
	# a later attach handles it (--replace if the kill came after the link)
	if [ "$n" = 1 ]; then
		"$M" attach --cgroup "$c" --policy never --replace >/dev/null 2>"$logs/s9.err"
	else
		"$M" attach --cgroup "$c" --policy never >/dev/null 2>"$logs/s9.err"
	fi || fail "$what: the next attach failed: $(cat "$logs/s9.err")" || return 1
	[ "$(link_of_cgroup "$id" | wc -l)" = 1 ] && [ -z "$(ls -d "$PINS/cg-${id}"_* 2>/dev/null)" ] ||
		fail "$what: after the next attach: links $(link_of_cgroup "$id"), $(ls "$PINS")" || return 1
}

t_kill_steps() {
	local c d id idd step rc n=0 other
	c=$(mkcg kill) && d=$(mkcg kill-other) || return 1
	id=$(cg_id "$c") idd=$(cg_id "$d")
	# a new attach (own object: 64K is nobody else's yet)
	for step in checks probe pins open load ready pin link; do
		# (in a group with stderr: bash's "Killed" notice goes there)
		{ MTHPCTL_DEBUG_KILL_AT=$step "$M" attach --cgroup "$c" --policy fixed --max-size 64K >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] || fail "new attach, $step: exit $rc, want 137 (SIGKILL)" || return 1
		kill_check "$c" "$id" "new attach killed after $step" || return 1
		"$M" detach --cgroup "$c" >/dev/null || fail "detach after $step" || return 1
		n=$((n + 1))
	done
	# a replace: the cgroup keeps the old policy or has the new one, never none
	"$M" attach --cgroup "$c" --policy never >/dev/null || fail "attach never" || return 1
	for step in open load ready pin link; do
		# (in a group with stderr: bash's "Killed" notice goes there)
		{ MTHPCTL_DEBUG_KILL_AT=$step "$M" attach --cgroup "$c" --policy fixed --max-size 32K --replace \
			  >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] || fail "replace, $step: exit $rc" || return 1
		[ "$(link_of_cgroup "$id" | wc -l)" = 1 ] || fail "replace killed after $step: no policy" || return 1
		kill_check "$c" "$id" "replace killed after $step" || return 1
		n=$((n + 1))
	done
	"$M" detach --cgroup "$c" >/dev/null || fail "detach after the replaces" || return 1
	# a link to the shared object of another cgroup: the other keeps it
	"$M" attach --cgroup "$d" --policy fixed --max-size 16K >/dev/null || fail "attach other" || return 1
	other=$(link_of_cgroup "$idd")
	for step in share pin link; do
		# (in a group with stderr: bash's "Killed" notice goes there)
		{ MTHPCTL_DEBUG_KILL_AT=$step "$M" attach --cgroup "$c" --policy fixed --max-size 16K >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] || fail "shared attach, $step: exit $rc" || return 1
		kill_check "$c" "$id" "shared attach killed after $step" || return 1
		[ "$(link_of_cgroup "$idd")" = "$other" ] || fail "the other cgroup lost its link ($step)" || return 1
		"$M" detach --cgroup "$c" >/dev/null || fail "detach after shared $step" || return 1
		n=$((n + 1))
	done
	"$M" detach --all >/dev/null || fail "detach --all" || return 1
	[ -z "$(bpfobjs | grep '^link ')" ] && [ -z "$(ls -A "$PINS" 2>/dev/null)" ] ||
		fail "left after detach --all: $(bpfobjs | grep '^link') $(ls -A "$PINS")" || return 1
	note "$n attaches killed at a step end (new, replace, shared): every one left a state the next attach and detach handled"
}
