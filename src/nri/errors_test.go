// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The plugin's error series and counters (issue 45, item 8).
package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"
)

// podErrors is the mthpctl_nri_pod_policy_error lines /metrics serves.
func podErrors(t *testing.T, p *Plugin) []string {
	t.Helper()
	_, body := scrape(t, p)
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "mthpctl_nri_pod_policy_error{") {
			out = append(out, l)
		}
	}
	return out
}

func wantPodErrors(t *testing.T, p *Plugin, want ...string) {
	t.Helper()
	if got := podErrors(t, p); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mthpctl_nri_pod_policy_error:\n got  %q\n want %q", got, want)
	}
}

// mthpctl_nri_pod_policy_error: a pod whose annotation is malformed, and
// one whose attach failed, each have a series with the reason while it
// lasts; the annotation set to none (no attach to come) takes it away.
func TestPodPolicyErrorGauge(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	bad := b.newPod(57, ann("fixed"), true)
	b.run(bad)
	b.create(bad, "app")
	b.wantState("")
	wantPodErrors(t, b.plugin,
		`mthpctl_nri_pod_policy_error{container="",namespace="default",pod="web-57",reason="annotation",scope="pod"} 1`)

	f.mu.Lock()
	f.failAttach = errors.New("mthpctl attach: signal: segmentation fault")
	f.mu.Unlock()
	failing := b.newPod(58, ann("auto"), true)
	b.run(failing)
	b.wantState("")
	wantPodErrors(t, b.plugin,
		`mthpctl_nri_pod_policy_error{container="",namespace="default",pod="web-57",reason="annotation",scope="pod"} 1`,
		`mthpctl_nri_pod_policy_error{container="",namespace="default",pod="web-58",reason="mthpctl",scope="pod"} 1`)

	// none: neither pod wants a policy, and neither has an error now
	bad.Annotations = ann("none")
	b.update(bad)
	failing.Annotations = ann("none")
	b.update(failing)
	b.wantState("")
	wantPodErrors(t, b.plugin)

	// a failure that a later attach fixes goes too
	f.mu.Lock()
	f.failAttach = nil
	f.mu.Unlock()
	bad.Annotations = ann("fixed max-size=64K")
	b.update(bad)
	b.wantState(systemdPodDir(57) + "=fixed:65536")
	wantPodErrors(t, b.plugin)
}

// What was logged and counted of a pod is not logged and counted again
// when the plugin reconnects (a containerd restart): a malformed
// annotation, a key of the old form, a pod cgroup that is not the pod's
// own, a container without a cgroup of its own below the pod's.
func TestErrorsNotCountedAgainAtReconnect(t *testing.T) {
	b := newBench(t, newFakeBackend(), Config{Default: "auto"})
	malformed := b.newPod(59, map[string]string{"mthpctl.io/policy": "fixed", "mthpctl.io/policy/container.x": "never"}, true)
	b.run(malformed)
	shared := b.newPod(60, nil, false)
	shared.Linux.CgroupParent = "/kubepods/besteffort"
	b.run(shared)
	elsewhere := b.newPod(61, map[string]string{"policy.mthpctl.io/container.app": "never"}, true)
	b.run(elsewhere)
	ctr := &api.Container{Id: "ctr-61", PodSandboxId: elsewhere.Id, Name: "app", State: api.ContainerState_CONTAINER_RUNNING,
		Linux: &api.LinuxContainer{CgroupsPath: "/elsewhere/ctr-61"}}
	b.mu.Lock()
	b.ctrs[ctr.Id] = ctr
	b.mu.Unlock()
	b.start(elsewhere, ctr)
	b.wantState(systemdPodDir(59) + "=auto " + systemdPodDir(61) + "=auto")
	before := b.plugin.state().errors
	lines := len(strings.Split(b.log.String(), "\n"))
	if before[reasonAnnotation] != 2 || before[reasonCgroup] != 2 {
		t.Fatalf("errors counted: %v, want annotation 2 and cgroup 2; log:\n%s", before, b.log)
	}
	for i := 0; i < 2; i++ {
		b.reconnect()
		b.wantState(systemdPodDir(59) + "=auto " + systemdPodDir(61) + "=auto")
	}
	if after := b.plugin.state().errors; after[reasonAnnotation] != 2 || after[reasonCgroup] != 2 {
		t.Errorf("errors counted after two reconnects: %v, want %v", after, before)
	}
	for _, l := range strings.Split(b.log.String(), "\n")[lines-1:] {
		if strings.Contains(l, "pod default/") {
			t.Errorf("logged again after a reconnect: %q", l)
		}
	}
	// the pods' error series stay
	wantPodErrors(t, b.plugin,
		`mthpctl_nri_pod_policy_error{container="",namespace="default",pod="web-59",reason="annotation",scope="pod"} 1`)
}

// timeoutMs 0 would let an mthpctl that never returns stall the worker,
// and every pod's attach behind it: refused at start and in the
// configuration NRI passes, as is one below a second.
func TestTimeoutRefused(t *testing.T) {
	for _, ms := range []int{0, -1, 999} {
		cfg := defaultConfig()
		cfg.TimeoutMs = ms
		if p, err := NewPlugin(cfg, newFakeBackend(), nil); err == nil {
			p.Close()
			t.Errorf("timeoutMs %d accepted", ms)
		} else if !strings.Contains(err.Error(), "at least 1000") {
			t.Errorf("timeoutMs %d: %v", ms, err)
		}
	}
	b := newBench(t, newFakeBackend(), Config{})
	if _, err := b.plugin.Configure(context.Background(), "timeoutMs: 0\n", "containerd", "2.1.0-test"); err == nil {
		t.Errorf("NRI's configuration with timeoutMs 0 accepted")
	}
	if b.plugin.cfg.TimeoutMs != defaultConfig().TimeoutMs {
		t.Errorf("timeoutMs is %d after a refused configuration", b.plugin.cfg.TimeoutMs)
	}
	if _, err := b.plugin.Configure(context.Background(), "timeoutMs: 5000\n", "containerd", "2.1.0-test"); err != nil {
		t.Errorf("timeoutMs 5000 refused: %v", err)
	}
}

// The timeout and the binary of a configuration NRI passes reach the
// mthpctl the plugin runs.
func TestConfigureReachesMthpctl(t *testing.T) {
	be, _ := scriptBackend(t)
	b := newBench(t, be, Config{})
	if _, err := b.plugin.Configure(context.Background(), "timeoutMs: 4000\nmthpctl: /opt/mthpctl\n",
		"containerd", "2.1.0-test"); err != nil {
		t.Fatal(err)
	}
	be.mu.Lock()
	path, timeout := be.Path, be.Timeout
	be.mu.Unlock()
	if path != "/opt/mthpctl" || timeout != 4*time.Second {
		t.Fatalf("mthpctl %s with a timeout of %v after the configuration, want /opt/mthpctl and 4s", path, timeout)
	}
}
