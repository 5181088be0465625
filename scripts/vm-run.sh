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
#   -s, --systemd        systemd as PID 1: COMMAND runs as a service once
#                        multi-user.target is reached, then the VM powers off
#                        (see below)
#   --arch arm64         an arm64 guest (QEMU virt, TCG) on the arm64 kernel
#                        (ARCH=arm64 scripts/kernel-build.sh) and the root of
#                        scripts/arm64-rootfs.sh instead of the host's; the
#                        checkout is shared read-only at its own path (run
#                        from inside it), /tmp is writable in the guest only
#                        and holds the results directory (not with --systemd)
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
systemd= arch=x86
while [ $# -gt 0 ]; do
	case $1 in
	-k|--kernel) kdir=$2; shift 2 ;;
	-p|--cpus) cpus=$2; shift 2 ;;
	-m|--memory) memory=$2; shift 2 ;;
	-o|--results) results=$2; shift 2 ;;
	-t|--timeout) timeout=$2; shift 2 ;;
	-a|--append) append+=(--append "$2"); shift 2 ;;
	-s|--systemd) systemd=1; shift ;;
	--arch) arch=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "vm-run: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	esac
done
[ -z "$systemd" ] || [ ${#append[@]} = 0 ] ||
	{ echo "vm-run: --append and --systemd together: not supported (--systemd sets the command line)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "vm-run: no command given: vm-run.sh [options] -- COMMAND" >&2; exit 2; }
command -v vng >/dev/null || { echo "vm-run: vng not found: run scripts/install-deps.sh" >&2; exit 2; }

case $arch in
x86|x86_64) arch=x86 image=bzImage ;;
arm64|aarch64) arch=arm64 image=Image
	[ -z "$systemd" ] || { echo "vm-run: --systemd with --arch arm64: not supported" >&2; exit 2; } ;;
*) echo "vm-run: --arch $arch: only x86 and arm64" >&2; exit 2 ;;
esac
if [ -z "$kdir" ]; then
	kdir=$(ARCH=$arch "$top/scripts/kernel-build.sh" | tail -n1) || exit 1
fi
[ -f "$kdir/$image" ] || { echo "vm-run: no $image in $kdir" >&2; exit 2; }
[ -n "$results" ] || results=$(mktemp -d /tmp/mthp-vm.XXXXXX)
mkdir -p "$results"
results=$(cd "$results" && pwd)
rm -f "$results/status" "$results/guest.out"

# The arm64 guest's root: its own file system (made once), with a mount
# point for the checkout at its host path, shared read-only; the results
# directory lies under /tmp, a writable overlay in the guest.
vng_arch=(--rwdir "$results")
guest_path=$PATH
if [ "$arch" = arm64 ]; then
	root=$("$top/scripts/arm64-rootfs.sh" | tail -n1) || exit 1
	case $results in /tmp/*) ;; *)
		echo "vm-run: --arch arm64: the results directory must be under /tmp ($results)" >&2; exit 2 ;;
	esac
	mkdir -p "$root$top"
	vng_arch=(--arch arm64 --root "$root" --force-9p --overlay-rwdir=/tmp --rodir="$top=$top"
		  --rwdir="$results=$results")
	guest_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/busybox
fi

# The guest side: run the command, keep its output and status in files.
guest=$results/.guest.sh
{
	echo '#!/bin/bash'
	echo "export MTHP_RESULTS=$(printf %q "$results")"
	echo "export PATH=$(printf %q "$guest_path")"
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

# systemd as PID 1. vng --systemd's own way (virtme's init run from a
# serial getty) cannot work on this root: without udev the getty's tty
# device never appears, and systemd takes the host's /.dockerenv, seen
# through the shared root, for a container, and then reads no kernel
# command line. So the kernel command line is replaced (QEMU takes the last
# -append): init is a script that mounts what virtme's init would (/proc,
# /run, the results directory, /etc as a writable overlay in memory), adds
# the command as a service wanted by multi-user.target that powers the VM
# off when it ends, leaves out the services the host root enables, and
# execs systemd with container= (empty: not in a container).
vng_cmd=(-- "$guest")
if [ -n "$systemd" ]; then
	init=$results/.init.sh
	{
		echo '#!/bin/sh'
		echo 'mount -t proc proc /proc && mount -t tmpfs -o mode=755 run /run || exit 1'
		echo 'mkdir -p /run/vm-etc/upper /run/vm-etc/work'
		echo 'mount -t overlay overlay -o lowerdir=/etc,upperdir=/run/vm-etc/upper,workdir=/run/vm-etc/work /etc || exit 1'
		echo ': >/etc/fstab'
		echo 'rm -f /etc/systemd/system/multi-user.target.wants/*.service'
		echo "mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 virtme.initmount0 $(printf %q "$results") || exit 1"
		echo 'mkdir -p /run/systemd/system/multi-user.target.wants'
		echo 'cat >/run/systemd/system/vm-run-command.service <<EOF'
		echo '[Unit]'
		echo 'Description=vm-run.sh: the command'
		echo 'After=multi-user.target'
		echo 'SuccessAction=poweroff-force'
		echo 'FailureAction=poweroff-force'
		echo '[Service]'
		echo 'Type=oneshot'
		echo "ExecStart=$guest"
		echo 'StandardOutput=tty'
		echo 'StandardError=tty'
		echo 'EOF'
		echo 'ln -s ../vm-run-command.service /run/systemd/system/multi-user.target.wants/'
		echo '# no login prompt on the console, which carries the command'"'"'s output'
		echo 'ln -s /dev/null /run/systemd/system/serial-getty@ttyS0.service'
		echo 'ln -s /dev/null /run/systemd/system/console-getty.service'
		echo 'container= exec /sbin/init'
	} >"$init"
	chmod +x "$init"
	# (systemd.show_status=error: its boot messages, interleaved with the
	# command's output, showed in the lines vm-run passes on)
	cmdline="console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1 rootfstype=9p rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288 ro loglevel=7 printk.time=1 systemd.show_status=error init=$init"
	# (vng hands its --qemu-opts to a shell)
	vng_cmd=("--qemu-opts=-append $(printf %q "$cmdline")")
fi

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
	vng -r "$kdir/$image" --disable-kvm -v -p "$cpus" -m "$memory" --append printk.time=1 \
	    "${vng_arch[@]}" "${append[@]}" "${vng_cmd[@]}" </dev/null 2>&1 |
	tee "$results/console.log" |
	sed -un '/MTHP-GUEST-BEGIN/,/MTHP-GUEST-END/{/MTHP-GUEST-/d;p}'
vng_rc=${PIPESTATUS[0]}

# (printk.time=1 above: kernel/config leaves CONFIG_PRINTK_TIME off, and
# without the timestamps no line would count)
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
