#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# mthpctl apply against a real systemd (PID 1), in the VM booted by
# scripts/vm-check.sh (`make vm-check`):
#
#   scripts/vm-run.sh -s -k KDIR -- tests/vm/systemd.sh [TEST...]
#   MTHPCTL=PATH   test another build of mthpctl (e.g. one broken on purpose)
#
# The host is put at madvise for every size, so a process gets large folios
# only where a policy grants them: a unit's folios (AnonHugePages of its
# process in /proc/PID/smaps_rollup, and the folio orders tests/vm/faulter
# reads from /proc/self/pagemap + /proc/kpageflags) show whether its
# policy was attached before its first page fault. The tests run in order
# and build on each other:
#
#   running   apply attaches to a running unit's cgroup, writes the drop-in,
#             systemd loads it (daemon-reload); faults in that cgroup get 2M
#   again     a second apply changes nothing
#   restart   a restart makes a new cgroup; the drop-in's ExecStartPre
#             attaches to it before the unit's process faults (MemoryHigh=
#             set: the policy's own counters see the unit's faults)
#   prctl     PR_SET_THP_DISABLE (systemd's MemoryTHP=disable) holds in a
#             unit whose policy grants: 4 KiB pages only, while a sibling
#             process in the same unit gets 2M folios
#   warning   apply warns, in one line naming the unit and the fix, when it
#             grants to a unit with MemoryTHP=disable
#   remove    a unit removed from the configuration: detached, drop-in
#             removed and unloaded; its next start gets no policy
#   stop      a stopped unit's cgroup is gone, and its link with it; apply
#             skips the unit and drops its record and pins
#   refused   a bad configuration is refused whole and changes nothing; so
#             is one naming a unit and its cgroup's path
#
# Prints `ok - NAME` / `not ok - NAME: reason`, then `N passed, N failed`;
# exits 1 on any failure.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
M=${MTHPCTL:-$top/mthpctl}
H=$top/.output/tests/vm
THP=/sys/kernel/mm/transparent_hugepage
CONF_DIR=/etc/mthpctl
CONF=$CONF_DIR/policies.conf
UNITS=/run/systemd/system
APPLIED=/run/mthpctl/applied
A=mthp-vm-a.service		# configured
P=mthp-vm-p.service		# configured; one process with the prctl, one without
logs=${MTHP_RESULTS:-$(mktemp -d /tmp/mthp-vm-systemd.XXXXXX)}/systemd-tests
passed=0 failed=0 why=

note() { printf '#   %s\n' "$*"; }
fail() { why="$*"; return 1; }

run_test() {
	why=
	if "t_$1"; then
		passed=$((passed + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1: ${why:-failed}"
	fi
}

thp_all() {	# MODE: every size and the top level
	local f
	for f in "$THP"/enabled "$THP"/hugepages-*/enabled; do
		[ -f "$f" ] && echo "$1" >"$f"
	done
}

# A service running faulter: a 16 MiB ballast (kept mapped), one probe of
# 2 MiB, then it holds. Its output in $logs/UNIT.out. EXTRA: more [Service]
# lines; CMD: another ExecStart.
mkunit() {
	local unit=$1 extra=${2:-} cmd=${3:-"$H/faulter -b 16 -s 2 -n 1 -H"}
	cat >"$UNITS/$unit" <<-EOF
	[Unit]
	Description=mthpctl VM test $unit
	[Service]
	ExecStart=$cmd
	StandardOutput=truncate:$logs/${unit%.service}.out
	StandardError=journal
	$extra
	EOF
}

cgroup_of() { echo "/sys/fs/cgroup$(systemctl show -p ControlGroup --value "$1")"; }
cg_id() { stat -c %i "$1"; }

# Wait until FILE has a probe line (the ballast is in place then); print it.
probe_of() {
	local f=$1 i
	for i in $(seq 600); do
		grep -q '^probe=' "$f" 2>/dev/null && break
		sleep 0.1
	done
	grep -m1 '^probe=' "$f" || { echo "no probe in $f: $(tail -n2 "$f" 2>/dev/null)" >&2; return 1; }
}
pid_of() { sed -n 's/^ready pid=\([0-9]*\)$/\1/p' "$1" | head -n1; }
anon_huge_kb() { awk '/^AnonHugePages:/ { print $2 }' "/proc/$1/smaps_rollup"; }
field() { sed -n "s/.* $2=\([0-9-]*\).*/\1/p" <<<" $1"; }

# The evidence of the unit's folios: "AnonHugePages=KB probe=..."
folios_of() {	# OUTFILE
	local line pid
	line=$(probe_of "$1") || return 1
	pid=$(pid_of "$1")
	[ -n "$pid" ] && [ -r "/proc/$pid/smaps_rollup" ] || { echo "no process for $1" >&2; return 1; }
	echo "AnonHugePages=$(anon_huge_kb "$pid") $line"
}
granted() {	# the ballast (16M) and the probe (2M) in 2M folios
	[ "$(field "$1" AnonHugePages)" -ge 16384 ] && [ "$(field "$1" o9)" = 512 ]
}
small() {	# 4 KiB pages only
	[ "$(field "$1" AnonHugePages)" = 0 ] && [ "$(field "$1" max_order)" = 0 ]
}

start_unit() {
	rm -f "$logs/${1%.service}.out"
	systemctl start "$1" || { echo "systemctl start $1 failed" >&2; return 1; }
}

# what apply and the kernel hold: links (with their cgroups), pins, the
# state file, the drop-ins and what systemd loaded of them
snapshot() {
	"$M" -j status | jq -c '[.policies[] | {cgroup_id, link_id, params}]'
	find /sys/fs/bpf/mthpctl 2>/dev/null | sort
	cat "$APPLIED" 2>/dev/null
	grep -r . "$UNITS"/*.d 2>/dev/null
	systemctl show -p DropInPaths "$A" "$P"
}
same_as() {
	local i
	for i in $(seq 30); do
		[ "$(snapshot)" = "$1" ] && return 0
		sleep 0.1
	done
	diff <(echo "$1") <(snapshot) | sed 's/^/#     /' >&2
	return 1
}
policy_of() {	# cgroup id -> its entry of status -j
	"$M" -j status | jq -c --argjson id "$1" '.policies[] | select(.cgroup_id == $id and .attached)'
}

conf_a='[mthp-vm-a.service]
policy = fixed
max-size = 2M
'
conf_p='[mthp-vm-p.service]
policy = fixed
max-size = 2M
'

setup() {
	mkdir -p "$logs"
	[ "$(id -u)" = 0 ] || { echo "systemd.sh: must run as root (inside the VM)" >&2; exit 2; }
	[[ $(readlink /proc/1/exe) == */systemd ]] && [ -d /run/systemd/system ] ||
		{ echo "systemd.sh: systemd is not PID 1 (scripts/vm-run.sh -s)" >&2; exit 2; }
	for f in "$M" "$H/faulter"; do
		[ -x "$f" ] || { echo "systemd.sh: $f missing (make mthpctl vm-tests)" >&2; exit 2; }
	done
	command -v jq >/dev/null || { echo "systemd.sh: jq missing (scripts/install-deps.sh)" >&2; exit 2; }
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	# from nothing (also after an earlier run in this boot)
	systemctl stop "$A" "$P" 2>/dev/null
	rm -rf "$UNITS/$A" "$UNITS/$P" "$UNITS/$A.d" "$UNITS/$P.d" "$CONF" "$APPLIED"
	systemctl daemon-reload
	mkdir -p "$CONF_DIR"
	"$M" detach --all >/dev/null 2>&1
	thp_all madvise
}

# --- the tests -------------------------------------------------------------

t_running() {
	local out cg before f
	mkunit "$A" "MemoryHigh=1G"
	systemctl daemon-reload && start_unit "$A" || fail "start $A" || return 1
	# the madvise host alone: 4 KiB pages
	f=$(folios_of "$logs/mthp-vm-a.out") || fail "$A without a policy: no probe" || return 1
	small "$f" || fail "$A without a policy got large folios on a madvise host: $f" || return 1
	cg=$(cgroup_of "$A")
	printf '%s' "$conf_a" >"$CONF"
	out=$("$M" apply 2>&1) || fail "apply: $out" || return 1
	# on this madvise host apply says what the policy grants beyond it
	grep -qx "attached  $A ($cg): fixed (max-size 2M); grants 16K 32K 64K 128K 256K 512K 1M 2M (left at madvise on this host)" <<<"$out" &&
		grep -qx "wrote     $UNITS/$A.d/50-mthpctl.conf" <<<"$out" ||
		fail "apply printed: $out" || return 1
	policy_of "$(cg_id "$cg")" | jq -e '.params.max_size_bytes == 2097152' >/dev/null ||
		fail "no policy on $cg: $("$M" -j status | jq -c .policies)" || return 1
	# systemd loaded the drop-in (apply ran daemon-reload)
	systemctl show -p DropInPaths --value "$A" | grep -q "$UNITS/$A.d/50-mthpctl.conf" ||
		fail "systemd did not load the drop-in: $(systemctl show -p DropInPaths "$A")" || return 1
	# faults in the running unit's cgroup get what the policy grants
	f=$("$H/faulter" -c "$cg" -s 8 | grep '^probe=')
	[ "$(field "$f" o9)" = 2048 ] || fail "a process in $cg after apply: want 2048 pages in 2M folios: $f" ||
		return 1
	note "running $A: 4 KiB only before apply; after it 2M folios in its cgroup ($(field "$f" o9)/2048 pages)"
}

t_again() {
	local before out
	before=$(snapshot)
	out=$("$M" apply 2>&1) || fail "second apply: $out" || return 1
	[ "$(tail -n1 <<<"$out")" = "nothing to change (1 policy as configured)" ] ||
		fail "second apply printed: $out" || return 1
	same_as "$before" || fail "a second apply changed something" || return 1
}

t_restart() {
	local old new f j
	old=$(cg_id "$(cgroup_of "$A")")
	rm -f "$logs/mthp-vm-a.out"
	systemctl restart "$A" || fail "restart $A" || return 1
	new=$(cg_id "$(cgroup_of "$A")")
	[ "$new" != "$old" ] || fail "the restart kept cgroup $old" || return 1
	# attached before the unit's process faulted its ballast and probe
	f=$(folios_of "$logs/mthp-vm-a.out") || fail "$A after the restart: no probe" || return 1
	granted "$f" || fail "$A after the restart: want its 16M ballast and 2M probe in 2M folios: $f" || return 1
	j=$(policy_of "$new")
	jq -e '.params.max_size_bytes == 2097152 and .totals.calls.pagefault > 0' <<<"$j" >/dev/null ||
		fail "the new cgroup's policy: $j" || return 1
	grep -q "^$new " "$APPLIED" && ! grep -q "^$old " "$APPLIED" || fail "state file: $(cat "$APPLIED")" || return 1
	note "restart: cgroup $old -> $new, policy attached by ExecStartPre before the process ran: $f"
	note "the policy counted $(jq .totals.calls.pagefault <<<"$j") page faults of the unit (MemoryHigh=$(systemctl show -p MemoryHigh --value "$A"))"
}

# systemd 252 (Debian 12) has no MemoryTHP= (a later release added it): the
# prctl it makes at exec is made here by faulter -P in the unit's process.
t_prctl() {
	local on off cmd
	cmd="/bin/sh -c '$H/faulter -P -b 16 -s 2 -n 1 -H >$logs/p-off.out & $H/faulter -b 16 -s 2 -n 1 -H >$logs/p-on.out & wait'"
	rm -f "$logs/p-off.out" "$logs/p-on.out"
	mkunit "$P" "" "$cmd"
	printf '%s\n%s' "$conf_a" "$conf_p" >"$CONF"
	"$M" apply >"$logs/apply-p.out" 2>&1 || fail "apply with $P: $(cat "$logs/apply-p.out")" || return 1
	start_unit "$P" || fail "start $P" || return 1
	off=$(folios_of "$logs/p-off.out") && on=$(folios_of "$logs/p-on.out") || fail "$P: no probe" || return 1
	grep -q '^THP_enabled:[[:space:]]*0$' "/proc/$(pid_of "$logs/p-off.out")/status" ||
		fail "the -P process has THP enabled: the prctl is not in place" || return 1
	policy_of "$(cg_id "$(cgroup_of "$P")")" | jq -e '.attached' >/dev/null || fail "$P has no policy" || return 1
	small "$off" || fail "PR_SET_THP_DISABLE in a granting cgroup got large folios: $off" || return 1
	granted "$on" || fail "the process without the prctl, same unit: want 2M folios: $on" || return 1
	note "$P (policy fixed 2M): with PR_SET_THP_DISABLE $off"
	note "$P: without it $on"
}

# systemd 252 cannot report MemoryTHP=: a systemctl on PATH answers
# MemoryTHP=disable for $P and passes everything else to the real one (on
# a systemd with the setting, the unit's own MemoryTHP=disable is used).
t_warning() {
	local bin out rc want line
	if systemctl show -p MemoryTHP "$P" | grep -q '^MemoryTHP='; then
		mkdir -p "$UNITS/$P.d" && printf '[Service]\nMemoryTHP=disable\n' >"$UNITS/$P.d/10-thp.conf" &&
			systemctl daemon-reload || fail "MemoryTHP=disable on $P" || return 1
		bin=
	else
		bin=$logs/bin
		mkdir -p "$bin"
		cat >"$bin/systemctl" <<-EOF
		#!/bin/sh
		/usr/bin/systemctl "\$@" || exit
		case " \$* " in *" show "*" $P "*) echo MemoryTHP=disable ;; esac
		EOF
		chmod +x "$bin/systemctl"
	fi
	line=$(grep -n '^\[mthp-vm-p.service\]' "$CONF" | cut -d: -f1)
	want="mthpctl: warning: $CONF:$line: $P has MemoryTHP=disable, so its processes get 4 KiB pages whatever this section grants: remove MemoryTHP= from the unit (systemctl edit $P), or set policy = never here"
	out=$(PATH=${bin:+$bin:}$PATH "$M" apply --dry-run 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$want" ] || fail "apply --dry-run: exit $rc, stderr: $out" || return 1
	out=$(PATH=${bin:+$bin:}$PATH "$M" -j apply --dry-run) &&
		jq -e --arg p "$P" --arg a "$A" '(.actions[] | select(.target == $p) | .warning | test("MemoryTHP=disable")) and
		       (.actions[] | select(.target == $a) | has("warning") | not)' <<<"$out" >/dev/null ||
		fail "apply -j --dry-run: $out" || return 1
	# a section that grants nothing: no warning
	sed "s/^max-size = 2M\$/max-size = 4K/" "$CONF" >"$logs/4k.conf"
	out=$(PATH=${bin:+$bin:}$PATH "$M" apply --dry-run --config "$logs/4k.conf" 2>&1 >/dev/null)
	[ -z "$out" ] || fail "a 4K cap still warned: $out" || return 1
	note "${bin:+(a systemctl stand-in answers MemoryTHP=disable) }$want"
}

t_remove() {
	local out id f
	id=$(cg_id "$(cgroup_of "$A")")
	printf '%s' "$conf_p" >"$CONF"
	out=$("$M" apply 2>&1) || fail "apply without $A: $out" || return 1
	grep -qx "detached  $A (cgroup id $id): no longer in the configuration" <<<"$out" &&
		grep -qx "removed   $UNITS/$A.d/50-mthpctl.conf" <<<"$out" ||
		fail "apply printed: $out" || return 1
	[ -z "$(policy_of "$id")" ] || fail "$A still has a policy" || return 1
	[ ! -e "$UNITS/$A.d/50-mthpctl.conf" ] && ! systemctl show -p DropInPaths --value "$A" | grep -q 50-mthpctl ||
		fail "the drop-in of $A is still there or loaded" || return 1
	systemctl stop "$A" && start_unit "$A" || fail "restart $A" || return 1
	f=$(folios_of "$logs/mthp-vm-a.out") || fail "$A: no probe" || return 1
	small "$f" || fail "$A removed from the configuration, restarted: got large folios: $f" || return 1
	[ -z "$(policy_of "$(cg_id "$(cgroup_of "$A")")")" ] || fail "$A got a policy at its restart" || return 1
}

t_stop() {
	local id cg out i
	cg=$(cgroup_of "$P")
	id=$(cg_id "$cg")
	systemctl stop "$P" || fail "stop $P" || return 1
	[ ! -d "$cg" ] || fail "$cg is still there after the stop" || return 1
	# the kernel lets go of the link once the cgroup is released
	for i in $(seq 50); do
		[ -z "$(policy_of "$id")" ] && break
		sleep 0.1
	done
	[ -z "$(policy_of "$id")" ] || fail "a policy is still attached to the stopped unit's cgroup $id" || return 1
	out=$("$M" apply 2>&1) || fail "apply after the stop: $out" || return 1
	grep -q "^skip      $P: fixed (max-size 2M); no cgroup now" <<<"$out" &&
		grep -qx "forget    $P (cgroup id $id): its cgroup is gone: record dropped" <<<"$out" ||
		fail "apply after the stop printed: $out" || return 1
	! grep -q "^$id " "$APPLIED" && [ ! -e "/sys/fs/bpf/mthpctl/cg-$id" ] ||
		fail "left of cgroup $id: state file $(cat "$APPLIED"), pins $(ls /sys/fs/bpf/mthpctl)" || return 1
}

t_refused() {
	local before out rc cg
	before=$(snapshot)
	cp "$CONF" "$logs/good.conf"
	# the unit back, with a bad key in the section after it
	printf '%s\n[mthp-vm-p.service]\npolicy = never\nmax_size = 2M\n' "$conf_a" >"$CONF"
	out=$("$M" apply 2>&1)
	rc=$?
	cp "$logs/good.conf" "$CONF"
	[ "$rc" = 8 ] && grep -q "^mthpctl: error: $CONF:7: unknown key 'max_size' " <<<"$out" ||
		fail "bad key: exit $rc: $out" || return 1
	cg=$(cgroup_of "$A")
	printf '[%s]\npolicy = never\n[%s]\npolicy = never\n' "$cg" "$A" >"$logs/both.conf"
	out=$("$M" apply --config "$logs/both.conf" 2>&1)
	rc=$?
	[ "$rc" = 8 ] && [ "$out" = "mthpctl: error: $logs/both.conf:3: [$A] is the cgroup $cg, as [$cg] at $logs/both.conf:1 is (one section per cgroup; nothing changed)" ] ||
		fail "a unit and its cgroup's path: exit $rc: $out" || return 1
	same_as "$before" || fail "a refused configuration changed something" || return 1
}

# --------------------------------------------------------------------------

all_tests=(running again restart prctl warning remove stop refused)
[ $# -gt 0 ] && all_tests=("$@")
setup
echo "# mthpctl apply against $(systemctl --version | head -n1) on $(uname -r), logs in $logs"
for t in "${all_tests[@]}"; do
	run_test "$t"
done
systemctl stop "$A" "$P" 2>/dev/null
"$M" detach --all >/dev/null 2>&1
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
