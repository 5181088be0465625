// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

package main

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
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
			if n := b.plugin.state().errors[reasonAnnotation]; n != 1 {
				t.Fatalf("annotation errors counted: %d, want 1", n)
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

// Finding 1: the kubelet re-creates a pod's sandbox (its pause process
// died, the node rebooted) and later removes the old one, which
// containerd stops first: the pod cgroup both use keeps its policy.
func TestOldSandboxKeepsPolicy(t *testing.T) {
	b := newBench(t, newFakeBackend(), Config{})
	old := b.newPod(40, ann("fixed max-size=64K"), true)
	b.run(old)
	b.create(old, "app")
	newer := b.newPod(40, ann("fixed max-size=64K"), false)
	newer.Id = "sandbox-40-second"
	b.run(newer)
	b.create(newer, "app")
	b.wantState(systemdPodDir(40) + "=fixed:65536")
	b.remove(old) // StopPodSandbox, RemoveContainer, RemovePodSandbox
	b.wantState(systemdPodDir(40) + "=fixed:65536")
	// a restart lists both (the old one NotReady); the old one's removal
	// after it does not detach either
	b.add(old)
	b.stopPlugin()
	b.startPlugin(Config{})
	b.wantState(systemdPodDir(40) + "=fixed:65536")
	b.remove(old)
	b.wantState(systemdPodDir(40) + "=fixed:65536")
	// the last user gone, the policy goes
	b.remove(newer)
	b.wantState("")
}

// Finding 2: an attach slower than the runtime's request timeout (2s)
// does not hold up the hooks: RunPodSandbox answers within HookWaitMs,
// the plugin stays connected, the policy is attached after.
func TestSlowAttachHooksAnswer(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	f.mu.Lock()
	f.delay = 2500 * time.Millisecond
	f.mu.Unlock()
	pods := []*api.PodSandbox{b.newPod(41, ann("auto"), true), b.newPod(42, ann("never"), true)}
	for _, pod := range pods {
		start := time.Now()
		b.run(pod)
		b.create(pod, "app")
		if d := time.Since(start); d > 2500*time.Millisecond {
			t.Fatalf("RunPodSandbox + CreateContainer took %v with a 2.5s attach", d)
		}
	}
	b.wantState(systemdPodDir(41) + "=auto " + systemdPodDir(42) + "=never")
	// still connected: the next pod's event reaches the plugin
	f.mu.Lock()
	f.delay = 0
	f.mu.Unlock()
	late := b.newPod(43, ann("fixed max-size=16K"), true)
	b.run(late)
	b.wantState(systemdPodDir(41) + "=auto " + systemdPodDir(42) + "=never " + systemdPodDir(43) + "=fixed:16384")
}

// Finding 2: the runtime closes the plugin's connection (here: a request
// that took longer than the runtime's timeout, shortened to 300ms; a
// restart of containerd does the same): the plugin connects again by
// itself, reconciles, and the policy catches up.
func TestReconnects(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	// the bench's own plugin gone, and a runtime that never knew it
	b.stopPlugin()
	b.rt.Stop()
	adaptation.SetPluginRequestTimeout(300 * time.Millisecond)
	defer adaptation.SetPluginRequestTimeout(adaptation.DefaultPluginRequestTimeout)
	b.restartRuntime()
	reconnectMin, reconnectMax = 50*time.Millisecond, 200*time.Millisecond
	cfg := defaultConfig()
	cfg.CgroupRoot = b.root
	cfg.StateDir = filepath.Join(b.dir, "state")
	p, err := NewPlugin(cfg, f, log.New(b.log, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	b.fakeNode(p, nil)
	b.plugin = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		runConnected(ctx, p, []stub.Option{stub.WithPluginName("mthpctl"), stub.WithPluginIdx("50"),
			stub.WithSocketPath(filepath.Join(b.dir, "nri.sock"))}, log.New(b.log, "", 0))
		close(done)
	}()
	defer func() { cancel(); <-done }()
	waitFor(t, b, "synchronize:", 2)
	b.rt.BlockPluginSync().Unblock()

	f.mu.Lock()
	f.delay = time.Second
	f.mu.Unlock()
	b.run(b.newPod(44, ann("auto"), true)) // the runtime gives up on the plugin
	waitFor(t, b, "connecting again", 1)
	waitFor(t, b, "synchronize:", 3)
	b.rt.BlockPluginSync().Unblock()
	b.wantState(systemdPodDir(44) + "=auto")
	f.mu.Lock()
	f.delay = 0
	f.mu.Unlock()
	b.run(b.newPod(45, ann("never"), true))
	b.wantState(systemdPodDir(44) + "=auto " + systemdPodDir(45) + "=never")
}

// waitFor waits for n log lines with sub.
func waitFor(t *testing.T, b *bench, sub string, n int) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if len(b.log.lines(sub)) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no log line %q in 5s:\n%s", sub, b.log)
}

// Finding 3: a container cgroups path without a parent ("abc123", crictl
// without cgroup_parent) or a cgroup parent that is not the pod's own
// (cgroupsPerQOS=false: /kubepods) gets no policy: never the root, never
// a cgroup shared with other pods.
func TestRefusesCgroupsNotThePods(t *testing.T) {
	b := newBench(t, newFakeBackend(), Config{Default: "auto"})
	bare := b.newPod(46, ann("fixed max-size=64K"), false)
	bare.Linux.CgroupParent = ""
	b.run(bare)
	ctr := &api.Container{Id: "abc123", PodSandboxId: bare.Id, Name: "app",
		Linux: &api.LinuxContainer{CgroupsPath: "abc123"}}
	if _, err := b.rt.CreateContainer(context.Background(), &api.CreateContainerRequest{Pod: bare, Container: ctr}); err != nil {
		t.Fatal(err)
	}
	slash := b.newPod(47, nil, false)
	slash.Linux.CgroupParent = ""
	b.run(slash)
	ctr2 := &api.Container{Id: "def456", PodSandboxId: slash.Id, Name: "app",
		Linux: &api.LinuxContainer{CgroupsPath: "/def456"}}
	if _, err := b.rt.CreateContainer(context.Background(), &api.CreateContainerRequest{Pod: slash, Container: ctr2}); err != nil {
		t.Fatal(err)
	}
	shared := b.newPod(48, nil, false)
	shared.Linux.CgroupParent = "/kubepods/besteffort"
	b.run(shared)
	b.wantState("")
	for _, c := range b.fake.takeCalls() {
		if strings.HasPrefix(c, "attach") {
			t.Fatalf("attached to a cgroup not the pod's own: %q", c)
		}
	}
	if l := b.log.lines("not a pod's own cgroup"); len(l) != 2 {
		t.Fatalf("want a line for each of the two pods without a parent, log:\n%s", b.log)
	}
	if l := b.log.lines("does not carry the pod's UID"); len(l) != 1 {
		t.Fatalf("want a line for the pod with a shared cgroup parent, log:\n%s", b.log)
	}
	if n := b.plugin.state().errors[reasonCgroup]; n != 3 {
		t.Fatalf("cgroup errors counted: %d, want 3", n)
	}
}

// Finding 5: a pod whose cgroup the kubelet removed before the plugin
// detached (exit 4, "cgroup gone"): its pins are removed by cgroup id.
func TestRemovedCgroupPinsRemoved(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	pod := b.newPod(49, ann("auto"), true)
	b.run(pod)
	b.wantState(systemdPodDir(49) + "=auto")
	if err := os.Remove(filepath.Join(b.root, systemdPodDir(49))); err != nil {
		t.Fatal(err)
	}
	b.remove(pod)
	b.wantState("")
	// and one removed while the plugin was away, attached by it before
	other := b.newPod(50, ann("never"), true)
	b.run(other)
	b.wantState(systemdPodDir(50) + "=never")
	b.forget(other)
	if err := os.Remove(filepath.Join(b.root, systemdPodDir(50))); err != nil {
		t.Fatal(err)
	}
	b.reconnect()
	b.wantState("")
}

// Finding 6: on a kernel without the series the plugin stays idle: it
// says so once, in the log and in a metric, and runs no attach.
func TestIdleWithoutTheSeries(t *testing.T) {
	f := newFakeBackend()
	f.unsupported = true
	b := newBench(t, f, Config{Default: "auto"})
	for n := 51; n < 53; n++ {
		pod := b.newPod(n, ann("never"), true)
		b.run(pod)
		b.create(pod, "app")
	}
	b.wantState("")
	for _, c := range f.takeCalls() {
		if strings.HasPrefix(c, "attach") {
			t.Fatalf("attach on a kernel without bpf_mthp_ops: %q", c)
		}
	}
	if l := b.log.lines("no bpf_mthp_ops"); len(l) != 1 {
		t.Fatalf("want one line saying the plugin is idle, log:\n%s", b.log)
	}
	if s := b.plugin.state().supported; s == nil || *s {
		t.Fatalf("the kernel's support is not known as missing: %v", s)
	}
}

// Finding 8: a simple policy found attached with its defaults is not
// replaced at every Synchronize.
func TestSimpleNotReplacedAtSync(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	pod := b.newPod(53, ann("simple max-size=64K"), true)
	b.run(pod)
	b.wantState(systemdPodDir(53) + "=simple:65536")
	f.takeCalls()
	b.stopPlugin()
	b.startPlugin(Config{})
	b.wantState(systemdPodDir(53) + "=simple:65536")
	if c := f.takeCalls(); len(c) != 1 || c[0] != "status" {
		t.Fatalf("a restart with an unchanged simple policy ran %q, want only status", c)
	}
}

// Finding 9: SCOPE/container.NAME gives a container's own cgroup a policy
// at StartContainer; its pod cgroup and the other containers' keep
// theirs (SCOPE/pod here); the container's stop detaches it.
func TestPerContainerPolicy(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	pod := b.newPod(54, map[string]string{
		"policy.mthpctl.io/pod":           "never",
		"policy.mthpctl.io/container.db":  "fixed max-size=2M",
		"policy.mthpctl.io/container.bad": "fixed",
	}, true)
	b.run(pod)
	db := b.create(pod, "db")
	web := b.create(pod, "web")
	bad := b.create(pod, "bad")
	for _, c := range []*api.Container{db, web, bad} {
		b.mkdir(systemdPodDir(54) + "/cri-containerd-" + c.Id + ".scope")
		b.start(pod, c)
	}
	dbDir := systemdPodDir(54) + "/cri-containerd-" + db.Id + ".scope"
	b.wantState(dbDir + "=fixed:2097152 " + systemdPodDir(54) + "=never")
	if l := b.log.lines("policy.mthpctl.io/container.bad"); len(l) != 1 ||
		!strings.Contains(l[0], "the container runs with its pod's policy") {
		t.Fatalf("want one line for the bad container's annotation, log:\n%s", b.log)
	}
	if _, err := b.rt.StopContainer(context.Background(), &api.StopContainerRequest{Pod: pod, Container: db}); err != nil {
		t.Fatal(err)
	}
	b.wantState(systemdPodDir(54) + "=never")
}

// Issue 45, item 1: the keys of the first form, KEY/pod and
// KEY/container.NAME, have two slashes and Kubernetes refuses them: the
// plugin does not read them; one line for each names the key to write
// instead, each counted once as an annotation error (not again at the
// next event); the pod runs with the node default.
func TestOldAnnotationKeysRefused(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{Default: "auto"})
	pod := b.newPod(55, map[string]string{
		"mthpctl.io/policy/pod":          "never",
		"mthpctl.io/policy/container.db": "fixed max-size=2M",
	}, true)
	b.run(pod)
	db := b.create(pod, "db")
	b.mkdir(systemdPodDir(55) + "/cri-containerd-" + db.Id + ".scope")
	b.start(pod, db)
	b.wantState(systemdPodDir(55) + "=auto")
	b.create(pod, "web")
	b.wantState(systemdPodDir(55) + "=auto")
	for k, instead := range map[string]string{
		"mthpctl.io/policy/pod":          "write policy.mthpctl.io/pod",
		"mthpctl.io/policy/container.db": "write policy.mthpctl.io/container.db",
	} {
		l := b.log.lines(k + "=")
		if len(l) != 1 || !strings.Contains(l[0], instead) || !strings.Contains(l[0], "two slashes") {
			t.Errorf("want one line for %s naming the fix %q, log:\n%s", k, instead, b.log)
		}
	}
	if n := b.plugin.state().errors[reasonAnnotation]; n != 2 {
		t.Errorf("annotation errors counted: %d, want 2", n)
	}
	t.Log(b.log.lines("two slashes"))
}

// A configured key without a prefix (mthp.example.com) has the scopes
// mthp.example.com/pod and mthp.example.com/container.NAME, one slash:
// read, not refused as the old form.
func TestAnnotationKeyWithoutPrefix(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	b.stopPlugin()
	b.startPluginWith(func(c *Config) { c.Annotation = "mthp.example.com" })
	pod := b.newPod(69, map[string]string{"mthp.example.com/pod": "never", "mthp.example.com/container.db": "auto"}, true)
	b.run(pod)
	db := b.create(pod, "db")
	dbDir := systemdPodDir(69) + "/cri-containerd-" + db.Id + ".scope"
	b.mkdir(dbDir)
	b.start(pod, db)
	b.wantState(dbDir + "=auto " + systemdPodDir(69) + "=never")
	if l := b.log.lines("two slashes"); len(l) != 0 {
		t.Fatalf("the scopes' keys refused as the old form: %q", l)
	}
}

// Item 4 of issue 45: a plugin whose mthpctl attaches another object than
// the one a running pod's policy holds (an upgrade) replaces it, with the
// same parameters; a pod already on this mthpctl's object is not touched,
// nor is anything when mthpctl does not say which object it attaches.
func TestUpgradeRollsObject(t *testing.T) {
	f := newFakeBackend()
	f.object = "1111111111111111"
	b := newBench(t, f, Config{})
	old := b.newPod(60, ann("fixed max-size=64K"), true)
	b.run(old)
	b.wantState(systemdPodDir(60) + "=fixed:65536")

	// the same plugin again: the object is this mthpctl's, nothing to do
	b.stopPlugin()
	f.takeCalls()
	b.startPlugin(Config{})
	b.wantState(systemdPodDir(60) + "=fixed:65536")
	if c := f.takeCalls(); len(c) != 1 || c[0] != "status" {
		t.Fatalf("a restart on the same object ran %q, want only status", c)
	}

	// an upgrade: the new mthpctl attaches another object
	b.stopPlugin()
	f.mu.Lock()
	f.object = "2222222222222222"
	f.mu.Unlock()
	newer := b.newPod(61, ann("auto"), true)
	b.add(newer)
	b.startPlugin(Config{})
	b.wantState(systemdPodDir(60) + "=fixed:65536 " + systemdPodDir(61) + "=auto")
	cg := b.root + "/" + systemdPodDir(60)
	want := "attach " + cg + " fixed max-size=64K replace"
	if c := f.takeCalls(); !slices.Contains(c, want) {
		t.Fatalf("the upgrade ran %q, want %q", c, want)
	}
	f.mu.Lock()
	got := f.objs[cg]
	f.mu.Unlock()
	if got != "2222222222222222" {
		t.Fatalf("the pod runs object %q after the upgrade, want 2222222222222222", got)
	}
	if l := b.log.lines("replaced by this mthpctl's object 2222222222222222 (it ran object 1111111111111111)"); len(l) != 1 {
		t.Fatalf("the upgrade logged %q", b.log.String())
	}

	// an mthpctl that does not name its object: nothing is replaced
	b.stopPlugin()
	f.mu.Lock()
	f.object = ""
	f.mu.Unlock()
	f.takeCalls()
	b.startPlugin(Config{})
	b.wantState(systemdPodDir(60) + "=fixed:65536 " + systemdPodDir(61) + "=auto")
	if c := f.takeCalls(); len(c) != 1 || c[0] != "status" {
		t.Fatalf("a restart with an mthpctl that names no object ran %q, want only status", c)
	}
}

// Issue 45, item 6: the kubelet's systemd driver gives the runtime a pod's
// cgroup parent expanded to its path
// (/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID>.slice,
// - as _), and containerd with runc's SystemdCgroup gives each container
// <slice>:cri-containerd:<ID>, which runc and systemd make
// <pod's slice>/cri-containerd-<ID>.scope (seen in make nri-e2e's systemd
// run). The pod's policy goes on the slice, a container's own on its
// scope, and the pod's removal detaches both.
func TestKubeletSystemdCgroupParent(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	pod := b.newPod(71, map[string]string{
		"policy.mthpctl.io/pod":          "never",
		"policy.mthpctl.io/container.db": "fixed max-size=2M",
	}, true)
	pod.Linux.CgroupParent = "/" + systemdPodDir(71)
	b.run(pod)
	db := b.create(pod, "db")
	if want := systemdSlice(71) + ":cri-containerd:" + db.Id; db.Linux.CgroupsPath != want {
		t.Fatalf("the bench's cgroups path %q, want containerd's %q", db.Linux.CgroupsPath, want)
	}
	dbDir := systemdPodDir(71) + "/cri-containerd-" + db.Id + ".scope"
	b.mkdir(dbDir)
	b.start(pod, db)
	b.wantState(dbDir + "=fixed:2097152 " + systemdPodDir(71) + "=never")
	if l := b.log.lines("no policy"); len(l) != 0 {
		t.Fatalf("a policy refused:\n%s", b.log)
	}
	b.remove(pod)
	b.wantState("")
}
