# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- processes with THP disabled by prctl: counted and warned of --------------

# A process with PR_SET_THP_DISABLE (redis-server as shipped, "disable-thp
# yes") gets no large folios whatever a policy allows. With one such process
# and one without in a cgroup (one in a child cgroup): attach and apply warn
# (text on stderr, JSON's "warning"), status counts 1 of 2 processes in text,
# JSON and metrics; a policy that grants nothing (never) is not warned of.
t_thp_off() {
	local g out err conf prom
	g=$(mkcg thp-off) && mkdir "$g/child" || return 1
	"$H/faulter" -c "$g" -s 2 -P -H >"$logs/thp-off-p.out" 2>&1 &
	"$H/faulter" -c "$g/child" -s 2 -H >"$logs/thp-off-n.out" 2>&1 &
	wait_line "$logs/thp-off-p.out" '^probe=' 30 && wait_line "$logs/thp-off-n.out" '^probe=' 30 ||
		fail "the faulters did not start" || return 1

	out=$("$M" attach --cgroup "$g" 2>"$logs/thp-off-attach.err") || fail "attach: $out" || return 1
	err=$(cat "$logs/thp-off-attach.err")
	[[ $err == "mthpctl: warning: 1 of the 2 processes in $g (faulter, pid "*") have THP disabled by prctl(PR_SET_THP_DISABLE)"*"disable-thp no"* ]] ||
		fail "attach did not warn of the process with THP disabled: '$err'" || return 1
	out=$("$M" -j attach --cgroup "$g" --replace 2>&1) &&
		jq -e '.thp_disabled_processes == 1 and (.warning | test("1 of the 2 processes"))' <<<"$out" >/dev/null ||
		fail "attach -j: $out" || return 1

	out=$("$M" status --cgroup "$g") || fail "status: $out" || return 1
	grep -q '^    THP disabled:  1 of 2 processes, by prctl (faulter, pid [0-9]*): 4 KiB pages' <<<"$out" ||
		fail "status text: no line for the process with THP disabled: $out" || return 1
	out=$("$M" -j status --cgroup "$g") &&
		jq -e '.policies[0] | .processes == 2 and .thp_disabled_processes == 1' <<<"$out" >/dev/null ||
		fail "status -j: $(jq -c '.policies[0] | {processes, thp_disabled_processes}' <<<"$out")" || return 1
	prom=$("$M" status --format=prometheus | grep -F "\"$g\"")
	grep -q '^mthpctl_thp_disabled_processes{.*} 1$' <<<"$prom" &&
		grep -q '^mthpctl_processes{.*} 2$' <<<"$prom" ||
		fail "metrics: $prom" || return 1

	# apply warns too; a policy that grants nothing is no conflict
	"$M" detach --cgroup "$g" >/dev/null || fail "detach" || return 1
	conf=$logs/thp-off.conf
	printf '[%s]\npolicy = auto\n' "$g" >"$conf"
	out=$("$M" apply --config "$conf" --dry-run 2>&1) &&
		grep -q "^mthpctl: warning: $conf:1: 1 of the 2 processes in $g (faulter" <<<"$out" ||
		fail "apply --dry-run did not warn: $out" || return 1
	printf '[%s]\npolicy = never\n' "$g" >"$conf"
	out=$("$M" apply --config "$conf" --dry-run 2>&1) && ! grep -q 'warning' <<<"$out" ||
		fail "apply warned for policy = never: $out" || return 1
	out=$("$M" attach --cgroup "$g" --policy never 2>&1) && ! grep -q 'warning' <<<"$out" ||
		fail "attach warned for --policy never: $out" || return 1
	note "$(grep -o 'THP disabled:.*' <<<"$("$M" status --cgroup "$g")")"
}
