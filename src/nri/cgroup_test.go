// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

package main

import "testing"

func TestPodCgroup(t *testing.T) {
	const r = "/sys/fs/cgroup"
	for _, tc := range []struct {
		parent, ctr, pod, own string
	}{
		{ // systemd driver (containerd, CRI-O)
			parent: "kubepods-burstable-pod12ab.slice",
			ctr:    "kubepods-burstable-pod12ab.slice:cri-containerd:c0ffee",
			pod:    r + "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12ab.slice",
			own:    r + "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12ab.slice/cri-containerd-c0ffee.scope",
		},
		{ // systemd driver, the parent as the kubelet gives it (expanded)
			parent: "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12_ab.slice",
			ctr:    "kubepods-besteffort-pod12_ab.slice:cri-containerd:c0ffee",
			pod:    r + "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12_ab.slice",
			own:    r + "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12_ab.slice/cri-containerd-c0ffee.scope",
		},
		{ // guaranteed QoS: directly under kubepods.slice
			parent: "kubepods-pod9.slice",
			ctr:    "kubepods-pod9.slice:crio:abc",
			pod:    r + "/kubepods.slice/kubepods-pod9.slice",
			own:    r + "/kubepods.slice/kubepods-pod9.slice/crio-abc.scope",
		},
		{ // cgroupfs driver
			parent: "/kubepods/besteffort/pod12ab",
			ctr:    "/kubepods/besteffort/pod12ab/c0ffee",
			pod:    r + "/kubepods/besteffort/pod12ab",
			own:    r + "/kubepods/besteffort/pod12ab/c0ffee",
		},
	} {
		if got, err := podCgroupOfParent(r, tc.parent); err != nil || got != tc.pod {
			t.Errorf("podCgroupOfParent(%q) = %q, %v; want %q", tc.parent, got, err, tc.pod)
		}
		if got, err := podCgroupOfContainer(r, tc.ctr); err != nil || got != tc.pod {
			t.Errorf("podCgroupOfContainer(%q) = %q, %v; want %q", tc.ctr, got, err, tc.pod)
		}
		if got, err := containerCgroup(r, tc.ctr); err != nil || got != tc.own {
			t.Errorf("containerCgroup(%q) = %q, %v; want %q", tc.ctr, got, err, tc.own)
		}
	}
	for _, bad := range []string{"", "/", "a--b.slice", "-x.slice", "/../.."} {
		if got, err := podCgroupOfParent(r, bad); err == nil {
			t.Errorf("podCgroupOfParent(%q) = %q, accepted", bad, got)
		}
	}
	if got, err := podCgroupOfParent(r, "/../../etc/kubepods/pod1"); err != nil || got != r+"/etc/kubepods/pod1" {
		t.Errorf("a path climbing out of the root: %q, %v", got, err)
	}
	if _, err := podCgroupOfContainer(r, "a:b"); err == nil {
		t.Errorf("a two-part cgroups path accepted")
	}
}
