# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 8: version and diagnostics --------------------------------------------

# The kernel's BTF with one name changed, bind-mounted over
# /sys/kernel/btf/vmlinux in a private mount namespace: what mthpctl and
# libbpf see there. FROM and TO have the same length.
fake_btf() {	# FROM TO FILE
	python3 -c 'import sys
d = open("/sys/kernel/btf/vmlinux", "rb").read()
f, t = ("\0%s\0" % sys.argv[1]).encode(), ("\0%s\0" % sys.argv[2]).encode()
assert len(f) == len(t) and d.count(f) == 1
open(sys.argv[3], "wb").write(d.replace(f, t))' "$@"
}

# `version`, `-V` and their JSON on the patched kernel (everything there,
# also for a user without privilege), the verdict where something is
# missing, libbpf's warnings (a refused program's verifier log) without -v
# and its debug output only with -v, and the completion of attached
# cgroups from `mthpctl -j status`.
t_version() {
	local j out err rc re c1 c2 tmpf before
	j=$("$M" -j version) || fail "version -j: exit $?" || return 1
	echo "$j" >"$logs/s8-version.json"
	jq -e --arg rel "$(uname -r)" '
	    (.version | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")) and
	    (.libbpf_version | test("^1\\.[0-9]+$")) and .kernel_release == $rel and
	    (.kernel | .btf and .bpf_mthp_ops and .psi_kfunc and .memcg_kfuncs and .bpf_wq and .collapse_kfunc and .psi and
	               .memory_controller and .bpffs and .cgroup2_mount == "/sys/fs/cgroup") and
	    .ready == true and .missing == []' <<<"$j" >/dev/null ||
		fail "version -j: $j" || return 1
	# -V anywhere, -j before or after it, prints the same; a command named
	# with it does not run
	for out in "$("$M" -V -j)" "$("$M" -j --version)" "$("$M" -j status -V)" \
		   "$("$M" -V -j attach --cgroup /nonexistent)"; do
		[ "$(jq -S 'del(.kernel.bpf_stats_enabled)' <<<"$out")" = "$(jq -S 'del(.kernel.bpf_stats_enabled)' <<<"$j")" ] ||
			fail "-V differs from version: $out" || return 1
	done
	"$M" -p version | jq -e '.ready' >/dev/null || fail "version -p is not JSON" || return 1
	out=$("$M" version) || fail "version: exit $?" || return 1
	echo "$out" >"$logs/s8-version.txt"
	for re in "^mthpctl v$(jq -r .version <<<"$j")\$" "^using libbpf v$(jq -r .libbpf_version <<<"$j")\$" \
		  "^kernel $(uname -r):\$" '^  BTF:                yes \(/sys/kernel/btf/vmlinux\)$' \
		  '^  bpf_mthp_ops:       yes$' '^  kfuncs:             psi yes, memcg yes, bpf_wq yes, collapse yes$' \
		  '^  PSI:                on$' '^  cgroup2:            /sys/fs/cgroup \(memory controller: yes\)$' \
		  '^  bpffs:              mounted$' '^ready:                yes'; do
		grep -qE "$re" <<<"$out" || fail "version text has no line /$re/: $out" || return 1
	done
	! grep -q missing <<<"$out" || fail "version text names something missing: $out" || return 1
	# no privilege needed
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$M" -j version) ||
		fail "version as nobody: exit $?" || return 1
	jq -e '.ready and .kernel.bpf_mthp_ops' <<<"$out" >/dev/null || fail "version as nobody: $out" || return 1
	# the verdict names what is missing, once, and still exits 0
	out=$(unshare -m sh -c 'while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done
		exec "$0" -j version' "$M") || fail "version without bpffs: exit $?" || return 1
	jq -e '.ready == false and (.missing | map(.what)) == ["bpffs"] and
	       (.missing[0].fix | test("mount -t bpf"))' <<<"$out" >/dev/null ||
		fail "version without bpffs: $out" || return 1
	tmpf=$(mktemp /tmp/mthp-btf.XXXXXX)
	fake_btf bpf_mthp_ops bpf_mthp_opX "$tmpf" || fail "cannot copy the BTF" || return 1
	out=$(unshare -m sh -c 'mount --bind "$1" /sys/kernel/btf/vmlinux && exec "$0" -j version' "$M" "$tmpf")
	jq -e '.ready == false and (.missing | map(.what)) == ["bpf_mthp_ops"] and .kernel.btf and
	       (.kernel.bpf_mthp_ops | not)' <<<"$out" >/dev/null ||
		fail "version without bpf_mthp_ops: $out" || return 1

	# libbpf: nothing on stderr when all goes well, its debug output with -v
	c1=$(mkcg v1) && c2=$(mkcg "v 2") || return 1
	err=$("$M" attach --cgroup "$c1" 2>&1 >/dev/null) || fail "attach $c1: $err" || return 1
	[ -z "$err" ] || fail "attach printed on stderr without -v: $err" || return 1
	err=$("$M" -v attach --cgroup "$c2" --policy never 2>&1 >/dev/null) || fail "attach -v $c2: $err" || return 1
	grep -q '^libbpf: ' <<<"$err" || fail "attach -v printed no libbpf debug output: $err" || return 1
	err=$("$M" status 2>&1 >/dev/null) && [ -z "$err" ] || fail "status printed on stderr: $err" || return 1
	# the completion of --cgroup offers the attached cgroups (a space in
	# a name kept), from the real `mthpctl -j status`
	out=$("$top/tests/complete.sh" "$M" detach --cgroup "$CG/" | paste -sd '|')
	[ "$out" = "$c2|$c1" ] || fail "completion of detach --cgroup: '$out', want '$c2|$c1'" || return 1
	out=$("$top/tests/complete.sh" "$M" status -c "$CG/v1" | paste -sd '|')
	[ "$out" = "$c1" ] || fail "completion of status -c $CG/v1: '$out'" || return 1
	# (cleanup's cg_kill_all splits paths at spaces: remove it here)
	"$M" detach --cgroup "$c2" >/dev/null && rmdir "$c2" || fail "detach and remove $c2" || return 1

	# A program the kernel refuses: libbpf's warnings with the verifier's
	# log, without -v, above the one error line that points at them; exit
	# 7, JSON error on stdout, nothing left behind. (rss_anon renamed in
	# the BTF libbpf reads: its CO-RE relocation of ctx->rss_anon finds no
	# target, libbpf poisons the instruction, the verifier refuses it.)
	"$M" detach --cgroup "$c1" >/dev/null || fail "detach $c1" || return 1
	fake_btf rss_anon rss_anoX "$tmpf" || fail "cannot copy the BTF" || return 1
	before=$(snapshot)
	out=$(unshare -m sh -c 'mount --bind "$2" /sys/kernel/btf/vmlinux && exec "$0" -j attach --cgroup "$1"' \
		"$M" "$c1" "$tmpf" 2>"$logs/s8-refused.err")
	rc=$?
	err=$(cat "$logs/s8-refused.err")
	rm -f "$tmpf"
	[ "$rc" = 7 ] || fail "refused program: exit $rc, want 7 ($out; $err)" || return 1
	jq -e '.exit_code == 7 and (.error | test("loading the BPF policy failed: .*(libbpf.s warnings, if any, are above|libbpf printed the verifier.s log above)"))' \
		<<<"$out" >/dev/null || fail "refused program, JSON: $out" || return 1
	for re in "^libbpf: prog 'choose_orders': BPF program load failed" \
		  "^libbpf: prog 'choose_orders': -- BEGIN PROG LOAD LOG --" '^-- END PROG LOAD LOG --' \
		  'bpf_mthp_ctx.rss_anon'; do
		grep -qE "$re" <<<"$err" || fail "refused program: stderr has no /$re/ (see $logs/s8-refused.err)" || return 1
	done
	same_as "$before" || fail "refused program left something behind" || return 1
	note "version: libbpf $(jq -r .libbpf_version <<<"$j"), ready; verdicts without bpffs and bpf_mthp_ops; refused program: exit 7 with the verifier log ($(wc -l <"$logs/s8-refused.err") lines on stderr)"
}
