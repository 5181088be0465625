#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make bench-scale`: many policies at once. Creates N sibling cgroups under
# /sys/fs/cgroup and attaches the auto policy to each the way a node agent
# would, in one process: `mthpctl apply` with a configuration naming N - S
# of them (timed as a whole), then S more by single `mthpctl attach` calls
# (ATTACH_SAMPLE, default 50; timing each and, with MTHPCTL_DEBUG_TIMING,
# its load step: libbpf and the verifier), times
# `mthpctl status`, `mthpctl -j status`, `status --format=prometheus` and
# `status --cgroup` of one policy,
# measures the kernel memory of a policy, runs one round of the page-fault
# cost with the N attached (`mthpctl bench pagefault`: a policy of its own
# against always), then detaches (DETACH_SAMPLE of them timed one by one,
# the rest with `detach --all`), and runs the page-fault rounds with only
# the benchmark's own policy attached and with the N attached again (one
# apply) in turn, REPEATS of each; then removes the cgroups (also on
# error and on SIGINT/SIGTERM; apply is then given an empty configuration
# so that it forgets what it attached). The N attaches
# have equal parameters, so they share one policy object (mthpctl-attach(8));
# then P more cgroups are attached with --private, each loading an object
# of its own: the kernel memory of a policy with parameters of its own.
#
# Usage: scripts/bench-scale.sh [-n N] [-p P] [-r REPEATS] [-o JSON] [-m MTHPCTL] [-b BASELINE]
#        scripts/bench-scale.sh --vm [-k KDIR] [-n N] [-p P] [-r REPEATS] [-b BASELINE]
#   N        policies/cgroups (default 200)
#   P        cgroups attached --private afterwards (default 20; 0: none)
#   REPEATS  runs of each status timing, page-fault rounds in each state
#            (default 5)
#   JSON     write the figures there as JSON
#   BASELINE another mthpctl build (e.g. of an older commit) timed the same
#            way with the same N policies attached: status, and 5 attaches
#   --vm     boot the patched kernel (scripts/vm-run.sh) and run there;
#            results in .output/bench-scale/<UTC date>/ (scale.txt, scale.json);
#            the VM's time limit grows with N (1 h + 1 s per policy), its
#            memory from N = 2000 on (2 GiB + 200 KiB per cgroup: each
#            memory cgroup costs the kernel its own)
# The targets of a node's worth (N >= 1000, e.g. 10,000: make bench-scale
# SCALE_N=10000): status of all < 2 s, of one < 20 ms, <= 16 KiB of kernel
# memory per cgroup, page-fault cost with N attached within 2% of one;
# below 1000 status of all < 500 ms and 64 KiB per policy.
# Without --vm it must run as root on the patched kernel (the VM).
#
# Every time is the wall time of a whole mthpctl process; `mthpctl --version`
# is timed beside them for the cost of starting one (~100 ms under TCG).
# `status --cgroup` is also timed from a copy of the binary in the guest's
# /tmp: in the VM the binary is read over the 9p share of the host's file
# system, which pages its code in again on every run (41 major faults of
# `status --cgroup`, 2026-11-24), and each step of mthpctl then pays for
# the code it runs first. An installed binary lives in the page cache.
#
# Memory per policy: the memlock of the policy's maps and program (from
# /proc/self/fdinfo of each, the kernel's own accounting) and the growth of
# Slab+VmallocUsed+Percpu in /proc/meminfo over all attaches, divided by N.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
M=$top/mthpctl
n=200 repeats=5 json= vm=0 kdir= base= npriv=20
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	-p) npriv=$2; shift 2 ;;
	-r) repeats=$2; shift 2 ;;
	-o) json=$2; shift 2 ;;
	-m) M=$2; shift 2 ;;
	-k) kdir=$2; shift 2 ;;
	-b) base=$2; shift 2 ;;
	--vm) vm=1; shift ;;
	*) echo "bench-scale: unknown option $1 (see the header of $0)" >&2; exit 1 ;;
	esac
done
[[ $n =~ ^[1-9][0-9]*$ && $repeats =~ ^[1-9][0-9]*$ && $npriv =~ ^[0-9]+$ ]] ||
	{ echo "bench-scale: -n and -r take a positive number, -p a number" >&2; exit 1; }

if [ $vm = 1 ]; then
	out=$top/.output/bench-scale/$(date -u +%Y%m%d-%H%M%S)
	mkdir -p "$out" && ln -sfn "$(basename "$out")" "$top/.output/bench-scale/latest"
	cd "$top" || exit 1
	mem_mb=$(( 2048 + (n >= 2000 ? n / 5 : 0) ))
	scripts/vm-run.sh ${kdir:+-k "$kdir"} -o "$out" -t $(( 3600 + n )) -m "${mem_mb}M" -- \
		scripts/bench-scale.sh -n "$n" -p "$npriv" -r "$repeats" -o "$out/scale.json" -m "$M" ${base:+-b "$base"}
	rc=$?
	cp "$out/guest.out" "$out/scale.txt" 2>/dev/null
	echo "bench-scale: exit $rc; table: $out/scale.txt, JSON: $out/scale.json" >&2
	exit $rc
fi

[ "$(id -u)" = 0 ] || { echo "bench-scale: run as root in the VM (or use --vm)" >&2; exit 2; }
[ -x "$M" ] || { echo "bench-scale: $M not found (make mthpctl)" >&2; exit 2; }
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null

prefix=/sys/fs/cgroup/mthp-scale
cgs=()
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
tmp=$(mktemp -d /tmp/mthp-scale.XXXXXX)
cp "$M" "$tmp/mthpctl"
local_fs=$(stat -f -c %T "$tmp")

# one process for all the cgroups, not one per cgroup: at 10,000 a fork
# each is minutes under TCG
cleanup() {
	trap - EXIT INT TERM
	ls /sys/fs/bpf/mthpctl 2>/dev/null | grep -q '^cg-' && "$M" detach --all >/dev/null 2>&1
	: >"$tmp/empty.conf" && "$M" apply --config "$tmp/empty.conf" >/dev/null 2>&1
	[ ${#cgs[@]} -gt 0 ] && printf '%s\n' "${cgs[@]}" | xargs rmdir 2>/dev/null
	echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "bench-scale: interrupted, cleaning up" >&2; cleanup; exit 130' INT TERM

now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }	# no fork
# min median max of numbers on stdin (one per line), 3 decimals
mmm() { sort -g | awk '{v[NR]=$1} END {if (!NR) {print "null null null"; exit}
	m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
	printf "%.3f %.3f %.3f\n", v[1], m, v[NR]}'; }
meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
kmem() { echo $(( $(meminfo Slab) + $(meminfo VmallocUsed) + $(meminfo Percpu) )); }
# until kmem moves less than 128 KiB in a second (at most 60 s)
kmem_settle() {
	local a b i
	sync; echo 3 >/proc/sys/vm/drop_caches; a=$(kmem)
	for ((i = 0; i < 60; i++)); do
		sleep 1
		sync; echo 3 >/proc/sys/vm/drop_caches; b=$(kmem)
		(( b - a < 128 && a - b < 128 )) && return
		a=$b
	done
}

# memlock bytes of one policy: its program, the maps the program uses and
# the struct_ops map, each opened by id (bpf(2) through ctypes: the
# toolchain's bootstrap bpftool has no map command)
memlock() {	# PROG_ID STRUCT_OPS_MAP_ID
	python3 - "$1" "$2" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_BPF, PROG_BY_ID, MAP_BY_ID, INFO = 321, 13, 14, 15
def bpf(cmd, attr):
    b = ctypes.create_string_buffer(attr, 64)
    r = libc.syscall(NR_BPF, cmd, b, 64)
    if r < 0:
        raise OSError(ctypes.get_errno(), "bpf(%d)" % cmd)
    return r
def memlock(fd):
    for l in open("/proc/self/fdinfo/%d" % fd):
        if l.startswith("memlock:"):
            return int(l.split()[1])
    return 0
prog = bpf(PROG_BY_ID, struct.pack("<I", int(sys.argv[1])))
info = ctypes.create_string_buffer(256)
bpf(INFO, struct.pack("<IIQ", prog, 256, ctypes.addressof(info)))
nr = struct.unpack_from("<I", info, 52)[0]
ids = (ctypes.c_uint32 * max(nr, 1))()
info = ctypes.create_string_buffer(256)
struct.pack_into("<IQ", info, 52, nr, ctypes.addressof(ids))
bpf(INFO, struct.pack("<IIQ", prog, 256, ctypes.addressof(info)))
total = {"prog": memlock(prog)}
for mid in list(ids[:nr]) + [int(sys.argv[2])]:
    fd = bpf(MAP_BY_ID, struct.pack("<I", mid))
    total["map%d" % mid] = memlock(fd)
    os.close(fd)
os.close(prog)
print(sum(total.values()), " ".join("%s=%d" % kv for kv in total.items()))
PY
}

echo "bench-scale: $n cgroups under $prefix-*, kernel $(uname -r), $(nproc) CPUs"
"$M" detach --all >/dev/null 2>&1
sync; echo 3 >/proc/sys/vm/drop_caches
for ((i = 1; i <= n; i++)); do
	printf -v cg '%s-%05d' "$prefix" "$i"
	cgs+=("$cg")
done
printf '%s\n' "${cgs[@]}" | xargs mkdir -p || exit 1
kmem0=$(kmem)
vm0=$(meminfo VmallocUsed) slab0=$(meminfo Slab) pcpu0=$(meminfo Percpu)
slabs() { awk 'NR > 2 {print $1, $3 * $4}' /proc/slabinfo 2>/dev/null; }	# name bytes
slabs >"$tmp/slab0"

# the first N - S by one apply, a node agent's way: one process, the
# policy object loaded once and linked to each cgroup
sample=$(( n < ${ATTACH_SAMPLE:-50} ? n : ${ATTACH_SAMPLE:-50} ))
napply=$(( n - sample ))
apply_s=null apply_ms=null
if [ "$napply" -gt 0 ]; then
	printf '[%s]\n' "${cgs[@]:sample}" >"$tmp/scale.conf"
	t0=$(now_us)
	"$M" apply --config "$tmp/scale.conf" >/dev/null 2>"$tmp/err" ||
		{ echo "bench-scale: apply of $napply cgroups failed: $(tail -n 3 "$tmp/err")" >&2; exit 1; }
	t1=$(now_us)
	apply_s=$(awk -v d=$(( t1 - t0 )) 'BEGIN {printf "%.3f", d / 1e6}')
	apply_ms=$(awk -v d=$(( t1 - t0 )) -v k="$napply" 'BEGIN {printf "%.3f", d / 1000 / k}')
	echo "bench-scale: apply attached $napply cgroups in $apply_s s ($apply_ms ms each)" >&2
fi
# then S by single attach calls, each with the N - S attached
: >"$tmp/attach" ; : >"$tmp/load"
for cg in "${cgs[@]:0:sample}"; do
	t0=$(now_us)
	MTHPCTL_DEBUG_TIMING=1 "$M" attach --cgroup "$cg" >/dev/null 2>"$tmp/err" ||
		{ echo "bench-scale: attach $cg failed: $(grep -v timing: "$tmp/err")" >&2; exit 1; }
	t1=$(now_us)
	# no process substitution here: its children would be reaped late and
	# their task_structs counted as the policies' memory
	load=$(awk '$3 == "load" {print $4}' "$tmp/err")
	awk -v us=$(( t1 - t0 )) -v l="${load:-0}" 'BEGIN {printf "%.3f\n", us / 1000; printf "%.3f\n", us / 1000 - l >"/dev/stderr"}' \
		>>"$tmp/attach" 2>>"$tmp/attach_rest"
	echo "${load:-0}" >>"$tmp/load"
	awk '$2 == "timing:" && $3 != "load" {s += $4} END {printf "%.3f\n", s}' "$tmp/err" >>"$tmp/attach_rest.in"
	cp "$tmp/err" "$tmp/attach_steps"
done
wait
sleep 2
sync; echo 3 >/proc/sys/vm/drop_caches
kmem1=$(kmem)
vm1=$(meminfo VmallocUsed) slab1=$(meminfo Slab) pcpu1=$(meminfo Percpu)
slabs >"$tmp/slab1"
# the slab caches that grew most, bytes per policy
top_slabs=$(awk -v n="$n" 'NR == FNR {b[$1] = $2; next} {d = $2 - b[$1]; if (d > 0) print int(d / n), $1}' \
	"$tmp/slab0" "$tmp/slab1" | sort -rn | head -n 6 | awk '{printf "%s %s, ", $2, $1}')
first=${cgs[0]}

jf=$("$M" -j status --cgroup "$first")
prog=$(jq -r '.policies[0].hook.prog_id // empty' <<<"$jf")
somap=$(jq -r '.policies[0].hook.struct_ops_map_id // empty' <<<"$jf")
ml=$( [ -n "$prog" ] && [ -n "$somap" ] && memlock "$prog" "$somap")
memlock_b=${ml%% *}

"$M" -j status >"$tmp/all.json"
jq -r '.policies[].hook.struct_ops_map_id' "$tmp/all.json" >"$tmp/objects"
npol=$(wc -l <"$tmp/objects")
[ "$npol" = "$n" ] || echo "bench-scale: status lists $npol policies, want $n" >&2

# FILE CMD...: append the wall ms of one run to FILE, and the sum of the
# steps mthpctl reports with MTHPCTL_DEBUG_TIMING (its time in-process,
# without starting the process) to FILE.in
time_cmd() {
	local f=$1 t0 t1; shift
	t0=$(now_us); MTHPCTL_DEBUG_TIMING=1 "$@" >/dev/null 2>"$tmp/steps"; t1=$(now_us)
	awk -v d=$(( t1 - t0 )) 'BEGIN {printf "%.3f\n", d / 1000}' >>"$f"
	awk '$2 == "timing:" {s += $4} END {printf "%.3f\n", s}' "$tmp/steps" >>"$f.in"
}
for ((r = 0; r < repeats; r++)); do	# interleaved
	time_cmd "$tmp/exec" "$M" --version	# starting a process, for reference
	time_cmd "$tmp/status" "$M" status
	time_cmd "$tmp/status_json" "$M" -j status
	time_cmd "$tmp/status_prom" "$M" status --format=prometheus
	time_cmd "$tmp/status_one" "$M" status --cgroup "$first"
	time_cmd "$tmp/status_one_json" "$M" -j status --cgroup "$first"
	time_cmd "$tmp/status_one_local" "$tmp/mthpctl" status --cgroup "$first"
done
MTHPCTL_DEBUG_TIMING=1 "$M" status >/dev/null 2>"$tmp/status_steps"
MTHPCTL_DEBUG_TIMING=1 "$M" -j status >/dev/null 2>"$tmp/status_json_steps"
MTHPCTL_DEBUG_TIMING=1 "$M" status --cgroup "$first" >/dev/null 2>"$tmp/status_one_steps"
if [ -n "$base" ]; then
	for ((i = 1; i <= 5; i++)); do
		cg=$prefix-b$i
		mkdir -p "$cg" && cgs+=("$cg")
		time_cmd "$tmp/b_attach" "$base" attach --cgroup "$cg"
	done
	for ((i = 1; i <= 5; i++)); do
		"$M" detach --cgroup "$prefix-b$i" >/dev/null
	done
	for ((r = 0; r < repeats; r++)); do
		time_cmd "$tmp/b_status" "$base" status
		time_cmd "$tmp/b_status_json" "$base" -j status
		time_cmd "$tmp/b_status_one" "$base" status --cgroup "$first"
	done
fi
echo 1 >/proc/sys/kernel/bpf_stats_enabled
# some page faults in the first cgroup (64 MiB written) for the hook's cost
sh -c 'echo $$ >"$1/cgroup.procs" && exec python3 -c "b = b\"x\" * (64 << 20)"' sh "$first"
"$M" -j status --cgroup "$first" | jq -c '.policies[0].hook' >"$tmp/hook"
echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled

# page-fault cost with the N attached against with only the benchmark's
# own policy: rounds of `bench pagefault` (a policy of its own against
# always, in its own cgroup), one with the N attached, one with none of
# them, the N attached again by one apply between, so a drift of the VM's
# speed falls on both states alike; the cost is the per-round quotient of
# the two rounds' ratios
pf_round() {	# STATE: one round; "RATIO NS_PER_4K" appended to $tmp/pf_STATE
	"$M" bench pagefault --modes always,policy --size 32M --iterations 4 \
		--repeats 1 --quiet --json-out "$tmp/pf.json" >/dev/null 2>"$tmp/pf.err" ||
		{ echo "bench-scale: bench pagefault ($1) failed: $(tail -n 3 "$tmp/pf.err")" >&2; return 1; }
	jq -r '[.modes[] | select(.mode != "always")][0] | "\(.ratio_vs_always.median) \(.ns_per_4k)"' \
		"$tmp/pf.json" >>"$tmp/pf_$1"
}
: >"$tmp/pf_n"; : >"$tmp/pf_one"
pf_round n

# detach: DETACH_SAMPLE one by one (timed each), the rest at once
: >"$tmp/detach"
dsample=$(( n < ${DETACH_SAMPLE:-50} ? n : ${DETACH_SAMPLE:-50} ))
for cg in "${cgs[@]:0:dsample}"; do
	time_cmd "$tmp/detach" "$M" detach --cgroup "$cg"
done
t0=$(now_us)
"$M" detach --all >/dev/null
rest_ms=$(awk -v d=$(( $(now_us) - t0 )) -v k=$(( ${#cgs[@]} - dsample )) \
	'BEGIN {printf "%.3f", k ? d / 1000 / k : 0}')
# apply forgets the policies it attached (detached by hand above)
: >"$tmp/empty.conf" && "$M" apply --config "$tmp/empty.conf" >/dev/null
# the other rounds, alternating: none of the N left, then all N again
printf '[%s]\n' "${cgs[@]}" >"$tmp/all.conf"
pf_round one
for ((r = 2; r <= repeats; r++)); do
	"$M" apply --config "$tmp/all.conf" >/dev/null 2>"$tmp/err" ||
		{ echo "bench-scale: apply of $n cgroups failed: $(tail -n 3 "$tmp/err")" >&2; exit 1; }
	pf_round n
	"$M" apply --config "$tmp/empty.conf" >/dev/null
	pf_round one
done
# median [interval] of each state's ratio to always, and of the cost (with N
# / with one - 1, per round, in %), with the interval's coverage: the order
# statistics of mthpctl bench (src/bench/bench_interval.h), [min..max] below
# 6 rounds (3 rounds: 75%)
pf_stats() {
	python3 - "$tmp/pf_n" "$tmp/pf_one" <<'PY'
import math, statistics, sys
n = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
one = [list(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
def coverage(m, k):
    return 1 - 2 * sum(math.comb(m, i) for i in range(k)) / 2 ** m
def ci(v, f="%.5f"):
    if not v:
        return "null null null null"
    v, k = sorted(v), 1
    while 2 * (k + 1) <= len(v) + 1 and coverage(len(v), k + 1) >= 0.95:
        k += 1
    return " ".join([f % x for x in (statistics.median(v), v[k - 1], v[-k])] +
                    ["%.4f" % coverage(len(v), k)])
k = min(len(n), len(one))
cost = [(n[i][0] / one[i][0] - 1) * 100 for i in range(k) if one[i][0]]
print(ci([x[0] for x in n]), ci([x[0] for x in one]), ci(cost, "%.2f"),
      "%.2f" % statistics.median(x[1] for x in n) if n else "null",
      "%.2f" % statistics.median(x[1] for x in one) if one else "null", k)
PY
}
read -r pfr_n pfr_n_lo pfr_n_hi pfr_n_cov pfr_1 pfr_1_lo pfr_1_hi pfr_1_cov \
	pf_pct pf_pct_lo pf_pct_hi pf_pct_cov \
	pfns_n pfns_one pf_rounds < <(pf_stats)

# policies with parameters of their own: one object each (--private)
: >"$tmp/priv_load"
per_priv=null
if [ "$npriv" -gt 0 ]; then
	# the N detached just before are freed after RCU grace periods, for
	# seconds under TCG at 10,000: a baseline taken meanwhile would count
	# their freeing against the private policies (-514867 B each, once)
	kmem_settle
	kmemp0=$(kmem)
	for ((i = 1; i <= npriv; i++)); do
		cg=$prefix-p$i
		mkdir -p "$cg" && cgs+=("$cg") || exit 1
		MTHPCTL_DEBUG_TIMING=1 "$M" attach --cgroup "$cg" --private >/dev/null 2>"$tmp/err" ||
			{ echo "bench-scale: attach --private $cg failed: $(grep -v timing: "$tmp/err")" >&2; exit 1; }
		awk '$3 == "load" {print $4}' "$tmp/err" >>"$tmp/priv_load"
	done
	sleep 2
	sync; echo 3 >/proc/sys/vm/drop_caches
	per_priv=$(( ($(kmem) - kmemp0) * 1024 / npriv ))
	objs=$("$M" -j status | jq '[.policies[] | select(.cgroup | test("-p[0-9]+$")) | .hook.struct_ops_map_id] | unique | length')
	[ "$objs" = "$npriv" ] || echo "bench-scale: $npriv --private attaches made $objs objects" >&2
	for ((i = 1; i <= npriv; i++)); do
		"$M" detach --cgroup "$prefix-p$i" >/dev/null
	done
fi
left=$(ls /sys/fs/bpf/mthpctl 2>/dev/null | grep -c '^cg-')
nobj=$(awk '{print $1}' "$tmp/objects" | sort -u | wc -l)

per_kmem=$(( (kmem1 - kmem0) * 1024 / n ))
read -r a_min a_med a_max < <(mmm <"$tmp/attach")
read -r l_min l_med l_max < <(mmm <"$tmp/load")
read -r ar_min ar_med ar_max < <(mmm <"$tmp/attach_rest")
read -r x_min x_med x_max < <(mmm <"$tmp/exec")
read -r s_min s_med s_max < <(mmm <"$tmp/status")
read -r si_min si_med si_max < <(mmm <"$tmp/status.in")
read -r ji_min ji_med ji_max < <(mmm <"$tmp/status_json.in")
read -r p_min p_med p_max < <(mmm <"$tmp/status_prom")
read -r pi_min pi_med pi_max < <(mmm <"$tmp/status_prom.in")
read -r oi_min oi_med oi_max < <(mmm <"$tmp/status_one.in")
read -r oji_min oji_med oji_max < <(mmm <"$tmp/status_one_json.in")
read -r ol_min ol_med ol_max < <(mmm <"$tmp/status_one_local")
read -r oli_min oli_med oli_max < <(mmm <"$tmp/status_one_local.in")
read -r ari_min ari_med ari_max < <(mmm <"$tmp/attach_rest.in")
read -r j_min j_med j_max < <(mmm <"$tmp/status_json")
read -r o_min o_med o_max < <(mmm <"$tmp/status_one")
read -r oj_min oj_med oj_max < <(mmm <"$tmp/status_one_json")
read -r d_min d_med d_max < <(mmm <"$tmp/detach")

ok() { awk -v v="$1" -v l="$2" 'BEGIN {print (v != "" && v != "null" && v <= l) ? "ok" : "OVER"}'; }
# a node's worth (issue: 10,000 cgroups) against a few hundred
if [ "$n" -ge 1000 ]; then status_t=2000 mem_t=16384; else status_t=500 mem_t=65536; fi
echo
printf '%-34s %10s %10s %10s  %s\n' "$n policies" min median max target
# row LABEL VAR TARGET: VAR_min, VAR_med and VAR_max of a timing
row() { local a=${2}_min b=${2}_med c=${2}_max; printf '%-34s %10s %10s %10s  %s\n' "$1" "${!a}" "${!b}" "${!c}" "$3"; }
printf '%-34s %10s  %s\n' "apply, ms per cgroup" "$apply_ms" "$napply cgroups in one mthpctl apply, $apply_s s"
row "attach ms ($sample single calls)" a ""
row "  load step ms (libbpf+verifier)" l ""
row "  attach minus load ms" ar ""
row "  same, in-process" ari "< 100 ($(ok "$ari_med" 100))"
row "mthpctl --version ms (exec)" x "(starting a process)"
row "status ms" s "< $status_t ($(ok "$s_med" $status_t))"
row "  in-process" si ""
row "-j status ms" j "< $status_t ($(ok "$j_med" $status_t))"
row "  in-process" ji ""
row "status --format=prometheus ms" p "< $status_t ($(ok "$p_med" $status_t))"
row "  in-process" pi ""
row "status --cgroup ms" o ""
row "  in-process" oi "< 20 ($(ok "$oi_med" 20))"
row "  same, binary copied to $local_fs" ol ""
row "    in-process" oli "< 20 ($(ok "$oli_med" 20))"
row "-j status --cgroup ms" oj ""
row "  in-process" oji "< 20 ($(ok "$oji_med" 20))"
row "detach ms (first $dsample)" d ""
printf '%-34s %10s  %s\n' "detach --all ms per policy" "$rest_ms" "the other $(( ${#cgs[@]} - dsample ))"
# one object for all N (equal parameters): its memlock is the object's,
# the kernel memory per cgroup is the Slab+Vmalloc+Percpu row
printf '%-34s %10s  %s\n' "memlock of the policy object, B" "${memlock_b:-?}" \
	"its program and maps, shared by the $n cgroups"
printf '%-34s %10s  %s\n' "  (prog, maps by id)" "" "${ml#* }"
printf '%-34s %10s  %s\n' "Slab+Vmalloc+Percpu per policy, B" "$per_kmem" "<= $mem_t ($(ok "$per_kmem" $mem_t)): $n cgroups, $nobj policy object(s)"
printf '%-34s %10s  %s\n' "  Slab / Vmalloc / Percpu, B" "" \
	"$(( (slab1 - slab0) * 1024 / n )) / $(( (vm1 - vm0) * 1024 / n )) / $(( (pcpu1 - pcpu0) * 1024 / n ))"
printf '%-34s %10s  %s\n' "  slab caches grown most, B" "" "${top_slabs%, }"
[ "$npriv" -gt 0 ] &&
	printf '%-34s %10s  %s\n' "same, --private (own object), B" "$per_priv" \
		"$npriv cgroups, load step median $(mmm <"$tmp/priv_load" | awk '{print $2}') ms"
if [ -n "$base" ]; then
	echo "baseline $base:"
	for f in b_attach b_status b_status_json b_status_one; do
		printf '%-34s %10s %10s %10s\n' "  ${f#b_} ms" $(mmm <"$tmp/$f")
	done
fi
steps() { awk '$2 == "timing:" {printf "%s %s  ", $3, $4}' "$1"; }
echo "status steps (ms, one run of $n): $(steps "$tmp/status_steps")"
echo "-j status steps (ms, one run): $(steps "$tmp/status_json_steps")"
echo "status --cgroup steps (ms, one run): $(steps "$tmp/status_one_steps")"
echo "attach steps (ms, the last single attach): $(steps "$tmp/attach_steps" 2>/dev/null)"
echo "hook (bpf_stats on): $(cat "$tmp/hook")"
echo "page faults, a policy against always (bench pagefault, 32M x 4; $pf_rounds rounds in each state, interleaved):"
echo "  with $n attached: ratio $pfr_n [$pfr_n_lo..$pfr_n_hi] (coverage $pfr_n_cov), policy ${pfns_n:-?} ns per 4K"
echo "  with none of them: ratio $pfr_1 [$pfr_1_lo..$pfr_1_hi] (coverage $pfr_1_cov), policy ${pfns_one:-?} ns per 4K"
abs_pct=${pf_pct#-}
echo "  cost with $n against one, per round: ${pf_pct}% [$pf_pct_lo..$pf_pct_hi] (coverage $pf_pct_cov; within 2%: $(ok "$abs_pct" 2))"
echo "pins left after detach: $left"

if [ -n "$json" ]; then
	arr() { paste -sd, "$1"; }
	cat >"$json" <<JSON
{"n": $n, "repeats": $repeats, "kernel": "$(uname -r)", "cpus": $(nproc),
 "apply": {"cgroups": $napply, "s": $apply_s, "ms_per_cgroup": $apply_ms},
 "attach_ms": {"min": $a_min, "median": $a_med, "max": $a_max, "sample": $sample, "all": [$(arr "$tmp/attach")]},
 "load_ms": {"min": $l_min, "median": $l_med, "max": $l_max},
 "attach_minus_load_ms": {"min": $ar_min, "median": $ar_med, "max": $ar_max},
 "attach_minus_load_in_process_ms": {"min": $ari_min, "median": $ari_med, "max": $ari_max},
 "status_in_process_ms": {"min": $si_min, "median": $si_med, "max": $si_max},
 "status_json_in_process_ms": {"min": $ji_min, "median": $ji_med, "max": $ji_max},
 "status_prometheus_ms": {"min": $p_min, "median": $p_med, "max": $p_max},
 "status_prometheus_in_process_ms": {"min": $pi_min, "median": $pi_med, "max": $pi_max},
 "status_one_in_process_ms": {"min": $oi_min, "median": $oi_med, "max": $oi_max},
 "status_one_json_in_process_ms": {"min": $oji_min, "median": $oji_med, "max": $oji_max},
 "status_one_local": {"fs": "$local_fs", "ms": {"min": $ol_min, "median": $ol_med, "max": $ol_max},
   "in_process_ms": {"min": $oli_min, "median": $oli_med, "max": $oli_max}},
 "exec_ms": {"min": $x_min, "median": $x_med, "max": $x_max},
 "status_ms": {"min": $s_min, "median": $s_med, "max": $s_max, "all": [$(arr "$tmp/status")]},
 "status_json_ms": {"min": $j_min, "median": $j_med, "max": $j_max, "all": [$(arr "$tmp/status_json")]},
 "status_one_ms": {"min": $o_min, "median": $o_med, "max": $o_max, "all": [$(arr "$tmp/status_one")]},
 "status_one_json_ms": {"min": $oj_min, "median": $oj_med, "max": $oj_max, "all": [$(arr "$tmp/status_one_json")]},
 "detach_ms": {"min": $d_min, "median": $d_med, "max": $d_max, "sample": $dsample},
 "detach_all_ms_per_policy": $rest_ms,
 "pagefault": {"ratio_vs_always_with_n": {"median": $pfr_n, "lo": $pfr_n_lo, "hi": $pfr_n_hi, "coverage": $pfr_n_cov},
   "ratio_vs_always_with_one": {"median": $pfr_1, "lo": $pfr_1_lo, "hi": $pfr_1_hi, "coverage": $pfr_1_cov},
   "ns_per_4k_with_n": ${pfns_n:-null}, "ns_per_4k_with_one": ${pfns_one:-null},
   "cost_vs_one_pct": $pf_pct, "cost_vs_one_pct_interval": [$pf_pct_lo, $pf_pct_hi], "cost_vs_one_pct_coverage": $pf_pct_cov, "rounds": $pf_rounds},
 "memlock_per_policy_bytes": ${memlock_b:-null},
 "kmem_delta_per_policy_bytes": $per_kmem,
 "policy_objects": $nobj,
 "private": {"n": $npriv, "kmem_delta_per_policy_bytes": $per_priv},
 "kmem_split_per_policy_bytes": {"slab": $(( (slab1 - slab0) * 1024 / n )), "vmalloc": $(( (vm1 - vm0) * 1024 / n )), "percpu": $(( (pcpu1 - pcpu0) * 1024 / n ))},
 "hook": $(cat "$tmp/hook" 2>/dev/null | grep . || echo null),
 "pins_left": $left,
 "baseline": $(if [ -n "$base" ]; then printf '{"attach_ms": [%s], "status_ms": [%s], "status_json_ms": [%s], "status_one_ms": [%s]}' "$(arr "$tmp/b_attach")" "$(arr "$tmp/b_status")" "$(arr "$tmp/b_status_json")" "$(arr "$tmp/b_status_one")"; else echo null; fi),
 "targets": {"attach_minus_load_ms": 100, "status_ms": $status_t, "status_one_ms": 20, "memory_per_policy_bytes": $mem_t, "pagefault_cost_pct": 2}}
JSON
	jq . "$json" >/dev/null || echo "bench-scale: $json is not valid JSON" >&2
fi
[ "$left" = 0 ]
