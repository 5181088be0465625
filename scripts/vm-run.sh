#!/usr/bin/env bash
# Run a command as root in a VM booted from the patched kernel (virtme-ng).
#
# Usage: scripts/vm-run.sh [options] -- COMMAND [ARG...]
#   -k, --kernel DIR     kernel result dir from kernel-build.sh (default: build it)
#   -p, --cpus N         vCPUs (default 2)
#   -m, --memory SIZE    guest memory (default 2G)
#   -o, --results DIR    writable results directory, visible to the guest at
#                        the same path and as $MTHP_RESULTS (default: a new
#                        temporary directory, kept)
#   -t, --timeout SEC    kill the VM after SEC seconds (default 1800)
#   -a, --append ARG     extra kernel command line argument (repeatable)
#
# The guest sees the host's root file system read-only and runs COMMAND in
# the current directory. The exit status is COMMAND's, taken from a file the
# guest writes (vng's own status is meaningless on serial consoles), or 125
# if the guest never reported one. The run also fails (status 124 on
# timeout, 126 on a splat) if the console shows BUG:, WARNING:, KASAN,
# Oops, an RCU stall, a soft lockup, a hung task or a lockdep report.
# VMs on one machine run one at a time (a lock; see MTHPCTL_VM_LOCK below).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cpus=2 memory=2G results= timeout=1800 kdir=
append=()
while [ $# -gt 0 ]; do
	case $1 in
	-k|--kernel) kdir=$2; shift 2 ;;
	-p|--cpus) cpus=$2; shift 2 ;;
	-m|--memory) memory=$2; shift 2 ;;
	-o|--results) results=$2; shift 2 ;;
	-t|--timeout) timeout=$2; shift 2 ;;
	-a|--append) append+=(--append "$2"); shift 2 ;;
	--) shift; break ;;
	*) echo "vm-run: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "vm-run: no command given: vm-run.sh [options] -- COMMAND" >&2; exit 2; }
command -v vng >/dev/null || { echo "vm-run: vng not found: run scripts/install-deps.sh" >&2; exit 2; }

if [ -z "$kdir" ]; then
	kdir=$("$top/scripts/kernel-build.sh" | tail -n1) || exit 1
fi
[ -f "$kdir/bzImage" ] || { echo "vm-run: no bzImage in $kdir" >&2; exit 2; }
[ -n "$results" ] || results=$(mktemp -d /tmp/mthp-vm.XXXXXX)
mkdir -p "$results"
results=$(cd "$results" && pwd)
rm -f "$results/status" "$results/guest.out"

# The guest side: run the command, keep its output and status in files.
guest=$results/.guest.sh
{
	echo '#!/bin/bash'
	echo "export MTHP_RESULTS=$(printf %q "$results")"
	echo "export PATH=$(printf %q "$PATH")"
	echo "cd $(printf %q "$PWD") || exit 125"
	echo 'echo MTHP-GUEST-BEGIN'
	printf '%q ' "$@"
	echo '2>&1 | tee "$MTHP_RESULTS/guest.out"'
	echo 'rc=${PIPESTATUS[0]}'
	echo 'echo $rc >"$MTHP_RESULTS/status"'
	echo 'echo MTHP-GUEST-END status=$rc'
	echo 'sync'
} >"$guest"
chmod +x "$guest"

# One VM at a time on this machine: two TCG guests on 2 cores double each
# other's run time and break the time limits of the tests and the figures
# of the benchmarks. MTHPCTL_VM_LOCK names the lock file.
lock=${MTHPCTL_VM_LOCK:-/tmp/mthpctl-vm.lock}
exec 8>>"$lock" || { echo "vm-run: cannot open the lock $lock" >&2; exit 2; }
if ! flock -n 8; then
	echo "vm-run: another VM runs on this machine; waiting for it ($lock)" >&2
	flock 8
fi

# The console goes to a log; the guest's own lines are shown as they come.
timeout --foreground -k 10 "$timeout" \
	vng -r "$kdir/bzImage" --disable-kvm -v -p "$cpus" -m "$memory" \
	    --rwdir "$results" "${append[@]}" -- "$guest" </dev/null 2>&1 |
	tee "$results/console.log" |
	sed -un '/MTHP-GUEST-BEGIN/,/MTHP-GUEST-END/{/MTHP-GUEST-/d;p}'
vng_rc=${PIPESTATUS[0]}

splat='BUG:|WARNING:|KASAN|Oops|rcu: INFO:|detected stalls|soft lockup|hung_task|blocked for more than|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|UBSAN'
# Only kernel messages (timestamped) count: the guest's output may quote
# these words.
if tr -d '\r' <"$results/console.log" | grep -E '^\[ *[0-9]+\.[0-9]+\]' |
   grep -E "$splat" >"$results/splats.txt"; then
	echo "vm-run: the kernel reported problems (full log: $results/console.log):" >&2
	head -n 20 "$results/splats.txt" >&2
	exit 126
fi
if [ "$vng_rc" = 124 ]; then
	echo "vm-run: timed out after ${timeout}s (log: $results/console.log)" >&2
	exit 124
fi
if [ ! -s "$results/status" ]; then
	echo "vm-run: the guest reported no status (log: $results/console.log)" >&2
	exit 125
fi
exit "$(cat "$results/status")"
