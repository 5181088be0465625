#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# mthpctl-nri on a real containerd, run as root inside the VM by
# scripts/nri-e2e.sh (make nri-e2e):
#
#   tests/nri-e2e/run.sh [--driver cgroupfs|systemd] RUNTIME_BIN E2E_DIR [TEST...]
#
# RUNTIME_BIN holds containerd, containerd-shim-runc-v2, ctr and crictl;
# E2E_DIR the images (images/*.tar) and the plugin's pod and container
# configs made from the chart (plugin/). containerd runs with its root and
# state on a tmpfs, NRI on and Debian's runc; every pod has the host
# network (no CNI). The plugin runs from its image with the DaemonSet's
# mounts and security context. Prints `ok - NAME` / `not ok - NAME:
# reason` per test, then `N passed, N failed`.
#
# The cgroup driver (default cgroupfs) is the runc option SystemdCgroup
# and the form of the pods' cgroup parents, as the kubelet's driver of the
# same name gives them:
#   cgroupfs  /kubepods/burstable/pod<UID>; runc makes the directories,
#             a container's is /kubepods/burstable/pod<UID>/<ID>
#   systemd   /kubepods.slice/kubepods-burstable.slice/
#             kubepods-burstable-pod<UID, - as _>.slice; runc asks systemd
#             (PID 1: scripts/vm-run.sh --systemd) for a scope
#             cri-containerd-<ID>.scope in the pod's slice; the slices are
#             units, removed with systemctl stop (as the kubelet does)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
driver=cgroupfs
if [ "${1:-}" = --driver ]; then
	driver=${2:?--driver cgroupfs|systemd}
	shift 2
fi
case $driver in
cgroupfs|systemd) ;;
*) echo "run.sh: --driver $driver: cgroupfs or systemd" >&2; exit 2 ;;
esac
rtbin=${1:?RUNTIME_BIN}
e2e=${2:?E2E_DIR}
shift 2
W=/run/mthpctl-nri-e2e	# the tmpfs (e2econfig names its directories)
M=$top/mthpctl		# mthpctl on the node, to check what is attached
THP=/sys/kernel/mm/transparent_hugepage
logs=${MTHP_RESULTS:-$(mktemp -d /tmp/nri-e2e.XXXXXX)}/nri-e2e-$driver
SOCK=$W/containerd.sock
# the runtime's binaries run from the tmpfs (read over the VM's 9p share
# on every start, they slow each crictl call down)
export PATH=$W/bin:$PATH
passed=0 failed=0 why=
plugin_ctr= plugin_pod= containerd_pid=

note() { printf '#   %s\n' "$*"; }
fail() { why="$*"; return 1; }
cri() { crictl --config "$W/crictl.yaml" "$@"; }

# --- containerd -------------------------------------------------------------

start_containerd() {
	containerd --config "$W/containerd.toml" >>"$logs/containerd.log" 2>&1 &
	containerd_pid=$!
	local end=$((SECONDS + 180))
	while [ "$SECONDS" -le "$end" ]; do
		ctr -a "$SOCK" version >/dev/null 2>&1 && cri info >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "run.sh: containerd did not answer in 180 s (log: $logs/containerd.log)" >&2
	tail -n 20 "$logs/containerd.log" >&2
	return 1
}

stop_containerd() {
	[ -n "$containerd_pid" ] || return 0
	kill "$containerd_pid" 2>/dev/null
	wait "$containerd_pid" 2>/dev/null
	containerd_pid=
}

setup() {
	[ "$(id -u)" = 0 ] || { echo "run.sh: must run as root (inside the VM)" >&2; exit 2; }
	for f in "$M" "$rtbin/containerd" "$rtbin/crictl" "$e2e/images/plugin.tar" "$e2e/plugin/pod.json"; do
		[ -e "$f" ] || { echo "run.sh: $f missing (make nri-e2e builds it)" >&2; exit 2; }
	done
	mkdir -p "$logs"
	if [ "$driver" = systemd ]; then
		[[ $(readlink /proc/1/exe) == */systemd ]] && [ -d /run/systemd/system ] ||
			{ echo "run.sh: --driver systemd: systemd is not PID 1 (scripts/vm-run.sh --systemd)" >&2; exit 2; }
		# runc talks to systemd on the system bus (dbus.socket) or, as
		# root, on systemd's private socket
		[ -S /run/dbus/system_bus_socket ] || [ -S /run/systemd/private ] ||
			{ echo "run.sh: --driver systemd: no D-Bus socket (package dbus)" >&2; exit 2; }
	fi
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	ip link set lo up 2>/dev/null
	"$M" detach --all >/dev/null 2>&1
	mkdir -p "$W" && mount -t tmpfs -o size=1G,mode=755 nri-e2e "$W" || exit 2
	mkdir -p "$W/bin" && cp "$rtbin"/* "$W/bin/" || exit 2
	mkdir -p "$W/empty/state" "$W/logs/mthpctl-nri" "$W/cni" "$W/nri-plugins" "$W/nri-conf" /var/run/nri
	# the plugin's records on the host (the chart's hostPath)
	rm -rf /run/mthpctl-nri && mkdir -p /run/mthpctl-nri
	# (TCG is slow: a generous timeout)
	printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 120\n' "$SOCK" "$SOCK" >"$W/crictl.yaml"
	cat >"$W/containerd.toml" <<EOF
version = 3
root = "$W/root"
state = "$W/state"
[grpc]
  address = "$SOCK"
[plugins.'io.containerd.nri.v1.nri']
  disable = false
  socket_path = "/var/run/nri/nri.sock"
  plugin_path = "$W/nri-plugins"
  plugin_config_path = "$W/nri-conf"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "e2e/pause:1"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  BinaryName = "$(command -v runc)"
  SystemdCgroup = $([ "$driver" = systemd ] && echo true || echo false)
[plugins.'io.containerd.cri.v1.runtime'.cni]
  conf_dir = "$W/cni"
EOF
	# the plugin's pod in the driver's form (e2econfig writes cgroupfs's)
	local parent
	parent=$(cgroup_parent besteffort "$(jq -r .metadata.uid "$e2e/plugin/pod.json")")
	jq --arg p "$parent" '.linux.cgroup_parent = $p' "$e2e/plugin/pod.json" >"$W/plugin-pod.json" || exit 2
	if [ "$driver" = systemd ]; then
		systemctl start "${parent##*/}" || { echo "run.sh: systemctl start ${parent##*/} failed" >&2; exit 1; }
	fi
	local img t0=$SECONDS
	start_containerd || exit 1
	note "containerd up in $((SECONDS - t0)) s"
	for img in "$e2e"/images/*.tar; do
		ctr -a "$SOCK" -n k8s.io images import "$img" >"$logs/import-${img##*/}.log" 2>&1 &
	done
	wait_jobs_ok || { echo "run.sh: an image import failed:" >&2; tail -n 3 "$logs"/import-*.log >&2; exit 1; }
	note "images imported in $((SECONDS - t0)) s"
	# the node's hosts sizes at madvise (the safe default): a pod gets
	# large folios only through a policy
	for f in "$THP"/enabled "$THP"/hugepages-*/enabled; do
		echo madvise >"$f"
	done
	start_plugin "$e2e/plugin/configmap" || { echo "run.sh: the plugin did not start" >&2; exit 1; }
	note "the plugin synchronized after $((SECONDS - t0)) s"
}

# wait_jobs_ok: every background job of this shell (but containerd)
# succeeded
wait_jobs_ok() {
	local j rc=0
	for j in $(jobs -p); do
		[ "$j" = "$containerd_pid" ] && continue
		wait "$j" || rc=1
	done
	return "$rc"
}

restore() {
	cri rmp -af >/dev/null 2>&1
	stop_containerd
	"$M" detach --all >/dev/null 2>&1
	# runc's containers are gone with their shims; the pod cgroups stay
	if [ "$driver" = systemd ]; then
		systemctl stop kubepods.slice 2>/dev/null
	else
		find /sys/fs/cgroup/kubepods -depth -type d -exec rmdir {} + 2>/dev/null
	fi
	umount -l "$W" 2>/dev/null
}

# --- the plugin -------------------------------------------------------------

# start_plugin CONFIG_DIR [CONTAINER_JSON]: the plugin's container in its
# pod (the pod made once), its configuration from CONFIG_DIR.
start_plugin() {
	local cfg=$1 cjson=${2:-$e2e/plugin/container.json}
	if [ -z "$plugin_pod" ]; then
		plugin_pod=$(cri runp "$W/plugin-pod.json") || return 1
	fi
	jq --arg cfg "$cfg" \
		'.mounts |= map(if .container_path == "/etc/mthpctl-nri" then .host_path = $cfg else . end)' \
		"$cjson" >"$W/plugin-container.json"
	plugin_ctr=$(cri create "$plugin_pod" "$W/plugin-container.json" "$W/plugin-pod.json") &&
		cri start "$plugin_ctr" >/dev/null || return 1
	wait_log "synchronize:" 1 60
}

# plugin_seccomp: the Seccomp line of the plugin's process (2: a filter,
# the chart's RuntimeDefault profile as runc installed it)
plugin_seccomp() {
	local pid
	pid=$(cri inspect "$plugin_ctr" | jq -r '.info.pid') &&
		sed -n 's/^Seccomp:[[:space:]]*//p' "/proc/$pid/status"
}

# (containerd's StopContainer can return before the container's exit is
# recorded: with the systemd driver under TCG its handling of the exit
# runs past its own 10 s deadline, and the removal is refused, "is
# running", for a while; the name stays reserved until it is removed)
stop_plugin() {
	local end=$((SECONDS + 120))
	cri stop -t 5 "$plugin_ctr" >/dev/null || return 1
	while cri inspect "$plugin_ctr" >/dev/null 2>&1; do
		cri rm "$plugin_ctr" >/dev/null 2>&1 && break
		[ "$SECONDS" -le "$end" ] || { echo "run.sh: container $plugin_ctr not removed in 120 s" >&2; return 1; }
		sleep 1
	done
	plugin_ctr=
}

plugin_log() { cri logs "$plugin_ctr" 2>&1; }

# wait_log TEXT N SECONDS: the plugin's log has N lines with TEXT
wait_log() {
	local end=$((SECONDS + $3))
	while [ "$SECONDS" -le "$end" ]; do
		[ "$(plugin_log | grep -cF -- "$1")" -ge "$2" ] && return 0
		sleep 0.5
	done
	return 1
}

# (a scrape runs mthpctl status: seconds under TCG)
metrics() { curl -sf --max-time 120 http://127.0.0.1:9818/metrics; }

# --- pods -------------------------------------------------------------------

# cgroup_parent QOS UID: a pod's cgroup parent as the kubelet's driver
# gives it to the runtime (systemd: the slice expanded to its path)
cgroup_parent() {
	if [ "$driver" = systemd ]; then
		local u=${2//-/_}
		echo "/kubepods.slice/kubepods-$1.slice/kubepods-$1-pod$u.slice"
	else
		echo "/kubepods/$1/pod$2"
	fi
}

# pod_json NAME N ANNOTATIONS_JSON [ATTEMPT]: a pod of uid N, burstable,
# the driver's layout, privileged (its containers are)
uid_of() { printf '4e524900-0000-4000-8000-%012d' "$1"; }
pod_cgroup() { echo "/sys/fs/cgroup$(cgroup_parent burstable "$(uid_of "$1")")"; }
# ctr_cgroup N ID: the cgroup of container ID in pod N
ctr_cgroup() {
	if [ "$driver" = systemd ]; then
		echo "$(pod_cgroup "$1")/cri-containerd-$2.scope"
	else
		echo "$(pod_cgroup "$1")/$2"
	fi
}
# cgroup_of_ctr ID: the cgroup its process is in, as the kernel says
cgroup_of_ctr() {
	local pid
	pid=$(cri inspect -o json "$1" | jq -r .info.pid) && [ "${pid:-0}" -gt 1 ] &&
		echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$pid/cgroup")"
}
# make_pod_cgroup N: the kubelet's systemd driver makes the pod's slice
# (a unit, in its QoS class's slice) before the sandbox; with cgroupfs runc
# makes the directory
make_pod_cgroup() {
	[ "$driver" = systemd ] || return 0
	systemctl start "$(basename "$(pod_cgroup "$1")")"
}
# remove_cgroup N: pod N's cgroup removed as the kubelet does once the pod
# is gone (systemd: the slice unit stopped)
remove_cgroup() {
	if [ "$driver" = systemd ]; then
		systemctl stop "$(basename "$(pod_cgroup "$1")")"
	else
		find "$(pod_cgroup "$1")" -depth -type d -exec rmdir {} +
	fi
}
pod_json() {
	local f=$W/pod-$1-${4:-0}.json
	mkdir -p "$W/logs/$1"
	make_pod_cgroup "$2"
	jq -n --arg name "$1" --arg uid "$(uid_of "$2")" --argjson ann "$3" --argjson attempt "${4:-0}" \
		--arg logs "$W/logs/$1" --arg parent "$(cgroup_parent burstable "$(uid_of "$2")")" '{
		metadata: {name: $name, namespace: "default", uid: $uid, attempt: $attempt},
		annotations: $ann, log_directory: $logs,
		linux: {cgroup_parent: $parent,
			security_context: {privileged: true, namespace_options: {network: 2}}}}' >"$f"
	echo "$f"
}

# ctr_json NAME: a workload container probing 8 MiB every 3 s for an hour
# (the tests remove their pods when done: probes of many pods would
# fill the VM's CPU)
# (privileged: the faulter reads /proc/kpageflags)
ctr_json() {
	local f=$W/ctr-$1.json
	jq -n --arg name "$1" '{metadata: {name: $name}, image: {image: "e2e/workload:1"},
		args: ["-s", "8", "-n", "0", "-d", "3600000", "-i", "3000"], log_path: ($name + ".log"),
		linux: {security_context: {privileged: true}}}' >"$f"
	echo "$f"
}

# run_pod NAME N ANNOTATIONS_JSON CONTAINER... : the sandbox's id in
# sb_of[NAME], the containers' in ctr_ids[NAME/CONTAINER]
declare -A ctr_ids sb_of
run_pod() {
	local name=$1 n=$2 ann=$3 pj sb c cid
	shift 3
	pj=$(pod_json "$name" "$n" "$ann")
	sb=$(cri runp "$pj") || return 1
	sb_of[$name]=$sb
	for c in "$@"; do
		cid=$(cri create "$sb" "$(ctr_json "$c")" "$pj") && cri start "$cid" >/dev/null || return 1
		ctr_ids[$name/$c]=$cid
	done
}

# probe_of NAME/CONTAINER SECONDS COND: the first probe line of the
# container whose fields satisfy the awk COND
probe_of() {
	local cid=${ctr_ids[$1]} line end=$((SECONDS + $2))
	while [ "$SECONDS" -le "$end" ]; do
		line=$(cri logs "$cid" 2>/dev/null | awk '/^probe=/ {
			delete v
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
			if ('"$3"') { print; exit }
		}')
		[ -n "$line" ] && { echo "$line"; return 0; }
		sleep 0.5
	done
	return 1
}

# ctr_state NAME/CONTAINER: its state and its log's last lines, for a
# failure's message
ctr_state() {
	local cid=${ctr_ids[$1]}
	echo "$(cri inspect -o json "$cid" | jq -r '.status | "\(.state) exit \(.exitCode) \(.reason)"'):" \
		"$(cri logs "$cid" 2>&1 | tail -n 3 | tr '\n' ' ')"
}

# status_of FIELD CGROUP: that field of the policy mthpctl status shows on
# CGROUP ("" if it has none)
status_of() {
	"$M" -j status | jq -r --arg cg "$2" --arg f "$1" '.policies[] | select(.cgroup == $cg) | .[$f]'
}

wait_status() { # FIELD CGROUP VALUE SECONDS: until status_of gives VALUE
	local end=$((SECONDS + $4))
	while [ "$SECONDS" -le "$end" ]; do
		[ "$(status_of "$1" "$2")" = "$3" ] && return 0
		sleep 0.5
	done
	return 1
}

# attached CGROUP: the policy on it ("" if none)
attached() { status_of policy "$1"; }
wait_attached() { wait_status policy "$@"; } # CGROUP POLICY SECONDS

# (a test after one that failed may find no sandbox: a failure, not an
# unbound variable that ends the run)
remove_pod() { [ -n "$1" ] && cri stopp "$1" >/dev/null && cri rmp "$1" >/dev/null; }

# --- the tests, most important first -----------------------------------------


# An annotated pod on a madvise host: its container's process gets 2 MiB
# folios; a pod without the annotation gets the node default (none: 4 KiB).
t_annotated_pod() {
	local la lb cg
	run_pod annotated 1 '{"mthpctl.io/policy": "fixed max-size=2M"}' app || fail "pod annotated did not start" || return 1
	run_pod plain 2 '{}' app || fail "pod plain did not start" || return 1
	la=$(probe_of annotated/app 60 'v["o9"] > 0') ||
		fail "annotated pod: no 2M folios in 60 s: $(ctr_state annotated/app)" || return 1
	[[ $la == *" o9=2048 "* ]] || fail "annotated pod: not all 2048 pages in 2M folios: $la" || return 1
	lb=$(probe_of plain/app 60 '1') || fail "plain pod: no probe in 60 s" || return 1
	[[ $lb == *" max_order=0 "* ]] || fail "plain pod on a madvise host got large folios: $lb" || return 1
	[ "$(attached "$(pod_cgroup 1)")" = fixed ] || fail "status: no fixed policy on $(pod_cgroup 1)" || return 1
	cg=$(cgroup_of_ctr "${ctr_ids[annotated/app]}")
	[ "$cg" = "$(ctr_cgroup 1 "${ctr_ids[annotated/app]}")" ] ||
		fail "the container runs in $cg, not in $(ctr_cgroup 1 "${ctr_ids[annotated/app]}")" || return 1
	[ "$(plugin_seccomp)" = 2 ] || fail "the plugin does not run under the chart's seccomp profile (Seccomp: $(plugin_seccomp))" || return 1
	remove_pod "${sb_of[plain]:-}"
	note "annotated: $(grep -o 'o9=[0-9]*' <<<"$la") of 2048 pages in 2M folios; plain: $(grep -o 'max_order=[0-9]*' <<<"$lb"); plugin under seccomp filter mode (RuntimeDefault)"
	note "$driver driver: the container runs in $cg"
	find "$(dirname "$(pod_cgroup 1)")" -maxdepth 2 -type d >"$logs/pod-cgroups.txt"
}

# /metrics has the annotated pod's series, and promtool accepts it.
t_metrics() {
	local m
	m=$(metrics) || fail "no answer on :9818/metrics" || return 1
	grep -q '^mthpctl_pod_policy_info{.*namespace="default",object_hash="[0-9a-f]\{16\}",pod="annotated",policy="fixed",scope="pod"} 1$' <<<"$m" ||
		fail "no mthpctl_pod_policy_info of the annotated pod: $(grep mthpctl_pod_policy_info <<<"$m")" || return 1
	grep -q '^mthpctl_nri_connected 1$' <<<"$m" || fail "mthpctl_nri_connected is not 1" || return 1
	grep -q '^mthpctl_nri_kernel_supported 1$' <<<"$m" || fail "mthpctl_nri_kernel_supported is not 1" || return 1
	grep -q '^mthpctl_nri_node_ready{reason=""} 1$' <<<"$m" ||
		fail "mthpctl_nri_node_ready is not 1: $(grep '^mthpctl_nri_node_ready' <<<"$m")" || return 1
	promtool check metrics <<<"$m" >"$logs/promtool.out" 2>&1 ||
		fail "promtool check metrics: $(head -n 3 "$logs/promtool.out")" || return 1
	note "$(grep -c '^mthpctl_' <<<"$m") series; promtool accepts them"
}

# A container's own annotation: only its cgroup gets the policy.
t_per_container() {
	local big small lb ls
	run_pod split 3 '{"policy.mthpctl.io/container.big": "fixed max-size=2M"}' big small ||
		fail "pod split did not start" || return 1
	big=$(ctr_cgroup 3 "${ctr_ids[split/big]}")
	small=$(ctr_cgroup 3 "${ctr_ids[split/small]}")
	[ "$(cgroup_of_ctr "${ctr_ids[split/big]}")" = "$big" ] ||
		fail "container big runs in $(cgroup_of_ctr "${ctr_ids[split/big]}"), not in $big" || return 1
	lb=$(probe_of split/big 60 'v["o9"] > 0') || fail "container big: no 2M folios in 60 s" || return 1
	ls=$(probe_of split/small 60 '1') || fail "container small: no probe" || return 1
	[[ $ls == *" max_order=0 "* ]] || fail "container small got large folios: $ls" || return 1
	[ "$(attached "$big")" = fixed ] || fail "no policy on big's cgroup $big" || return 1
	[ -z "$(attached "$small")" ] && [ -z "$(attached "$(pod_cgroup 3)")" ] ||
		fail "a policy on small's or the pod's cgroup" || return 1
	remove_pod "${sb_of[split]:-}"
	note "big: $(grep -o 'o9=[0-9]*' <<<"$lb"); small: $(grep -o 'max_order=[0-9]*' <<<"$ls"); only $big attached"
}

# A malformed annotation, and a key of the old two-slash form (which
# crictl passes and the API server would refuse): the pod runs, one log
# line each, an error metric.
t_malformed() {
	local st lines m
	run_pod malformed 4 '{"mthpctl.io/policy": "fixed", "mthpctl.io/policy/container.app": "never"}' app ||
		fail "pod malformed did not start" || return 1
	st=$(cri inspect -o json "${ctr_ids[malformed/app]}" | jq -r .status.state)
	[ "$st" = CONTAINER_RUNNING ] || fail "the container is $st" || return 1
	lines=$(plugin_log | grep -c 'mthpctl.io/policy="fixed"')
	[ "$lines" = 1 ] || fail "$lines log lines about the annotation, want 1" || return 1
	lines=$(plugin_log | grep -c 'mthpctl.io/policy/container.app="never" ignored: .* write policy.mthpctl.io/container.app')
	[ "$lines" = 1 ] || fail "$lines log lines about the old key, want 1" || return 1
	m=$(metrics) || fail "no answer on :9818/metrics" || return 1
	grep -q '^mthpctl_nri_attach_errors_total{reason="annotation"} 2$' <<<"$m" ||
		fail "want mthpctl_nri_attach_errors_total{reason=\"annotation\"} 2: $(grep '^mthpctl_nri_attach_errors' <<<"$m" | tr '\n' ' ')" ||
		return 1
	remove_pod "${sb_of[malformed]:-}"
	note "$(plugin_log | grep 'mthpctl.io/policy="fixed"' | cut -c1-160)"
	note "$(plugin_log | grep 'two slashes' | cut -c1-160)"
}

# Pod stop + remove: no policy, no pins left.
t_stop_remove() {
	local cg=$(pod_cgroup 1) id
	id=$(stat -c %i "$cg")
	remove_pod "${sb_of[annotated]:-}" || fail "crictl stopp/rmp failed" || return 1
	# (the detach runs in the plugin's worker: a moment under TCG)
	wait_attached "$cg" "" 30 || fail "a policy is left on $cg" || return 1
	[ ! -e "/sys/fs/bpf/mthpctl/cg-$id" ] || fail "pins left: $(ls "/sys/fs/bpf/mthpctl/cg-$id")" || return 1
	note "no policy and no /sys/fs/bpf/mthpctl/cg-$id after stopp + rmp"
}

# The sandbox re-created in the kubelet's order after its pause process
# died (or the node rebooted): the new sandbox runs in the same pod
# cgroup, and the old one, never stopped before, is stopped and removed
# after the new one has its policy (the kubelet's garbage collection;
# containerd stops a sandbox again before removing it). The policy stays,
# with its pins. (The plugin before issue 33's fix kept its state per
# sandbox and detached the pod cgroup at the old sandbox's stop: here the
# policy was gone after the stopp below.)
t_sandbox_recreated() {
	local cg=$(pod_cgroup 5) pj old new pid id end st
	pj=$(pod_json again 5 '{"mthpctl.io/policy": "never"}')
	old=$(cri runp "$pj") || fail "first sandbox" || return 1
	wait_attached "$cg" never 30 || fail "no policy on $cg" || return 1
	id=$(stat -c %i "$cg")
	# its pause process dies: the sandbox is NotReady, not stopped
	pid=$(cri inspectp -o json "$old" | jq -r .info.pid)
	[ "${pid:-0}" -gt 1 ] && kill -9 "$pid" || fail "no pause process of ${old:0:12} ($pid)" || return 1
	# (with the systemd driver containerd's handling of the exit can
	# take longer than its own 10 s deadline under TCG: inspectp fails
	# meanwhile, and is asked again)
	end=$((SECONDS + 120))
	while [ "$SECONDS" -le "$end" ]; do
		st=$(cri inspectp -o json "$old" 2>/dev/null | jq -r .status.state)
		[ "$st" = SANDBOX_NOTREADY ] && break
		sleep 1
	done
	[ "$st" = SANDBOX_NOTREADY ] || fail "the old sandbox is $st after its pause was killed" || return 1
	new=$(cri runp "$(pod_json again 5 '{"mthpctl.io/policy": "never"}' 1)") || fail "second sandbox" || return 1
	sb_of[again]=$new
	wait_attached "$cg" never 30 || fail "no policy with the second sandbox" || return 1
	# the garbage collection of the old one: its stop, then its removal
	cri stopp "$old" >/dev/null || fail "stopp of the old sandbox" || return 1
	cri rmp "$old" >/dev/null || fail "rmp of the old sandbox" || return 1
	# (a detach would run in the worker: give it time)
	sleep 3
	[ "$(attached "$cg")" = never ] || fail "the old sandbox's stop or removal took the policy away" || return 1
	[ -e "/sys/fs/bpf/mthpctl/cg-$id/link" ] || fail "the pins of cgroup $id are gone" || return 1
	note "sandbox ${old:0:12} NotReady, ${new:0:12} running with the policy, then ${old:0:12} stopped and removed: never stays on $cg"
}

# containerd restarted: the plugin connects again and goes on.
t_containerd_restart() {
	local n
	n=$(plugin_log | grep -c "connected to containerd")
	stop_containerd
	start_containerd || fail "containerd did not start again" || return 1
	wait_log "connected to containerd" $((n + 1)) 60 ||
		fail "the plugin did not connect again: $(plugin_log | tail -n 3)" || return 1
	run_pod after-restart 6 '{"mthpctl.io/policy": "fixed max-size=64K"}' ||
		fail "pod after-restart did not start" || return 1
	wait_attached "$(pod_cgroup 6)" fixed 30 || fail "no policy on the pod started after the restart" || return 1
	note "$(plugin_log | grep -c 'connecting again') reconnect(s); the next pod got its policy"
}

# A pod removed while the plugin is down: its policy is detached when the
# plugin is back.
t_removed_while_down() {
	local cg=$(pod_cgroup 5)
	stop_plugin || fail "stopping the plugin" || return 1
	remove_pod "${sb_of[again]:-}" || fail "removing pod again" || return 1
	[ "$(attached "$cg")" = never ] || fail "detached with the plugin down?" || return 1
	start_plugin "$e2e/plugin/configmap" || fail "the plugin did not start again" || return 1
	wait_attached "$cg" "" 30 || fail "the policy of the removed pod stays on $cg" || return 1
	note "reconciled at start: $(plugin_log | grep 'synchronize:' | tail -n 1 | cut -c1-120)"
}

# A pod removed while the plugin is down, and its cgroup with it (as the
# kubelet does after the sandbox's removal): mthpctl status knows its
# pins by id only; the plugin back removes them, from its records on the
# host (/run/mthpctl-nri).
t_removed_cgroup_while_down() {
	local cg=$(pod_cgroup 8) id
	run_pod gone 8 '{"mthpctl.io/policy": "fixed max-size=64K"}' || fail "pod gone did not start" || return 1
	wait_attached "$cg" fixed 30 || fail "no policy on $cg" || return 1
	id=$(stat -c %i "$cg")
	[ -e "/run/mthpctl-nri/$id" ] || fail "no record /run/mthpctl-nri/$id: $(ls /run/mthpctl-nri)" || return 1
	stop_plugin || fail "stopping the plugin" || return 1
	remove_pod "${sb_of[gone]:-}" || fail "removing pod gone" || return 1
	remove_cgroup 8 || fail "removing $cg" || return 1
	[ ! -e "$cg" ] || fail "$cg stays after its removal" || return 1
	[ -e "/sys/fs/bpf/mthpctl/cg-$id" ] || fail "the pins went with the plugin down?" || return 1
	start_plugin "$e2e/plugin/configmap" || fail "the plugin did not start again" || return 1
	local end=$((SECONDS + 30))
	while [ -e "/sys/fs/bpf/mthpctl/cg-$id" ] && [ "$SECONDS" -le "$end" ]; do sleep 0.5; done
	[ ! -e "/sys/fs/bpf/mthpctl/cg-$id" ] || fail "pins left: /sys/fs/bpf/mthpctl/cg-$id" || return 1
	[ ! -e "/run/mthpctl-nri/$id" ] || fail "the record /run/mthpctl-nri/$id stays" || return 1
	note "cgroup $id removed with the plugin down: its pins removed at the start; $(plugin_log | grep 'synchronize:' | tail -n 1 | cut -c1-120)"
}

# object_of CGROUP: the object its policy runs (mthpctl status' object_hash)
object_of() { status_of object_hash "$1"; }
wait_object() { wait_status object_hash "$@"; } # CGROUP HASH SECONDS

# An upgrade: the plugin from an image whose mthpctl attaches another
# policy object (mthpctl-nri:e2e-object2, scripts/nri-e2e.sh) moves a
# running pod to it with the same parameters, says so in one log line and
# in /metrics; back on the first image (a rollback) the pod returns to the
# first object.
t_upgrade_object() {
	local cg=$(pod_cgroup 9) first second id m
	first=$("$M" -j version | jq -r .builtin_object_hash)
	second=$(cat "$e2e/plugin2/object_hash") || fail "no $e2e/plugin2/object_hash" || return 1
	run_pod upgraded 9 '{"mthpctl.io/policy": "fixed max-size=2M"}' app || fail "pod upgraded did not start" || return 1
	wait_attached "$cg" fixed 30 || fail "no policy on $cg" || return 1
	id=$(stat -c %i "$cg")
	[ "$(object_of "$cg")" = "$first" ] ||
		fail "the pod runs object $(object_of "$cg"), the plugin's mthpctl attaches $first" || return 1
	jq '.image.image = "mthpctl-nri:e2e-object2"' "$e2e/plugin/container.json" >"$W/upgrade-container.json"
	stop_plugin || fail "stopping the plugin" || return 1
	start_plugin "$e2e/plugin/configmap" "$W/upgrade-container.json" ||
		fail "the plugin of the second image did not start" || return 1
	wait_object "$cg" "$second" 60 ||
		fail "the pod runs object $(object_of "$cg") after the upgrade, want $second" || return 1
	"$M" -j status | jq -e --arg cg "$cg" '.policies[] | select(.cgroup == $cg) |
		.policy == "fixed" and .params.max_size_bytes == 2097152 and .attached' >/dev/null ||
		fail "the upgraded policy is not fixed 2M: $("$M" -j status --cgroup "$cg")" || return 1
	[ "$(stat -c %i "$cg")" = "$id" ] && [ -e "/sys/fs/bpf/mthpctl/cg-$id/link" ] ||
		fail "no pins of cgroup $id after the upgrade" || return 1
	# (the log line follows the attach)
	wait_log "pod default/upgraded: policy" 1 30
	[ "$(plugin_log | grep -c "pod default/upgraded: .* replaced by this mthpctl's object $second (it ran object $first)")" = 1 ] ||
		fail "want one log line of the pod's upgrade: $(plugin_log | grep -i replaced)" || return 1
	m=$(metrics) || fail "no answer on :9818/metrics" || return 1
	grep -q "^mthpctl_pod_policy_info{.*object_hash=\"$second\",pod=\"upgraded\",.*} 1\$" <<<"$m" ||
		fail "no mthpctl_pod_policy_info of the upgraded pod with object_hash $second: $(grep 'pod="upgraded"' <<<"$m" | grep policy_info)" ||
		return 1
	note "$(plugin_log | grep "pod default/upgraded: .* replaced by this mthpctl's object" | cut -c1-200)"
	# the rollback
	stop_plugin || fail "stopping the plugin" || return 1
	start_plugin "$e2e/plugin/configmap" || fail "the plugin of the first image did not start again" || return 1
	wait_object "$cg" "$first" 60 ||
		fail "the pod runs object $(object_of "$cg") after the rollback, want $first" || return 1
	remove_pod "${sb_of[upgraded]:-}"
	note "object $first -> $second (upgrade) -> $first (rollback) on $cg, fixed 2M throughout"
}

# mthpctl slow (a wrapper sleeping 3 s): pods start, the plugin stays
# connected, the policies catch up.
t_slow_mthpctl() {
	local cfg=$W/slow-config dir=$W/slow t0 t1 n
	mkdir -p "$cfg" "$dir"
	cp /bin/busybox "$dir/busybox"
	printf '#!/slow/busybox sh\n/slow/busybox sleep 3\nexec /usr/local/sbin/mthpctl "$@"\n' >"$dir/mthpctl"
	chmod +x "$dir/mthpctl"
	sed 's|^mthpctl:.*|mthpctl: /slow/mthpctl|' "$e2e/plugin/configmap/config.yaml" >"$cfg/config.yaml"
	jq --arg d "$dir" '.mounts += [{container_path: "/slow", host_path: $d, readonly: true}]' \
		"$e2e/plugin/container.json" >"$W/slow-container.json"
	stop_plugin || fail "stopping the plugin" || return 1
	start_plugin "$cfg" "$W/slow-container.json" || fail "the slow plugin did not start" || return 1
	n=$(plugin_log | grep -c 'connecting again')
	t0=$(date +%s)
	run_pod slow 7 '{"mthpctl.io/policy": "fixed max-size=2M"}' app || fail "pod slow did not start" || return 1
	t1=$(date +%s)
	wait_attached "$(pod_cgroup 7)" fixed 60 || fail "the policy did not catch up in 60 s" || return 1
	probe_of slow/app 60 'v["o9"] > 0' >/dev/null || fail "no 2M folios after the catch-up" || return 1
	[ "$(plugin_log | grep -c 'connecting again')" = "$n" ] || fail "the plugin was disconnected" || return 1
	note "pod started in $((t1 - t0)) s with a 3 s mthpctl; the policy caught up; still connected"
}

tests=(annotated_pod metrics per_container malformed stop_remove sandbox_recreated
       containerd_restart removed_while_down removed_cgroup_while_down upgrade_object slow_mthpctl)
[ $# -gt 0 ] && tests=("$@")

setup
echo "# containerd $(containerd --version | awk '{print $3}'), $(runc --version | head -n1), crictl $(sed -n 's/.*-crictl-\(v[0-9.]*\).*/\1/p' <<<"$rtbin"), $driver driver$([ "$driver" = systemd ] && echo ", $(systemctl --version | head -n1)")"
# the chart's RuntimeDefault profile needs seccomp filters (kernel/config)
grep -q '^Seccomp:' /proc/self/status ||
	{ echo "nri-e2e: this kernel lacks CONFIG_SECCOMP_FILTER (build kernel/config)" >&2; restore; exit 1; }
for t in "${tests[@]}"; do
	why=
	start=$(date +%s)
	if "t_$t"; then
		passed=$((passed + 1))
		echo "ok - $t ($(( $(date +%s) - start )) s)"
	else
		failed=$((failed + 1))
		echo "not ok - $t: ${why:-failed}"
	fi
done
plugin_log >"$logs/plugin.log" 2>&1
if [ "$driver" = systemd ]; then
	# what systemd made of the pods, and its journal (runc's units)
	systemctl list-units --all --no-pager 'kubepods*' 'cri-containerd-*' >"$logs/units.txt" 2>&1
	journalctl -b --no-pager >"$logs/journal.txt" 2>&1
fi
restore
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
