// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The real mthpctl, when MTHPCTL_BIN names it (make nri-check does when
// ./mthpctl is built): its JSON and exit codes as the plugin reads them.
// Attaching itself needs the patched kernel (the VM tests); what any
// kernel answers is checked here: status -j parses and says whether the
// kernel has the series, mthpctl refuses a bad value (its own message)
// and a directory that is no cgroup; on a kernel without the series the
// plugin stays idle, on one with it the refusal reaches the pod's line.
package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestRealMthpctl(t *testing.T) {
	bin := os.Getenv("MTHPCTL_BIN")
	if bin == "" {
		t.Skip("MTHPCTL_BIN not set (make nri-check sets it when ./mthpctl is built)")
	}
	be := &ExecBackend{Path: bin, Timeout: 5 * time.Second}
	st, err := be.Status(context.Background())
	if err != nil {
		t.Fatalf("status -j: %v", err)
	}
	if st.Supported == nil {
		t.Fatal("status -j does not say whether the kernel has bpf_mthp_ops")
	}
	// the object this mthpctl attaches, which the plugin compares with
	// each pod's (an upgrade): 16 hex digits
	if len(st.Object) != 16 || strings.Trim(st.Object, "0123456789abcdef") != "" {
		t.Fatalf("status -j names the built-in object %q, want 16 hex digits", st.Object)
	}
	// mthpctl's own refusals, as the plugin reads them
	dir := t.TempDir()
	bad, _ := ParseSpec("fixed max-size=3K")
	if err := be.Attach(context.Background(), dir, bad, false); exitCode(err) != ExitUsage ||
		!strings.Contains(err.Error(), "bad --max-size '3K'") {
		t.Fatalf("attach with max-size=3K: %v", err)
	}
	ok, _ := ParseSpec("fixed max-size=64K")
	if err := be.Attach(context.Background(), dir, ok, false); err == nil {
		t.Fatalf("attach to %s, no cgroup, succeeded", dir)
	}

	b := newBench(t, be, Config{})
	pod := b.newPod(30, ann("fixed max-size=3K"), true)
	b.run(pod)
	b.create(pod, "app")
	b.plugin.waitIdle(10 * time.Second)
	if !*st.Supported {
		// this kernel: the plugin stays idle, says so once
		if l := b.log.lines("no bpf_mthp_ops"); len(l) != 1 {
			t.Fatalf("want one line saying the plugin is idle, log:\n%s", b.log)
		}
		return
	}
	lines := b.log.lines("mthpctl.io/policy")
	if len(lines) != 1 || !strings.Contains(lines[0], "refused by mthpctl: bad --max-size '3K'") {
		t.Fatalf("want one line with mthpctl's refusal, log:\n%s", b.log)
	}
	t.Log(lines[0])
}
