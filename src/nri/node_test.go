// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Issue 45, item 5: a node that does not suit the plugin (cgroup v1, no
// memory controller, no bpffs) and a pod cgroup that is not where the
// plugin looks are said once, in the log and in /metrics.
package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"
)

func TestCheckNode(t *testing.T) {
	const ext4 = 0xef53
	for _, tc := range []struct {
		name        string
		root, bpf   int64 // file system types; 0: statfs fails
		controllers string
		reason      string
		says        string
	}{
		{"cgroup2", cgroup2Magic, bpffsMagic, "cpuset cpu io memory pids", "", ""},
		{"no root", 0, bpffsMagic, "", nodeNoCgroupRoot, "mounted from the host"},
		{"v1", cgroup1Magic, bpffsMagic, "", nodeCgroupV1, "is cgroup v1"},
		{"v1 hierarchies on a tmpfs", tmpfsMagic, bpffsMagic, "", nodeCgroupV1, "systemd.unified_cgroup_hierarchy=1"},
		{"ext4", ext4, bpffsMagic, "", nodeNotCgroup2, "not a cgroup2 mount (file system type 0xef53)"},
		{"no controllers file", cgroup2Magic, bpffsMagic, "-", nodeNotCgroup2, "cgroup.controllers"},
		{"no memory", cgroup2Magic, bpffsMagic, "cpu io pids", nodeNoMemory, `cgroup.controllers: "cpu io pids"`},
		{"bpf dir not a bpffs", cgroup2Magic, tmpfsMagic, "memory", nodeNoBPFFS, "not a bpffs mount"},
		{"no bpf dir", cgroup2Magic, 0, "memory", nodeNoBPFFS, "mount -t bpf bpf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root, bpf := filepath.Join(dir, "cgroup"), filepath.Join(dir, "bpf")
			os.Mkdir(root, 0o755)
			if tc.controllers != "-" {
				os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte(tc.controllers+"\n"), 0o644)
			}
			types := map[string]int64{root: tc.root, bpf: tc.bpf}
			reason, msg := checkNode(nodeProbe{cgroupRoot: root, bpffs: bpf, fsType: func(p string) (int64, error) {
				if types[p] == 0 {
					return 0, &os.PathError{Op: "statfs", Path: p, Err: os.ErrNotExist}
				}
				return types[p], nil
			}})
			if reason != tc.reason || !strings.Contains(msg, tc.says) {
				t.Fatalf("checkNode: %q, %q; want %q saying %q", reason, msg, tc.reason, tc.says)
			}
			if reason != "" && !strings.Contains(msg, root) && !strings.Contains(msg, bpf) {
				t.Errorf("the message names neither path: %q", msg)
			}
		})
	}
}

// On a node without cgroup2 the plugin stays idle: one log line names
// the cause, mthpctl_nri_node_ready is 0 with the reason, no attach
// runs; a reconnect says nothing new; once the node suits it (checked at
// each connect) the pods get their policies.
func TestNodeNotSuitedIdle(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	b.stopPlugin()
	b.nodeTypes = map[string]int64{b.root: tmpfsMagic}
	b.startPlugin(Config{Default: "auto"})
	pod := b.newPod(62, nil, true)
	b.run(pod)
	b.create(pod, "app")
	b.reconnect()
	b.wantState("")
	for _, c := range f.takeCalls() {
		if strings.HasPrefix(c, "attach") {
			t.Fatalf("attach on a node without cgroup2: %q", c)
		}
	}
	if l := b.log.lines("does not suit the plugin (cgroup-v1)"); len(l) != 1 || !strings.Contains(l[0], b.root) {
		t.Fatalf("want one line naming cgroup v1 and the root, log:\n%s", b.log)
	}
	if _, body := scrape(t, b.plugin); !strings.Contains(body, "mthpctl_nri_node_ready{reason=\"cgroup-v1\"} 0\n") {
		t.Fatalf("/metrics lacks mthpctl_nri_node_ready{reason=\"cgroup-v1\"} 0:\n%s", body)
	}
	b.fakeNode(b.plugin, nil)
	b.reconnect()
	b.wantState(systemdPodDir(62) + "=auto")
	if l := b.log.lines("suits the plugin now"); len(l) != 1 {
		t.Fatalf("want one line saying the node suits the plugin now, log:\n%s", b.log)
	}
	if _, body := scrape(t, b.plugin); !strings.Contains(body, "mthpctl_nri_node_ready{reason=\"\"} 1\n") {
		t.Fatalf("/metrics lacks mthpctl_nri_node_ready{reason=\"\"} 1:\n%s", body)
	}
}

// A pod whose cgroup does not exist when its container starts (the
// plugin looks below another root, or the driver's path is not the one
// the runtime uses): one line naming the path and the root, the error
// counter's cgroup-missing, the pod's error series; not again at a
// reconnect.
func TestPodCgroupMissing(t *testing.T) {
	b := newBench(t, newFakeBackend(), Config{})
	pod := b.newPod(63, ann("auto"), false) // its directory is not made
	b.run(pod)
	ctr := b.create(pod, "app")
	b.start(pod, ctr)
	ctr.State = api.ContainerState_CONTAINER_RUNNING
	b.reconnect()
	b.wantState("")
	l := b.log.lines("does not exist while its container app starts")
	if len(l) != 1 || !strings.Contains(l[0], filepath.Join(b.root, systemdPodDir(63))) || !strings.Contains(l[0], b.root) {
		t.Fatalf("want one line naming the missing cgroup, log:\n%s", b.log)
	}
	if n := b.plugin.state().errors[reasonCgroupMissing]; n != 1 {
		t.Fatalf("cgroup-missing errors counted: %d, want 1", n)
	}
	wantPodErrors(t, b.plugin,
		`mthpctl_nri_pod_policy_error{container="",namespace="default",pod="web-63",reason="cgroup-missing",scope="pod"} 1`)
	if _, body := scrape(t, b.plugin); !strings.Contains(body, `mthpctl_nri_attach_errors_total{reason="cgroup-missing"} 1`+"\n") {
		t.Fatalf("/metrics lacks the cgroup-missing count:\n%s", body)
	}
}
