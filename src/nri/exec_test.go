// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The exec backend against testdata/fake-mthpctl, an executable that
// answers with mthpctl's command line, JSON and exit codes: the plugin's
// real path from NRI event to mthpctl process and back.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func scriptBackend(t *testing.T) (*ExecBackend, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("MTHPCTL_FAKE_DIR", dir)
	script, err := filepath.Abs("testdata/fake-mthpctl")
	if err != nil {
		t.Fatal(err)
	}
	return &ExecBackend{Path: script, Timeout: 1500 * time.Millisecond}, dir
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// policiesOf is the fake's policies without their cgroup ids.
func policiesOf(t *testing.T, dir string) string {
	t.Helper()
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "policies"))), "\n") {
		if f := strings.Split(l, "\t"); len(f) == 4 {
			out.WriteString(strings.Join(f[:3], "\t") + "\n")
		}
	}
	return out.String()
}

// The command lines the plugin ran, since the last call.
func takeScriptCalls(t *testing.T, dir string) []string {
	t.Helper()
	s := strings.TrimSpace(readFile(t, filepath.Join(dir, "calls")))
	os.Remove(filepath.Join(dir, "calls"))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestExecBackendLifecycle(t *testing.T) {
	be, dir := scriptBackend(t)
	b := newBench(t, be, Config{})
	takeScriptCalls(t, dir) // the first Synchronize's status
	pod := b.newPod(20, ann("fixed max-size=64K"), true)
	cg := filepath.Join(b.root, systemdPodDir(20))
	b.run(pod)
	b.create(pod, "app")
	want := []string{
		"-j attach --cgroup " + cg + " --policy fixed --max-size 64K",
	}
	if got := takeScriptCalls(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mthpctl runs:\n got  %q\n want %q", got, want)
	}
	if s := policiesOf(t, dir); s != cg+"\tfixed\t65536\n" {
		t.Fatalf("policies %q", s)
	}

	// a restart reads status -j and finds the pod's policy in place
	b.stopPlugin()
	b.startPlugin(Config{})
	if got := takeScriptCalls(t, dir); len(got) != 1 || got[0] != "-j status" {
		t.Fatalf("after a restart mthpctl ran %q, want only status", got)
	}

	// metrics: the pod's figures, named by namespace, pod and container
	t.Setenv("MTHPCTL_FAKE_SAMPLE", "cri-containerd-sandbox-20-app.scope")
	srv := httptest.NewServer(metricsHandler(b.plugin, 2*time.Second))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	labels := `container="app",namespace="default",pod="web-20"`
	for _, w := range []string{
		"mthpctl_status_up 1",
		`mthpctl_pod_policy_info{container="app",max_size_bytes="65536",namespace="default",object_hash="",pod="web-20",policy="fixed",scope="pod"} 1`,
		`mthpctl_pod_policy_attached{` + labels + `,scope="pod"} 1`,
		`mthpctl_pod_allowed_max_size_bytes{` + labels + `,scope="pod"} 65536`,
		`mthpctl_pod_size_allowed{` + labels + `,scope="pod",size_bytes="16384"} 1`,
		`mthpctl_pod_restricted{` + labels + `,reason="cap",scope="pod"} 1`,
		`mthpctl_pod_restricted{` + labels + `,reason="pressure",scope="pod"} 0`,
		`mthpctl_pod_fallbacks_total{` + labels + `,reason="cap",scope="pod",tva="pagefault"} 3`,
		`mthpctl_pod_hook_calls_total{` + labels + `,scope="pod",tva="pagefault"} 10`,
		`mthpctl_pod_anon_shmem_bytes{` + labels + `,scope="pod"} 1.048576e+06`,
		`mthpctl_nri_attach_errors_total{reason="annotation"} 0`,
		`mthpctl_nri_connected 1`,
		`mthpctl_nri_kernel_supported 1`,
		`mthpctl_nri_pending_cgroups 0`,
		`mthpctl_nri_node_ready{reason=""} 1`,
	} {
		if !strings.Contains(string(body), w+"\n") {
			t.Errorf("/metrics lacks %q; it has:\n%s", w, body)
		}
	}
	if strings.Contains(string(body), "cgroup=") || strings.Contains(string(body), "cgroup_id") {
		t.Errorf("/metrics names cgroups:\n%s", body)
	}
	// Prometheus' own linter (package prometheus, scripts/install-deps.sh)
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else {
		t.Log("promtool not installed: metrics not linted")
	}
	takeScriptCalls(t, dir)

	// a changed annotation: attach --replace, one policy
	pod.Annotations = ann("auto max-size=2M")
	b.update(pod)
	if got := takeScriptCalls(t, dir); len(got) != 1 ||
		got[0] != "-j attach --cgroup "+cg+" --policy auto --max-size 2M --replace" {
		t.Fatalf("update ran %q, want one attach --replace", got)
	}
	if s := policiesOf(t, dir); s != cg+"\tauto\t2097152\n" {
		t.Fatalf("policies after the update %q", s)
	}

	b.remove(pod)
	if got := takeScriptCalls(t, dir); len(got) != 1 || got[0] != "-j detach --cgroup "+cg {
		t.Fatalf("removal ran %q, want one detach", got)
	}
	if s := policiesOf(t, dir); s != "" {
		t.Fatalf("policies left after the removal: %q", s)
	}

	// a pod whose cgroup is removed before its stop: detached by id
	gone := b.newPod(22, ann("never"), true)
	b.run(gone)
	b.wantRuns(dir, "-j attach --cgroup "+filepath.Join(b.root, systemdPodDir(22))+" --policy never")
	id := cgroupID(filepath.Join(b.root, systemdPodDir(22)))
	if err := os.Remove(filepath.Join(b.root, systemdPodDir(22))); err != nil {
		t.Fatal(err)
	}
	b.remove(gone)
	b.wantRuns(dir, "-j detach --cgroup "+filepath.Join(b.root, systemdPodDir(22)),
		fmt.Sprintf("-j detach --cgroup-id %d", id))
	if s := policiesOf(t, dir); s != "" {
		t.Fatalf("policies left after the removal of a removed cgroup's pod: %q", s)
	}
}

// wantRuns checks the mthpctl command lines run since the last check.
func (b *bench) wantRuns(dir string, want ...string) {
	b.t.Helper()
	b.plugin.waitIdle(10 * time.Second)
	if got := takeScriptCalls(b.t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		b.t.Fatalf("mthpctl runs:\n got  %q\n want %q", got, want)
	}
}

// mthpctl's refusal comes back as its exit code and its JSON message.
func TestExecBackendErrors(t *testing.T) {
	be, dir := scriptBackend(t)
	ctx := context.Background()
	err := be.Attach(ctx, filepath.Join(dir, "nope"), Spec{Policy: "auto"}, false)
	if exitCode(err) != ExitCgroup || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("attach to a missing cgroup: %v", err)
	}
	sp, _ := ParseSpec("fixed max-size=3K")
	err = be.Attach(ctx, dir, sp, false)
	if exitCode(err) != ExitUsage || err.(*ExitError).Msg != "--max-size 3K is not a power of two" {
		t.Fatalf("attach with a bad size: %v", err)
	}
	if err := be.Detach(ctx, dir); exitCode(err) != ExitState {
		t.Fatalf("detach of a cgroup without a policy: %v", err)
	}
}

// An mthpctl that does not answer in time is killed; the pod is not
// held up past the timeout and still starts.
func TestExecBackendTimeout(t *testing.T) {
	be, _ := scriptBackend(t)
	be.Timeout = 300 * time.Millisecond
	b := newBench(t, be, Config{})
	t.Setenv("MTHPCTL_FAKE_SLEEP", "5")
	pod := b.newPod(21, ann("auto"), true)
	start := time.Now()
	b.run(pod)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("RunPodSandbox took %v with a 300ms mthpctl timeout", d)
	}
	if l := b.log.lines("cannot attach"); len(l) != 1 || !strings.Contains(l[0], "killed") {
		t.Fatalf("want one line saying the attach was killed, log:\n%s", b.log)
	}
}

// Finding 8: simple's window and threshold, which status -j reports, are
// filled in; a restart finds the policy as the pod asks and runs only
// status (no needless --replace).
func TestExecSimpleNotReplaced(t *testing.T) {
	be, dir := scriptBackend(t)
	b := newBench(t, be, Config{})
	pod := b.newPod(23, ann("simple max-size=64K"), true)
	b.run(pod)
	b.wantRuns(dir, "-j status",
		"-j attach --cgroup "+filepath.Join(b.root, systemdPodDir(23))+" --policy simple --max-size 64K")
	b.stopPlugin()
	b.startPlugin(Config{})
	b.wantRuns(dir, "-j status")
}

// status -j's object fields as the plugin reads them: the built-in object
// this mthpctl attaches, and each policy's (null: not known).
func TestParseStatusObjects(t *testing.T) {
	st, err := parseStatus([]byte(`{"kernel":{"bpf_mthp_ops":true},"builtin_object_hash":"88e4913337c9eecc",
		"policies_readable":true,"policies":[
		{"cgroup":"/sys/fs/cgroup/a","cgroup_id":7,"attached":true,"policy":"auto","object_hash":"0123456789abcdef"},
		{"cgroup":"/sys/fs/cgroup/b","cgroup_id":8,"attached":true,"policy":"never","object_hash":null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if st.Object != "88e4913337c9eecc" || len(st.Policies) != 2 || st.Policies[0].ObjectHash == nil ||
		*st.Policies[0].ObjectHash != "0123456789abcdef" || st.Policies[1].ObjectHash != nil {
		t.Fatalf("parsed %+v", st)
	}
	// an mthpctl before the field: nothing known, nothing replaced
	st, err = parseStatus([]byte(`{"kernel":{"bpf_mthp_ops":true},"policies":[{"cgroup":"/x","policy":"auto"}]}`))
	if err != nil || st.Object != "" || st.Policies[0].ObjectHash != nil {
		t.Fatalf("parsed %+v, %v", st, err)
	}
}
