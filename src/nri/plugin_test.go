// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
)

func ann(v string) map[string]string { return map[string]string{"mthpctl.io/policy": v} }

// An annotated pod's cgroup has its policy when the sandbox runs, before
// any container is created.
func TestAnnotationAttaches(t *testing.T) {
	b := newBench(t, newFakeBackend(), Config{})
	pod := b.newPod(1, ann("fixed max-size=64K"), true)
	b.run(pod)
	b.wantState(systemdPodDir(1) + "=fixed:65536")
	b.create(pod, "app")
	b.wantState(systemdPodDir(1) + "=fixed:65536")
	// the container event found it in place: no second attach
	for _, c := range b.fake.takeCalls() {
		if strings.HasPrefix(c, "attach") && strings.Contains(c, "replace") {
			t.Fatalf("an attached, unchanged policy was attached again: %v", c)
		}
	}
}

// A pod cgroup that does not exist yet when the sandbox runs (a cgroupfs
// driver here) gets its policy at the first container's creation.
func TestCgroupfsAttachAtCreateContainer(t *testing.T) {
	b := newBench(t, newFakeBackend(), Config{})
	pod := b.newPod(2, ann("auto max-size=2M"), false)
	pod.Linux.CgroupParent = "/kubepods/burstable/pod" + podUID(2)
	b.run(pod)
	b.wantState("")
	b.mkdir("kubepods/burstable/pod" + podUID(2))
	b.create(pod, "app")
	b.wantState("kubepods/burstable/pod" + podUID(2) + "=auto:2097152")
}

// A changed annotation replaces the policy, through UpdatePodSandbox or
// the next container event; one policy stays on the cgroup.
func TestUpdateReplaces(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	pod := b.newPod(3, ann("auto"), true)
	b.run(pod)
	b.wantState(systemdPodDir(3) + "=auto")
	f.takeCalls()

	pod.Annotations = ann("fixed max-size=16K")
	b.update(pod)
	b.wantState(systemdPodDir(3) + "=fixed:16384")
	calls := f.takeCalls()
	if len(calls) != 1 || !strings.HasSuffix(calls[0], "fixed max-size=16K replace") {
		t.Fatalf("update: calls %q, want one attach --replace", calls)
	}

	pod.Annotations = ann("never")
	b.create(pod, "sidecar")
	b.wantState(systemdPodDir(3) + "=never")
}

// A removed pod leaves no policy behind, and its removal after the stop
// is quiet.
func TestRemovalDetaches(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	keep := b.newPod(4, ann("auto"), true)
	gone := b.newPod(5, ann("fixed max-size=64K"), true)
	b.run(keep)
	b.run(gone)
	b.create(gone, "app")
	b.wantState(systemdPodDir(4) + "=auto " + systemdPodDir(5) + "=fixed:65536")
	// detached at the stop, while the kubelet has not removed the cgroup
	if err := b.rt.StopPodSandbox(context.Background(), &api.StopPodSandboxRequest{Pod: gone}); err != nil {
		t.Fatal(err)
	}
	b.wantState(systemdPodDir(4) + "=auto")
	b.remove(gone)
	b.wantState(systemdPodDir(4) + "=auto")
	if l := b.log.lines("cannot"); len(l) > 0 {
		t.Fatalf("removal logged errors: %q", l)
	}
}

// A malformed annotation never fails the pod: its sandbox and containers
// are created, one log line names the fix, and the node default applies.
func TestMalformedAnnotation(t *testing.T) {
	for _, tc := range []struct {
		value, fix string
	}{
		{"fixed", `fixed needs max-size: write e.g. "fixed max-size=64K"`},
		{"sometimes", `unknown policy "sometimes"`},
		{"fixed max-size=3K", "refused by mthpctl: --max-size must be a power of two"},
		{"auto window=1", "a duration needs a unit"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			b := newBench(t, newFakeBackend(), Config{Default: "auto"})
			pod := b.newPod(6, ann(tc.value), true)
			b.run(pod)
			b.create(pod, "app")
			b.create(pod, "sidecar")
			b.wantState(systemdPodDir(6) + "=auto")
			lines := b.log.lines("mthpctl.io/policy")
			if len(lines) != 1 {
				t.Fatalf("want one log line about the annotation, got %d:\n%s", len(lines), b.log)
			}
			if !strings.Contains(lines[0], tc.fix) || !strings.Contains(lines[0], "default/web-6") ||
				!strings.Contains(lines[0], `the pod runs with the node default "auto"`) {
				t.Fatalf("log line %q does not name the pod, the fix (%q) and the fallback", lines[0], tc.fix)
			}
			t.Log(lines[0])
		})
	}
}

// Pods without the annotation get the node default; "none" opts out.
func TestNodeDefault(t *testing.T) {
	b := newBench(t, newFakeBackend(), Config{Default: "fixed max-size=32K"})
	plain := b.newPod(7, nil, true)
	out := b.newPod(8, ann("none"), true)
	b.run(plain)
	b.run(out)
	b.wantState(systemdPodDir(7) + "=fixed:32768")
}

// A restarted plugin reconciles: an unchanged pod's policy is kept (no
// attach), a pod removed while it was away loses its policy, a pod
// started meanwhile gets one, a changed spec is replaced, and a policy
// that is not on a pod cgroup is left alone.
func TestRestartReconciles(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	same := b.newPod(10, ann("auto"), true)
	gone := b.newPod(11, ann("fixed max-size=64K"), true)
	changed := b.newPod(12, ann("auto"), true)
	b.run(same)
	b.create(same, "app")
	b.run(gone)
	b.run(changed)
	b.mkdir("system.slice/redis.service")
	if err := f.Attach(nil, b.root+"/system.slice/redis.service", Spec{Policy: "never"}, false); err != nil {
		t.Fatal(err)
	}
	b.wantState(systemdPodDir(10) + "=auto " + systemdPodDir(11) + "=fixed:65536 " +
		systemdPodDir(12) + "=auto system.slice/redis.service=never")

	b.stopPlugin()
	b.forget(gone)
	started := b.newPod(13, ann("fixed max-size=16K"), true)
	b.add(started)
	changed.Annotations = ann("never")
	f.takeCalls()

	b.startPlugin(Config{})
	b.wantState(systemdPodDir(10) + "=auto " + systemdPodDir(12) + "=never " +
		systemdPodDir(13) + "=fixed:16384 system.slice/redis.service=never")
	for _, c := range f.takeCalls() {
		if strings.Contains(c, systemdSlice(10)) {
			t.Fatalf("the unchanged pod's policy was touched: %q", c)
		}
	}
	// and the restarted plugin goes on: the removal detaches
	b.remove(same)
	b.wantState(systemdPodDir(12) + "=never " + systemdPodDir(13) + "=fixed:16384 system.slice/redis.service=never")
}

// A node with more pods than NRI's request timeout (2s) has time for
// attaches: Synchronize answers after one status, the attaches follow,
// and the plugin stays connected for the next pod.
func TestSynchronizeManyPods(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	b.stopPlugin()
	var want []string
	for n := 100; n < 140; n++ {
		b.add(b.newPod(n, ann("auto"), true))
		want = append(want, systemdPodDir(n)+"=auto")
	}
	f.delay = 75 * time.Millisecond // 40 pods: 3s
	b.startPlugin(Config{})
	b.wantState(strings.Join(want, " "))
	late := b.newPod(140, ann("never"), true)
	b.run(late)
	b.wantState(strings.Join(append(want, systemdPodDir(140)+"=never"), " "))
}
