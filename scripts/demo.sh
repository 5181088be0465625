#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The main job of mthpctl, shown on the patched kernel in a VM: attach the
# auto policy to one cgroup, fault memory in it and in a sibling without a
# policy, push the policy cgroup into memory pressure, let it go, and print
# `mthpctl status` and the folio sizes actually allocated at each step.
#
#   scripts/demo.sh            build what is missing (kernel cached), boot the
#                              VM (2 vCPUs, 2G) and run the demo in it
#   scripts/demo.sh --guest    the demo itself, as root on a patched kernel
#                              (changes THP settings; meant for the VM)
#
# The decision timeline goes to $MTHP_RESULTS (.output/demo/ from the VM),
# for scripts/bench-plots.py:
#   timeline.jsonl  from attach to detach, one `mthpctl -j status --cgroup`
#                   of the policy cgroup every 0.25 s plus the call's own
#                   time (samples 0.6-3.0 s apart under TCG in two runs), one
#                   JSON object a line: {"t_ms": epoch ms before the call,
#                   "phase", "phase_t_ms": the step it ran in and when that
#                   began, "memory_high": the cgroup's file as read,
#                   "status": the call's whole output}
#   probes.jsonl    each 8 MiB probe of the demo: {"t_ms" (when it ended),
#                   "cgroup", "large_pct", "max_order"}
#
# Exit status: 0 when every step showed what it should, 1 otherwise.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --guest ]; then
	set -e
	cd "$top"
	make -s mthpctl vm-tests
	kdir=$(scripts/kernel-build.sh | tail -n1)
	exec scripts/vm-run.sh -k "$kdir" -o "$top/.output/demo" -- "$top/scripts/demo.sh" --guest
fi

M=$top/mthpctl
H=$top/.output/tests/vm
CG=/sys/fs/cgroup
THP=/sys/kernel/mm/transparent_hugepage
app=$CG/demo-app	# gets the policy
batch=$CG/demo-batch	# sibling, no policy
ok=1

step() { printf '\n== %s\n' "$*"; }
now_ms() { date +%s%3N; }
run() { printf '$ %s\n' "$*"; "$@"; }
bad() { echo "!! $*"; ok=0; }

# One probe of 8 MiB in CGROUP; shows the faulter's line, records it in
# probes.jsonl and prints the share of pages that sit in large folios.
probe() {
	local line pct order
	line=$("$H/faulter" -c "$1" -s 8 -n 1) || { echo "faulter failed" >&2; echo 0; return; }
	echo "   $(basename "$1"): ${line#* * * }" >&2
	pct=$(sed -n 's/.* large_pct=\([0-9]*\).*/\1/p' <<<"$line")
	order=$(sed -n 's/.* max_order=\([0-9]*\).*/\1/p' <<<"$line")
	printf '{"t_ms":%s,"cgroup":"%s","large_pct":%s,"max_order":%s}\n' \
		"$(now_ms)" "$1" "${pct:-null}" "${order:-null}" >>"$probes"
	echo "$pct"
}

# The timeline: which step the demo is in (read by the sampler), and the
# sampler itself, in the background from attach to detach.
# NAME [T_MS]: the step NAME began now, or at T_MS (taken just before the
# write that began it: a fork under TCG may take most of a second)
phase() { echo "$1 ${2:-$(now_ms)}" >"$phase_file.tmp" && mv "$phase_file.tmp" "$phase_file"; }
# One process a sample (no jq, no date: under TCG each exec costs ~0.1-0.3 s).
sample_status() {
	local cg=$1 t name since high st
	while :; do
		t=${EPOCHREALTIME//[.,]/}
		read -r name since <"$phase_file"
		read -r high <"$cg/memory.high"
		st=$("$M" -j status --cgroup "$cg" 2>/dev/null)
		printf '{"t_ms":%s,"phase":"%s","phase_t_ms":%s,"memory_high":"%s","status":%s}\n' \
			"${t:0:-3}" "$name" "$since" "$high" "${st:-null}" >>"$timeline"
		sleep 0.25
	done
}

# Probe CGROUP every half second until its share of large folios is
# (ge|le) LIMIT, for at most 10 s; says how long that took after T0.
probe_until() {
	local cg=$1 op=$2 limit=$3 t0=$4 pct i
	for i in $(seq 20); do
		pct=$(probe "$cg")
		if [ "$pct" "-$op" "$limit" ]; then
			echo "   -> $((pct))% large, $(( $(now_ms) - t0 )) ms after the change"
			return 0
		fi
		sleep 0.5
	done
	return 1
}

cleanup() {
	[ -n "${smp:-}" ] && kill "$smp" 2>/dev/null
	"$M" detach --cgroup "$app" >/dev/null 2>&1
	[ -n "${thr:-}" ] && kill -9 "$thr" 2>/dev/null
	[ -n "${bal:-}" ] && kill -9 "$bal" 2>/dev/null
	wait 2>/dev/null
	rmdir "$app" "$batch" 2>/dev/null
	rm -f "${phase_file:-}"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { echo "demo: run as root in the VM: scripts/demo.sh" >&2; exit 2; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
echo +memory >"$CG/cgroup.subtree_control"
for f in "$THP"/enabled "$THP"/hugepages-*/enabled; do
	[ -f "$f" ] && echo always >"$f"
done
if ! grep -q zram0 /proc/swaps; then
	echo 1G >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0
fi
mkdir -p "$app" "$batch"
timeline=$MTHP_RESULTS/timeline.jsonl probes=$MTHP_RESULTS/probes.jsonl
phase_file=$MTHP_RESULTS/.demo-phase
: >"$timeline"; : >"$probes"

step "every mTHP size set to 'always'; attach the auto policy to $app"
run "$M" attach --cgroup "$app" || bad "attach failed"
phase attach
sample_status "$app" &
smp=$!
# The application: 24 MiB it keeps (above auto's 16 MiB minimum usage).
"$H/faulter" -c "$app" -b 24 -s 2 -n 1 -H >/dev/null 2>&1 &
bal=$!
sleep 1

step "no pressure: both cgroups get large folios (24 MiB in use: not small)"
phase no-pressure
probe_until "$app" ge 50 "$(now_ms)" || bad "the policy cgroup did not get large folios"
[ "$(probe "$batch")" -ge 50 ] || bad "the sibling did not get large folios"
run "$M" status --cgroup "$app"

step "pressure: a 64 MiB thrasher in $app, then memory.high=40M"
phase thrasher
"$H/thrasher" -c "$app" -s 64 >"$MTHP_RESULTS/thrasher.out" 2>&1 &
thr=$!
for i in $(seq 50); do grep -q ready "$MTHP_RESULTS/thrasher.out" && break; sleep 0.2; done
t0=$(now_ms)
echo 40M >"$app/memory.high"
phase pressure "$t0"
probe_until "$app" le 5 "$t0" || bad "the policy cgroup still got large folios under pressure"
[ "$(probe "$batch")" -ge 50 ] || bad "the sibling lost its large folios"
run "$M" status --cgroup "$app"

step "pressure over: memory.high=max, thrasher stopped"
t0=$(now_ms)
echo max >"$app/memory.high"
phase pressure-over "$t0"
kill -9 "$thr"; wait "$thr" 2>/dev/null; thr=
probe_until "$app" ge 50 "$t0" || bad "large folios did not come back"
echo "\$ $M -j status --cgroup $app | jq '.policies[0] | ...'"
"$M" -j status --cgroup "$app" | jq '.policies[0] | {restriction, allowed_sizes_kb, sample: (.sample | {stall_per_window_ns, usage_bytes, usage_peak_bytes, pressure, low_usage})}'

# one more second of samples after the sizes came back
sleep 1
kill "$smp"; wait "$smp" 2>/dev/null; smp=
[ "$(grep -c . "$timeline")" -ge 10 ] || bad "the timeline has fewer than 10 samples ($timeline)"

step "detach: the cgroup follows the global settings again"
run "$M" detach --cgroup "$app" || bad "detach failed"

if [ "$ok" = 1 ]; then
	printf '\ndemo: every step behaved as expected\n'
	exit 0
fi
printf '\ndemo: some steps did not behave as expected (see !! above)\n'
exit 1
