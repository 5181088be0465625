# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# A test of tests/vm/run.sh, sourced by it (its helpers and variables).

# --- 5: refusals: exit code, one line, nothing left behind -----------------

t_refusals() {
	local c att tmpd fakebtf out
	refusal_ok=() refusal_fail=()
	c=$(mkcg ref) && att=$(mkcg ref-attached) || return 1
	"$M" attach --cgroup "$att" >/dev/null || fail "attach" || return 1

	refuse not-root-attach 2 setpriv --reuid=65534 --regid=65534 --clear-groups "$M" attach --cgroup "$c"
	refuse not-root-detach 2 setpriv --reuid=65534 --regid=65534 --clear-groups "$M" detach --cgroup "$att"
	refuse not-root-detach-all 2 setpriv --reuid=65534 --regid=65534 --clear-groups "$M" detach --all
	refuse no-cap-bpf 2 setpriv --inh-caps=-bpf --bounding-set=-bpf "$M" attach --cgroup "$c"
	refuse missing 4 "$M" attach --cgroup "$CG/does-not-exist"
	refuse not-a-directory 4 "$M" attach --cgroup "$c/cgroup.procs"
	refuse not-cgroup2 4 "$M" attach --cgroup /proc
	refuse empty-path 4 "$M" attach --cgroup ""
	tmpd=$(mktemp -d /tmp/mthp-cg1.XXXXXX)
	if mount -t cgroup -o none,name=mthpt1 cgroup "$tmpd" 2>/dev/null; then
		mkdir -p "$tmpd/x"
		refuse cgroup-v1 4 "$M" attach --cgroup "$tmpd/x"
		refuse cgroup-v1-root 4 "$M" attach --cgroup "$tmpd"
		rmdir "$tmpd/x"
		umount "$tmpd"
	else
		refusal_fail+=("cgroup-v1: cannot mount a named cgroup v1 hierarchy")
	fi
	rmdir "$tmpd"
	refuse bpffs-not-mounted 6 unshare -m sh -c \
		'while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done; exec "$0" attach --cgroup "$1"' "$M" "$c"
	refuse bpffs-not-mounted-detach 6 unshare -m sh -c \
		'while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done; exec "$0" detach --all' "$M"
	refuse already-attached 5 "$M" attach --cgroup "$att"
	refuse already-attached-other-policy 5 "$M" attach --cgroup "$att" --policy never
	refuse detach-not-attached 5 "$M" detach --cgroup "$c"
	# The kernel's BTF as seen through a private mount namespace, with the
	# type renamed: what mthpctl sees on a kernel without the series.
	# --private: an attach that links to a loaded object of the pins (on
	# a kernel with the series, then) reads no BTF.
	fakebtf=$(mktemp /tmp/mthp-btf.XXXXXX)
	if python3 -c 'import sys; d=open("/sys/kernel/btf/vmlinux","rb").read(); open(sys.argv[1],"wb").write(d.replace(b"bpf_mthp_ops", b"bpf_mthp_opX"))' "$fakebtf" 2>/dev/null; then
		refuse kernel-lacks-bpf_mthp_ops 3 unshare -m sh -c \
			'mount --bind "$2" /sys/kernel/btf/vmlinux || exit 99; exec "$0" attach --cgroup "$1" --private' "$M" "$c" "$fakebtf"
		out=$(unshare -m sh -c 'mount --bind "$1" /sys/kernel/btf/vmlinux && exec "$0" status' "$M" "$fakebtf")
		grep -q '^  bpf_mthp_ops:       no (apply kernel/)$' <<<"$out" ||
			refusal_fail+=("status without bpf_mthp_ops: $(head -n3 <<<"$out")")
	else
		refusal_fail+=("kernel-lacks-bpf_mthp_ops: cannot copy the BTF")
	fi
	rm -f "$fakebtf"
	# bad option values
	refuse window-too-short 1 "$M" attach --cgroup "$c" --window 5ms
	refuse window-too-long 1 "$M" attach --cgroup "$c" --window 2min
	refuse window-no-unit 1 "$M" attach --cgroup "$c" --window 1000
	refuse threshold-zero 1 "$M" attach --cgroup "$c" --threshold 0ms
	refuse threshold-over-window 1 "$M" attach --cgroup "$c" --threshold 2s
	refuse threshold-garbage 1 "$M" attach --cgroup "$c" --threshold fast
	refuse min-usage-bad-unit 1 "$M" attach --cgroup "$c" --min-usage 16X
	refuse min-usage-negative 1 "$M" attach --cgroup "$c" --min-usage -1M
	refuse max-size-not-pow2 1 "$M" attach --cgroup "$c" --policy fixed --max-size 48K
	refuse max-size-below-page 1 "$M" attach --cgroup "$c" --policy fixed --max-size 2K
	refuse max-size-zero 1 "$M" attach --cgroup "$c" --policy fixed --max-size 0
	refuse max-size-above-pmd 1 "$M" attach --cgroup "$c" --policy fixed --max-size 8G
	refuse threshold-fraction-of-ns 1 "$M" attach --cgroup "$c" --threshold 1.5ns
	refuse policy-unknown 1 "$M" attach --cgroup "$c" --policy bogus
	refuse fixed-without-max-size 1 "$M" attach --cgroup "$c" --policy fixed
	refuse never-with-max-size 1 "$M" attach --cgroup "$c" --policy never --max-size 64K
	refuse fixed-with-window 1 "$M" attach --cgroup "$c" --policy fixed --max-size 64K --window 1s
	refuse no-cgroup 1 "$M" attach
	refuse unknown-option 1 "$M" attach --cgroup "$c" --bogus
	refuse extra-argument 1 "$M" attach --cgroup "$c" extra
	refuse unknown-command 1 "$M" frobnicate
	refuse no-command 1 "$M"
	refuse detach-nothing 1 "$M" detach
	refuse detach-both 1 "$M" detach --all --cgroup "$c"
	refuse status-missing-cgroup 4 "$M" status --cgroup "$CG/does-not-exist"
	# an empty path is named as such, not printed as an empty name
	out=$("$M" attach --cgroup '' 2>&1)
	[ "$out" = "mthpctl: error: the cgroup path is empty (give a cgroup2 directory, e.g. /sys/fs/cgroup/NAME)" ] ||
		refusal_fail+=("empty path message: $out")
	# decimal durations and sizes are accepted (and attach for real)
	if "$M" attach --cgroup "$c" --window 1.5s --threshold 0.25s --min-usage 1.5M >/dev/null; then
		out=$("$M" -j status --cgroup "$c")
		jq -e '.policies[0].params | .window_ns == 1500000000 and .threshold_ns == 250000000 and
		       .min_usage_bytes == 1572864' <<<"$out" >/dev/null ||
			refusal_fail+=("decimal options: $(jq -c '.policies[0].params' <<<"$out")")
		"$M" detach --cgroup "$c" >/dev/null || refusal_fail+=("detach after the decimal options")
	else
		refusal_fail+=("attach --window 1.5s --threshold 0.25s --min-usage 1.5M refused")
	fi
	# JSON errors
	out=$("$M" -j attach --cgroup "$CG/does-not-exist")
	jq -e '.exit_code == 4 and (.error | test("does not exist"))' <<<"$out" >/dev/null ||
		refusal_fail+=("json error: $out")
	# the attached policy survived all of it
	[ "$(link_of_cgroup "$(cg_id "$att")" | wc -l)" = 1 ] || refusal_fail+=("the attached policy is gone")
	note "${#refusal_ok[@]} refusals checked: ${refusal_ok[*]}"
	[ ${#refusal_fail[@]} = 0 ] || fail "$(printf '%s; ' "${refusal_fail[@]}")" || return 1
}
