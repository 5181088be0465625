// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// scrape is what /metrics answers: its status code and body.
func scrape(t *testing.T, p *Plugin) (int, string) {
	t.Helper()
	srv := httptest.NewServer(metricsHandler(p, 2*time.Second))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Issue 45, item 2: a pod's policy whose figures sample a container that
// has a policy of its own: both series name container "db"; the scope
// label tells them apart, the registry gathers and /metrics answers 200
// with both.
func TestMetricsPodPolicySamplesContainerWithItsOwn(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	pod := b.newPod(56, map[string]string{
		"policy.mthpctl.io/pod":          "auto",
		"policy.mthpctl.io/container.db": "fixed max-size=2M",
	}, true)
	b.run(pod)
	db := b.create(pod, "db")
	dbDir := systemdPodDir(56) + "/cri-containerd-" + db.Id + ".scope"
	b.mkdir(dbDir)
	b.start(pod, db)
	b.wantState(dbDir + "=fixed:2097152 " + systemdPodDir(56) + "=auto")
	f.mu.Lock()
	f.samples = map[string]string{filepath.Join(b.root, systemdPodDir(56)): filepath.Join(b.root, dbDir)}
	f.mu.Unlock()

	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(b.plugin, 2*time.Second))
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("gather: %v", err)
	}
	code, body := scrape(t, b.plugin)
	if code != http.StatusOK {
		t.Fatalf("/metrics answered %d:\n%s", code, body)
	}
	for _, w := range []string{
		`mthpctl_pod_policy_info{container="db",max_size_bytes="",namespace="default",object_hash="00000000000000a1",pod="web-56",policy="auto",scope="pod"} 1`,
		`mthpctl_pod_policy_info{container="db",max_size_bytes="2097152",namespace="default",object_hash="00000000000000a1",pod="web-56",policy="fixed",scope="container"} 1`,
		`mthpctl_pod_policy_attached{container="db",namespace="default",pod="web-56",scope="pod"} 1`,
		`mthpctl_pod_policy_attached{container="db",namespace="default",pod="web-56",scope="container"} 1`,
	} {
		if !strings.Contains(body, w+"\n") {
			t.Errorf("/metrics lacks %q; it has:\n%s", w, body)
		}
	}
}
