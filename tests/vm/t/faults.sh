# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 10: faults around attach: read-only bpffs, a cgroup removed during
# attach, detach --all during a bench ------------------------------------------

thp_settings() { grep -H . "$THP"/enabled "$THP"/hugepages-*/enabled 2>/dev/null; }

t_faults() {
	local c id out rc i d pids=() rcs before f n=0
	c=$(mkcg flt) && d=$(mkcg flt-keep) || return 1
	id=$(cg_id "$c")
	"$M" attach --cgroup "$d" >/dev/null || fail "attach flt-keep" || return 1
	# bpffs read-only (this mount only, in a private namespace)
	out=$(unshare -m sh -c 'mount -o remount,bind,ro /sys/fs/bpf || exit 99; exec "$0" attach --cgroup "$1"' \
		"$M" "$c" 2>&1)
	rc=$?
	[ "$rc" = 7 ] && grep -q "Read-only file system" <<<"$out" ||
		fail "read-only bpffs: exit $rc, want 7 naming it: $out" || return 1
	[ -z "$(link_of_cgroup "$id")" ] && [ -z "$(ls -d "$PINS/cg-$id"* 2>/dev/null)" ] ||
		fail "read-only bpffs: the failed attach left a link or pins" || return 1
	out=$(unshare -m sh -c 'mount -o remount,bind,ro /sys/fs/bpf || exit 99; exec "$0" detach --all' "$M" 2>&1)
	rc=$?
	[ "$rc" = 7 ] || fail "detach --all on read-only bpffs: exit $rc: $out" || return 1
	[ -n "$(link_of_cgroup "$(cg_id "$d")")" ] || fail "read-only detach --all detached flt-keep" || return 1

	# attach against rmdir of its cgroup, each outcome forced: removed
	# before attach looks at it, exit 4 naming it; removed while attach is
	# stopped after its pins (the cgroup's fd open, no link yet), the
	# kernel refuses the dying cgroup (-ENOENT: its bpf refcount is zero
	# one RCU grace period after rmdir), exit 7 naming the errno. Nothing
	# is left behind either way.
	f=$(mkcg gone-before) || return 1
	rmdir "$f" || fail "rmdir $f" || return 1
	out=$("$M" attach --cgroup "$f" 2>&1)
	rc=$?
	[ "$rc" = 4 ] && grep -qF "$f" <<<"$out" || fail "attach of a removed cgroup: exit $rc, want 4 naming it: $out" || return 1
	f=$(mkcg gone-during) || return 1
	id=$(cg_id "$f")
	MTHPCTL_DEBUG_STOP_AT=pin "$M" attach --cgroup "$f" >"$logs/s10-during.out" 2>&1 &
	i=$!
	for n in $(seq 600); do
		[ "$(sed 's/.*) //' "/proc/$i/stat" 2>/dev/null | cut -d' ' -f1)" = T ] && break
		sleep 0.1
	done
	[ "$(sed 's/.*) //' "/proc/$i/stat" 2>/dev/null | cut -d' ' -f1)" = T ] ||
		{ kill -9 "$i"; wait "$i"; fail "attach never stopped after its pins: $(cat "$logs/s10-during.out")"; return 1; }
	rmdir "$f" || { kill -9 "$i"; wait "$i"; fail "rmdir $f while attach is stopped"; return 1; }
	sleep 3
	kill -CONT "$i"
	wait "$i"
	rc=$?
	out=$(cat "$logs/s10-during.out")
	[ "$rc" = 7 ] && grep -q "attaching the policy failed: No such file or directory" <<<"$out" ||
		fail "attach whose cgroup was removed before the link: exit $rc, want 7 with ENOENT: $out" || return 1
	[ -z "$(link_of_cgroup "$id")" ] && [ -z "$(ls -d "$PINS/cg-$id"* 2>/dev/null)" ] ||
		fail "the refused attach of a removed cgroup left a link or pins: $(ls -d "$PINS/cg-$id"* 2>/dev/null)" || return 1
	note "attach of a removed cgroup: exit 4; cgroup removed before the link: exit 7 (ENOENT from the kernel)"

	# and unforced: attached (the kernel detaches the link with the
	# cgroup) or refused (4 or 7 as above); detach --all removes what is
	# left
	for i in 1 2 3 4 5 6; do
		f=$(mkcg "gone-$i") || return 1
		"$M" attach --cgroup "$f" >/dev/null 2>"$logs/s10-gone-$i.err" &
		pids+=($!)
		sleep 0.0$i
		rmdir "$f" 2>/dev/null || { sleep 0.5; rmdir "$f"; }
	done
	rcs=
	for i in "${pids[@]}"; do
		wait "$i"; rcs+="$? "
	done
	for rc in $rcs; do
		case $rc in 0|4|7) ;; *) fail "attach against rmdir: exits $rcs ($(cat "$logs"/s10-gone-*.err))" || return 1 ;; esac
	done
	# no policy stays attached to a removed cgroup
	for i in $(seq 30); do
		n=$("$M" -j status | jq '[.policies[] | select(.attached and .cgroup == null)] | length')
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	[ "$n" = 0 ] || fail "$n policies still attached to removed cgroups" || return 1
	"$M" detach --all >/dev/null || fail "detach --all after the removals" || return 1
	[ -z "$(ls -A "$PINS" 2>/dev/null)" ] && [ -z "$(bpfobjs | grep '^link ')" ] ||
		fail "left after detach --all: $(ls -A "$PINS")" || return 1
	note "attach against rmdir, 6 rounds: exits $rcs"

	# detach --all while a bench runs with its policy: the bench ends,
	# restores the THP settings and leaves no pin
	before=$(thp_settings)
	f=$logs/s10-bench.out
	# The policy's run alone, long enough (200 x 32M, seconds under TCG)
	# that the detach lands while it is attached: a short run could start
	# and end between two looks at the pins (seen with 8 iterations).
	"$M" bench pagefault --modes policy --repeats 1 --iterations 200 --size 32M \
		--quiet >"$f" 2>&1 &
	i=$!
	for n in $(seq 3000); do
		compgen -G "$PINS/cg-*" >/dev/null && break
		kill -0 "$i" 2>/dev/null || break
		sleep 0.02
	done
	compgen -G "$PINS/cg-*" >/dev/null || fail "the bench never attached its policy: $(tail -n3 "$f")" || return 1
	kill -0 "$i" 2>/dev/null || fail "the bench ended before its policy could be detached: $(tail -n3 "$f")" || return 1
	"$M" detach --all >/dev/null || fail "detach --all during the bench" || return 1
	wait "$i"
	rc=$?
	[ "$rc" = 0 ] || fail "the bench exited $rc after its policy was detached: $(tail -n5 "$f")" || return 1
	[ "$(thp_settings)" = "$before" ] || fail "THP settings not restored after the bench" || return 1
	[ -z "$(ls -A "$PINS" 2>/dev/null)" ] || fail "pins left after the bench: $(ls -A "$PINS")" || return 1
	note "read-only bpffs: attach and detach --all exit 7, nothing changed; detach --all during a bench: bench exit 0, settings restored"
}
