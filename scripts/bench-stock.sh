#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make bench-stock`: the hardware-MMU anchor. `mthpctl bench mixed --stock`
# on this machine's own kernel (no VM, no series, no policy): the shared-host
# scenario's three workloads under each global setting, and under the
# per-workload split a stock kernel allows (a madvise host where only the
# batch advises its array), compared with each global setting as a policy
# is in the VM. What a hardware TLB gives large folios, which the TCG guest
# of `make bench` cannot show; the policy itself is not in these figures.
#
# The bench cgroup goes under the first cgroup2 mount (a host whose memory
# controller is on cgroup v1 runs without a node limit: mixed.json's
# "memory_controller" says which). Every THP setting and
# vm.overcommit_memory is read before and compared after; mthpctl restores
# them itself (also on SIGINT/SIGTERM), and when it could not (killed),
# this script writes the values it read back, kills and removes the bench
# cgroup and the temporary directory it left, and says so.
#
# Writes a run folder, OUT (default .output/bench-stock/<UTC date>/, linked
# as .output/bench-stock/latest), published like a `make bench` run with
# BENCH_RESULTS_DIR=tests/hardware scripts/bench-publish.sh OUT:
#   env.json    {"git_commit", "git_dirty", "kernel_key" ("host-" uname -r),
#               "stock": true, "started", "host": {uname, cpus, cpu_model,
#               mem_total_kb}, "thp_found": {sysfs path: value},
#               "beside": {"qemu_processes", "loadavg"} (what else ran),
#               "bench": {"repeats", "cgroup", "extra_args"}}
#   mixed.json  every round's figures (mthpctl bench --json-out)
#   bench.txt   the tables as mthpctl prints them
#   bench.json  {"environment", "mixed"}: the run is finished
#
# Usage: scripts/bench-stock.sh [-o OUT] [-r ROUNDS] [-- EXTRA-MIXED-ARGS]
#   ROUNDS  rounds (default 6: the fewest whose median interval has 95%
#           coverage, 96.9%)
#   EXTRA   appended to mthpctl bench mixed --stock (default --array-size 1G:
#           an array whose 4K page tables do not fit the caches)
#
# Exit status: 0 the run finished and every setting is as found; 1 the
# benchmark failed (its exit code in bench.txt); 2 usage, not root, or no
# cgroup2 mount; 3 a setting was not restored by mthpctl (this script
# restored it: the line names it); 128+N stopped by signal N.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
M=$top/mthpctl
THP=/sys/kernel/mm/transparent_hugepage

out= rounds=6
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "bench-stock.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || set -- --array-size 1G
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench-stock.sh: -r $rounds: a number of rounds, e.g. 6" >&2; exit 2; }
[ -x "$M" ] || { echo "bench-stock.sh: build mthpctl first (make mthpctl)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench-stock.sh: run it as root (it changes $THP)" >&2; exit 2; }
[ -w "$THP/enabled" ] || { echo "bench-stock.sh: $THP/enabled is not writable: a kernel with THP is needed" >&2; exit 2; }
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg2" ] || { echo "bench-stock.sh: no cgroup2 mount (mount -t cgroup2 none /sys/fs/cgroup/unified)" >&2; exit 2; }

if [ -z "$out" ]; then
	out=$top/.output/bench-stock/$(date -u +%Y%m%dT%H%M%SZ)
	mkdir -p "$out"
	ln -sfn "$(basename "$out")" "$top/.output/bench-stock/latest"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# every setting mthpctl bench changes, as found: PATH VALUE (the bracketed
# choice, or the number): THP's and vm.overcommit_memory
thp_settings() {
	local f v
	for f in "$THP"/enabled "$THP"/defrag "$THP"/hugepages-*/enabled \
		 "$THP"/khugepaged/* /proc/sys/vm/overcommit_memory; do
		# the settings: mode u+w (root may write any file; the counters
		# such as khugepaged/full_scans are 0444)
		[ -n "$(find "$f" -maxdepth 0 -perm -u+w 2>/dev/null)" ] || continue
		v=$(cat "$f" 2>/dev/null) || continue
		[[ $v == *\[*\]* ]] && v=${v#*[} && v=${v%%]*}
		printf '%s %s\n' "$f" "$v"
	done
}
thp_settings >"$out/thp-found.txt"
# mthpctl's temporary directories (redis-server's --dir) as found: a killed
# run leaves its own behind
tmp_dirs() { ls -d "${TMPDIR:-/tmp}"/mthpctl-bench.* 2>/dev/null; }
tmp_dirs >"$out/tmp-found.txt"

restore_check() {	# writes back what differs from thp-found.txt; 3 if any did
	local rc=0 path want have d
	# a killed mthpctl leaves its cgroups and their processes (redis-server)
	if [ -d "$cg2/mthpctl-bench" ]; then
		echo "bench-stock.sh: $cg2/mthpctl-bench left behind: its processes killed, removed" >&2
		for d in $(find "$cg2/mthpctl-bench" -depth -type d); do
			echo 1 >"$d/cgroup.kill" 2>/dev/null
		done
		sleep 1
		find "$cg2/mthpctl-bench" -depth -type d -exec rmdir {} + 2>/dev/null
		rc=3
	fi
	for d in $(tmp_dirs | grep -vxF -f "$out/tmp-found.txt"); do
		echo "bench-stock.sh: $d left behind: removed" >&2
		rm -rf -- "$d"
		rc=3
	done
	while read -r path want; do
		have=$(thp_settings | awk -v p="$path" '$1 == p { print $2 }')
		[ "$have" = "$want" ] && continue
		echo "bench-stock.sh: $path is '$have', was '$want': written back" >&2
		echo "$want" >"$path" || echo "bench-stock.sh: could not write $path: set it to '$want' by hand" >&2
		rc=3
	done <"$out/thp-found.txt"
	return $rc
}

python3 - "$out" "$top" "$rounds" "$cg2" "$@" <<'PY' || echo "bench-stock.sh: warning: env.json not written" >&2
import json, os, subprocess, sys
out, top, rounds, cg2 = sys.argv[1:5]
sys.path.insert(0, os.path.join(top, "scripts"))
from bench_env import base_env
found = dict(line.split(" ", 1) for line in open(os.path.join(out, "thp-found.txt")).read().splitlines())
qemu = subprocess.run(["pgrep", "-f", "qemu-system"], capture_output=True, text=True).stdout
env = base_env(top, "host-" + os.uname().release)
env.update({"stock": True, "thp_found": found,
            "beside": {"qemu_processes": len(qemu.split()),
                       "loadavg": open("/proc/loadavg").read().split()[:3]},
            "bench": {"repeats": int(rounds), "cgroup": cg2 + "/mthpctl-bench",
                      "extra_args": sys.argv[5:]}})
json.dump(env, open(os.path.join(out, "env.json"), "w"), indent=2)
PY

echo "bench-stock: $(uname -r), results in $out (~20 min with the defaults)" >&2
# mthpctl restores on SIGINT/SIGTERM/SIGHUP itself: a signal to this script
# is passed on to it, then the settings are checked
"$M" bench mixed --stock --cgroup "$cg2/mthpctl-bench" --repeats "$rounds" \
	--json-out "$out/mixed.json" "$@" > >(tee -i "$out/bench.txt") &
pid=$!
sig=
for s in INT TERM HUP; do
	trap "sig=$s; kill -$s $pid 2>/dev/null" "$s"
done
rc=
while [ -z "$rc" ]; do
	wait "$pid"
	rc=$?
	# a trapped signal ends wait early: wait again until mthpctl has ended
	kill -0 "$pid" 2>/dev/null && rc=
done
trap - INT TERM HUP
restore_check || rc=3
if [ "$rc" = 0 ]; then
	python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
res = {n: json.load(open(os.path.join(out, n + ".json"))) for n in ("env", "mixed")}
json.dump({"environment": res["env"], "mixed": res["mixed"]},
          open(os.path.join(out, "bench.json"), "w"), indent=2)
PY
	echo "bench-stock: done; publish: BENCH_RESULTS_DIR=tests/hardware scripts/bench-publish.sh $out" >&2
elif [ "$rc" != 3 ]; then
	echo "bench-stock: mthpctl bench exited $rc${sig:+ (SIG$sig passed on)} (bench.txt)" >&2
	[ "$rc" -ge 128 ] || rc=1
fi
exit "$rc"
