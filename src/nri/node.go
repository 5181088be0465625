// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Whether the node is one the plugin can work on: the cgroup root is a
// cgroup2 mount with the memory controller, and bpffs is mounted where
// mthpctl pins. What is missing is named once in the log and in
// mthpctl_nri_node_ready's reason; the plugin then stays idle.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The reasons of mthpctl_nri_node_ready 0.
const (
	nodeNoCgroupRoot = "no-cgroup-root"       // the cgroup root cannot be read
	nodeCgroupV1     = "cgroup-v1"            // cgroup v1 or hybrid (a tmpfs of v1 hierarchies)
	nodeNotCgroup2   = "not-cgroup2"          // some other file system
	nodeNoMemory     = "no-memory-controller" // cgroup2 without the memory controller
	nodeNoBPFFS      = "no-bpffs"             // no bpffs at /sys/fs/bpf
)

// File system magic numbers (linux/magic.h).
const (
	cgroup2Magic = 0x63677270
	cgroup1Magic = 0x27e0eb
	tmpfsMagic   = 0x01021994
	bpffsMagic   = 0xcafe4a11
)

// defaultBPFFS is where mthpctl pins (/sys/fs/bpf/mthpctl).
const defaultBPFFS = "/sys/fs/bpf"

// fsType is the type of the file system path is on (statfs' f_type).
func fsType(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Type), nil
}

// nodeProbe is what checkNode looks at; tests give it a temporary
// directory as the cgroup root and a statfs of their own.
type nodeProbe struct {
	cgroupRoot string
	bpffs      string
	fsType     func(path string) (int64, error)
}

// checkNode says what the node lacks: a reason (nodeCgroupV1, ...) and a
// message naming the cause and the fix; "" if nothing.
func checkNode(np nodeProbe) (string, string) {
	ft := np.fsType
	if ft == nil {
		ft = fsType
	}
	root := filepath.Clean(np.cgroupRoot)
	t, err := ft(root)
	if err != nil {
		return nodeNoCgroupRoot, fmt.Sprintf("the cgroup root %s: %v (cgroupRoot names the host's cgroup2 mount; "+
			"the plugin's container needs it mounted from the host)", root, err)
	}
	switch t {
	case cgroup2Magic:
	case cgroup1Magic, tmpfsMagic:
		return nodeCgroupV1, fmt.Sprintf("the cgroup root %s is cgroup v1 (or a hybrid of v1 and v2): mthpctl needs "+
			"the unified cgroup2 hierarchy (boot with systemd.unified_cgroup_hierarchy=1, or set cgroupRoot "+
			"to the cgroup2 mount)", root)
	default:
		return nodeNotCgroup2, fmt.Sprintf("the cgroup root %s is not a cgroup2 mount (file system type %#x): "+
			"set cgroupRoot to the host's cgroup2 mount", root, t)
	}
	b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return nodeNotCgroup2, fmt.Sprintf("the cgroup root %s: %v", root, err)
	}
	if !contains(strings.Fields(string(b)), "memory") {
		return nodeNoMemory, fmt.Sprintf("the cgroup root %s has no memory controller (cgroup.controllers: %q): "+
			"the policies sample each cgroup's memory; boot without cgroup_disable=memory", root,
			strings.TrimSpace(string(b)))
	}
	bpffs := np.bpffs
	if bpffs == "" {
		bpffs = defaultBPFFS
	}
	if t, err := ft(bpffs); err != nil || t != bpffsMagic {
		why := "not a bpffs mount"
		if err != nil {
			why = err.Error()
		}
		return nodeNoBPFFS, fmt.Sprintf("%s: %s: mthpctl pins the policies there (mount -t bpf bpf %s on the "+
			"host, and mount it into the plugin's container read-write)", bpffs, why, bpffs)
	}
	return "", ""
}
