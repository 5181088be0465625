// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// A pod's cgroup directory from what NRI passes: the sandbox's
// CgroupParent or a container's CgroupsPath, in the systemd driver's form
// ("kubepods-burstable-pod<UID>.slice", "<slice>:<prefix>:<name>") or the
// cgroupfs driver's ("/kubepods/burstable/pod<UID>[/<container>]").
package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// expandSlice turns a systemd slice name into its path below the cgroup2
// root: "a-b-c.slice" is a.slice/a-b.slice/a-b-c.slice ("-.slice" is
// the root itself).
func expandSlice(slice string) (string, error) {
	if !strings.HasSuffix(slice, ".slice") || strings.Contains(slice, "/") {
		return "", fmt.Errorf("%q is not a systemd slice name", slice)
	}
	name := strings.TrimSuffix(slice, ".slice")
	if name == "-" {
		return "", nil
	}
	if name == "" || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--") {
		return "", fmt.Errorf("%q is not a valid slice name", slice)
	}
	var parts []string
	prefix := ""
	for _, w := range strings.Split(name, "-") {
		if prefix != "" {
			prefix += "-"
		}
		prefix += w
		parts = append(parts, prefix+".slice")
	}
	return filepath.Join(parts...), nil
}

// podCgroupOfParent resolves a sandbox's CgroupParent (the pod cgroup).
func podCgroupOfParent(root, parent string) (string, error) {
	if parent == "" {
		return "", fmt.Errorf("no cgroup parent")
	}
	if strings.HasSuffix(parent, ".slice") && !strings.Contains(parent, "/") {
		rel, err := expandSlice(parent)
		if err != nil {
			return "", err
		}
		return filepath.Join(root, rel), nil
	}
	return joinUnder(root, parent)
}

// podCgroupOfContainer resolves the pod cgroup from a container's
// CgroupsPath: the slice of "slice:prefix:name", or the parent directory
// of a cgroupfs path.
func podCgroupOfContainer(root, cgroupsPath string) (string, error) {
	if cgroupsPath == "" {
		return "", fmt.Errorf("no cgroups path")
	}
	if parts := strings.Split(cgroupsPath, ":"); len(parts) == 3 {
		return podCgroupOfParent(root, parts[0])
	}
	if strings.Contains(cgroupsPath, ":") {
		return "", fmt.Errorf("%q is neither slice:prefix:name nor a path", cgroupsPath)
	}
	p, err := joinUnder(root, cgroupsPath)
	if err != nil {
		return "", err
	}
	return filepath.Dir(p), nil
}

// containerCgroup resolves a container's own cgroup directory: for the
// systemd form, "<prefix>-<name>.scope" in the slice.
func containerCgroup(root, cgroupsPath string) (string, error) {
	if parts := strings.Split(cgroupsPath, ":"); len(parts) == 3 {
		pod, err := podCgroupOfParent(root, parts[0])
		if err != nil {
			return "", err
		}
		return filepath.Join(pod, parts[1]+"-"+parts[2]+".scope"), nil
	}
	return joinUnder(root, cgroupsPath)
}

// joinUnder joins a cgroupfs path to root, refusing one that leaves it
// or is root itself.
func joinUnder(root, p string) (string, error) {
	clean := filepath.Clean("/" + p)
	if clean == "/" {
		return "", fmt.Errorf("%q is the cgroup root", p)
	}
	return filepath.Join(root, clean), nil
}

// ownPodCgroup refuses a pod cgroup that is not the pod's own: the root
// (a container path without a parent, "abc123", resolves to it), one
// directly below the root, or one whose name does not carry the pod's UID
// (pod<UID> for cgroupfs, pod<UID with _> for systemd), such as the
// /kubepods a kubelet with cgroupsPerQOS=false shares among all pods.
func ownPodCgroup(root, cg, uid string) error {
	root = filepath.Clean(root)
	if cg == root {
		return fmt.Errorf("is the cgroup root, not a pod's own cgroup (a cgroup path without a parent)")
	}
	if filepath.Dir(cg) == root {
		return fmt.Errorf("%s is directly below the cgroup root: not a pod's own cgroup", cg)
	}
	if uid == "" {
		return fmt.Errorf("the pod has no UID to tell its own cgroup by")
	}
	base := filepath.Base(cg)
	if !strings.Contains(base, uid) && !strings.Contains(base, strings.ReplaceAll(uid, "-", "_")) {
		return fmt.Errorf("%s does not carry the pod's UID %s: not the pod's own cgroup", cg, uid)
	}
	return nil
}
