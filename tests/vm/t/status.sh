# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 4: status, text and JSON ---------------------------------------------

t_status() {
	local sa sf sn j out ida idf idn la lf ln
	sa=$(mkcg sa) && sf=$(mkcg sf) && sn=$(mkcg sn) || return 1
	"$M" attach --cgroup "$sa" --threshold 50ms --window 500ms --min-usage 8M >/dev/null &&
		"$M" attach --cgroup "$sf" --policy fixed --max-size 64K >/dev/null &&
		"$M" attach --cgroup "$sn" --policy never >/dev/null || fail "attach" || return 1
	ida=$(cg_id "$sa") idf=$(cg_id "$sf") idn=$(cg_id "$sn")
	la=$(link_of_cgroup "$ida") lf=$(link_of_cgroup "$idf") ln=$(link_of_cgroup "$idn")
	"$H/faulter" -c "$sa" -b 12 -s 4 -n 12 -i 100 >"$logs/s4-a.out" 2>&1 &
	"$H/faulter" -c "$sf" -s 4 >"$logs/s4-f.out" 2>&1 &
	"$H/faulter" -c "$sn" -s 4 >"$logs/s4-n.out" 2>&1 &
	wait
	"$M" -p status >"$logs/s4-status.json" || fail "status -p failed" || return 1
	python3 -m json.tool "$logs/s4-status.json" >/dev/null 2>&1 ||
		jq . "$logs/s4-status.json" >/dev/null || fail "status -p is not JSON" || return 1
	j=$(status_json) || fail "status -j failed" || return 1
	jq -e '.kernel | .btf and .bpf_mthp_ops and .psi_kfunc and .memcg_kfuncs and .bpf_wq and .collapse_kfunc and
	       .psi and .memory_controller and .bpffs and .cgroup2_mount == "/sys/fs/cgroup"' \
		<<<"$j" >/dev/null || fail "kernel: $(jq -c .kernel <<<"$j")" || return 1
	jq -e '.thp.enabled == "always" and
	       (.thp.sizes | map(select(.size_kb == 2048 and .enabled == "always" and
	                              (.stats.anon_fault_alloc | type) == "number")) | length) == 1 and
	       (.thp.sizes | map(select(.size_kb == 64 and .enabled == "always")) | length) == 1' \
		<<<"$j" >/dev/null || fail "thp: $(jq -c '.thp.sizes[0]' <<<"$j")" || return 1
	jq -e --arg a "$sa" --arg f "$sf" --arg n "$sn" --argjson la "$la" --argjson lf "$lf" \
	      --argjson ln "$ln" --argjson ida "$ida" --argjson idf "$idf" --argjson idn "$idn" '
	    (.policies | length) == 3 and
	    (.policies[] | select(.cgroup == $a) |
	       .cgroup_id == $ida and .link_id == $la and .attached and
	       .pin == "/sys/fs/bpf/mthpctl/cg-\($ida)" and .policy == "auto" and
	       .params == {window_ns: 500000000, threshold_ns: 50000000, min_usage_bytes: 8388608,
	                   max_size_bytes: null} and
	       .restriction == "none" and (.allowed_sizes_kb | index(2048) != null) and
	       .sample.samples > 0 and .sample.stall_valid and .sample.usage_valid and
	       (.sample.stall_per_window_ns | type) == "number" and
	       .sample.usage_bytes >= 8388608 and .totals.calls.pagefault > 0 and
	       (.totals.fallbacks | has("pressure") and has("low-usage") and has("no-sample") and has("cap") and has("sparse")) and
	       (.live.anon_shmem_bytes | type) == "number" and
	       (.live.memory_full_avg10 | type) == "number" and
	       .totals.samples > 0 and .totals.psi_errors == 0 and .totals.memcg_errors == 0 and
	       .hook.effective_map_ids == [.hook.struct_ops_map_id]) and
	    (.policies[] | select(.cgroup == $f) |
	       .cgroup_id == $idf and .link_id == $lf and .policy == "fixed" and
	       .params == {max_size_bytes: 65536} and .allowed_sizes_kb[-1] == 64 and
	       .allowed_sizes_kb[0] == 4 and .totals.fallbacks.cap.pagefault > 0) and
	    (.policies[] | select(.cgroup == $n) |
	       .cgroup_id == $idn and .link_id == $ln and .policy == "never" and
	       .params == {} and .allowed_sizes_kb == [4] and .totals.fallbacks.cap.pagefault > 0)' \
		<<<"$j" >/dev/null || fail "policies: $(jq -c .policies <<<"$j")" || return 1
	[ -e "/sys/fs/bpf/mthpctl/cg-$ida/link" ] && [ -e "/sys/fs/bpf/mthpctl/cg-$ida/totals" ] ||
		fail "pins of $sa missing" || return 1
	# the helpers' folios agree with what status claims
	[ -n "$(probes "$logs/s4-f.out" 0 'v["max_order"] == 4')" ] || fail "fixed 64K: $(tail -n1 "$logs/s4-f.out")" || return 1
	[ -n "$(probes "$logs/s4-n.out" 0 'v["max_order"] == 0')" ] || fail "never: $(tail -n1 "$logs/s4-n.out")" || return 1
	# --cgroup narrows to one policy, without reading the kernel's BTF:
	# its features are null, the policy's program and the policies in
	# effect come from its "prog" pin
	out=$(MTHPCTL_DEBUG_TIMING=1 "$M" -j status --cgroup "$sf" 2>"$logs/s4-one.timing")
	! grep -q 'timing: btf ' "$logs/s4-one.timing" ||
		fail "status --cgroup read the kernel's BTF: $(cat "$logs/s4-one.timing")" || return 1
	jq -e --arg f "$sf" '(.policies | length) == 1 and .policies[0].cgroup == $f and
	       ([.kernel | .btf, .bpf_mthp_ops, .psi_kfunc, .memcg_kfuncs, .bpf_wq, .collapse_kfunc] == [null, null, null, null, null, null]) and
	       .kernel.bpffs and (.policies[0].hook.prog_id | type) == "number" and
	       .policies[0].hook.effective_map_ids == [.policies[0].hook.struct_ops_map_id]' <<<"$out" >/dev/null ||
		fail "status --cgroup: $out" || return 1
	[ -e "/sys/fs/bpf/mthpctl/cg-$idf/prog" ] || fail "no prog pin for $sf" || return 1
	"$M" status --cgroup "$sf" >"$logs/s4-status-one.txt"
	grep -q '^  bpf_mthp_ops:       not probed for one cgroup' "$logs/s4-status-one.txt" &&
		! grep -q '^  kfuncs:' "$logs/s4-status-one.txt" ||
		fail "status --cgroup text: $(cat "$logs/s4-status-one.txt")" || return 1
	# pins of an older mthpctl have no "prog": the program and the type
	# are then found through the kernel's BTF
	local prog_id
	prog_id=$(jq '.policies[0].hook.prog_id' <<<"$out")
	rm "/sys/fs/bpf/mthpctl/cg-$idf/prog" || fail "rm prog pin" || return 1
	out=$(MTHPCTL_DEBUG_TIMING=1 "$M" -j status --cgroup "$sf" 2>"$logs/s4-one.timing")
	grep -q 'timing: btf ' "$logs/s4-one.timing" ||
		fail "status --cgroup without a prog pin did not read the BTF: $(cat "$logs/s4-one.timing")" || return 1
	jq -e --argjson p "$prog_id" '.policies[0].hook | .prog_id == $p and .effective_map_ids == [.struct_ops_map_id]' \
		<<<"$out" >/dev/null || fail "status --cgroup without a prog pin: $out" || return 1
	# text
	out=$("$M" status)
	echo "$out" >"$logs/s4-status.txt"
	local re
	for re in '^  bpf_mthp_ops:       yes$' '^  kfuncs:             psi yes, memcg yes, bpf_wq yes, collapse yes$' \
		  '^  PSI:                on$' '^  cgroup2:            /sys/fs/cgroup \(memory controller: yes\)$' \
		  '^  bpffs:              mounted$' '^  2M +always +[0-9]+ +[0-9]+$' \
		  "^  $sa \\(cgroup id $ida\\)\$" \
		  '^    policy:        auto \(window 500ms, threshold 50ms, min-usage 8M\)$' \
		  "^    link:          id $la, attached\$" "^    pin:           /sys/fs/bpf/mthpctl/cg-$ida\$" \
		  '^    allows now:    4K .*2M$' '^    memory stall:  [0-9.]+[a-z]+ per 500ms \(policy\), full avg10 [0-9.]+% \(memory.pressure\)$' \
		  '^    anon\+shmem:    [0-9]+[KMG]? \(policy\), [0-9]+[KMG]? \(memory.stat\)$' \
		  '^    policy:        fixed \(max-size 64K\)$' '^    allows now:    4K( 8K)? 16K 32K 64K \(cap\)$' \
		  '^    policy:        never$' '^    allows now:    4K only \(cap\)$' \
		  '^    fell back:.* cap/pagefault [1-9]'; do
		grep -qE "$re" <<<"$out" || fail "status text has no line /$re/ (see $logs/s4-status.txt)" || return 1
	done
	# metrics: promtool accepts the exposition; the values match the policies
	command -v promtool >/dev/null || fail "promtool missing (scripts/install-deps.sh)" || return 1
	"$M" status --format=prometheus >"$logs/s4-metrics.prom" || fail "status --format=prometheus" || return 1
	promtool check metrics <"$logs/s4-metrics.prom" >"$logs/s4-promtool.txt" 2>&1 ||
		fail "promtool check metrics: $(cat "$logs/s4-promtool.txt")" || return 1
	# object: the policy object (struct_ops map id), shared by cgroups
	# attached with equal parameters
	local O='object=\"[0-9]+\"'
	for re in "^mthpctl_allowed_max_size_bytes\\{cgroup=\"$sf\",policy=\"fixed\",$O\\} 65536\$" \
		  "^mthpctl_restricted\\{cgroup=\"$sn\",policy=\"never\",$O,reason=\"cap\"\\} 1\$" \
		  "^mthpctl_fallbacks_total\\{cgroup=\"$sn\",policy=\"never\",$O,reason=\"cap\",tva=\"pagefault\"\\} [1-9]" \
		  "^mthpctl_hook_calls_total\\{cgroup=\"$sa\",policy=\"auto\",$O,tva=\"pagefault\"\\} [1-9]" \
		  "^mthpctl_anon_shmem_bytes\\{cgroup=\"$sa\",policy=\"auto\",$O\\} [1-9]" \
		  "^mthpctl_policy_info\\{cgroup=\"$sa\",policy=\"auto\",$O,params=\"auto \\(window 500ms, threshold 50ms, min-usage 8M\\)\",object_hash=\"[0-9a-f]{16}\"\\} 1\$" \
		  "^mthpctl_policies_in_effect\\{cgroup=\"$sa\",policy=\"auto\",$O\\} 1\$"; do
		grep -qE "$re" "$logs/s4-metrics.prom" || fail "metrics have no line /$re/ (see $logs/s4-metrics.prom)" || return 1
	done
	jq -e --arg a "$sa" '.policies[] | select(.cgroup == $a) | .sample_cgroup == $a' <<<"$j" >/dev/null ||
		fail "sample_cgroup of $sa: $(jq -c '.policies[].sample_cgroup' <<<"$j")" || return 1
	# A policy on a parent whose tasks all live in a child (a slice): the
	# state shown is the child's, and says so.
	local sl w
	sl=$(mkcg sl) && w=$(mkcg sl/w) || return 1
	echo +memory >"$sl/cgroup.subtree_control" || fail "memory controller for $w" || return 1
	"$M" attach --cgroup "$sl" >/dev/null || fail "attach $sl" || return 1
	"$H/faulter" -c "$w" -b 24 -s 4 -n 6 -i 100 >"$logs/s4-w.out" 2>&1 || fail "faulter in $w" || return 1
	out=$("$M" -j status --cgroup "$sl")
	jq -e --arg w "$w" '.policies[0] | .sample_cgroup == $w and .sample.samples > 0 and
	       .sample.usage_valid and .cgroups_tracked >= 1 and .cgroups_in_subtree == 2' <<<"$out" >/dev/null ||
		fail "status of a parent with its tasks in a child: $out" || return 1
	out=$("$M" status --cgroup "$sl")
	grep -q "^    state of:      $w (the subtree's largest; none of its own)\$" <<<"$out" ||
		fail "no 'state of: $w' line: $out" || return 1
	# A second policy on the child: the kernel (BPF_PROG_QUERY) reports
	# both in effect there, the child's first, and status says so.
	local js jw
	"$M" attach --cgroup "$w" --policy fixed --max-size 64K >/dev/null || fail "attach $w" || return 1
	js=$("$M" -j status --cgroup "$sl") && jw=$("$M" -j status --cgroup "$w") || fail "status" || return 1
	jq -e --argjson p "$(jq '.policies[0].hook.struct_ops_map_id' <<<"$js")" \
	      '.policies[0].hook | .effective_map_ids == [.struct_ops_map_id, $p]' <<<"$jw" >/dev/null ||
		fail "effective policies of $w: $(jq -c '.policies[0].hook' <<<"$jw"), parent: $(jq -c '.policies[0].hook' <<<"$js")" || return 1
	out=$("$M" status --cgroup "$w")
	grep -q '^    in effect:     2 bpf_mthp_ops policies here and above, all must allow a size$' <<<"$out" ||
		fail "no 'in effect: 2' line for $w" || return 1
	"$M" detach --cgroup "$w" >/dev/null || fail "detach $w" || return 1
	note "policy on $sl, tasks in $w: status shows the child's state ($(jq -r '.policies[0].sample.samples' <<<"$("$M" -j status --cgroup "$sl")") samples)"
}
