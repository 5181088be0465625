// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The real mthpctl, when MTHPCTL_BIN names it (make nri-check does when
// ./mthpctl is built): its JSON and exit codes as the plugin reads them.
// Attaching itself needs the patched kernel (the VM tests); what any
// kernel answers is checked here: status -j parses, a value mthpctl
// refuses reaches the pod's log line with mthpctl's own message, and a
// directory that is no cgroup is named.
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
	if _, err := be.Status(context.Background()); err != nil {
		t.Fatalf("status -j: %v", err)
	}
	b := newBench(t, be, Config{})
	pod := b.newPod(30, ann("fixed max-size=3K"), true)
	b.run(pod)
	b.create(pod, "app")
	lines := b.log.lines("mthpctl.io/policy")
	if len(lines) != 1 || !strings.Contains(lines[0], "refused by mthpctl: bad --max-size '3K'") {
		t.Fatalf("want one line with mthpctl's refusal, log:\n%s", b.log)
	}
	ok := b.newPod(31, ann("fixed max-size=64K"), true)
	b.run(ok)
	b.create(ok, "app")
	if l := b.log.lines("cannot attach"); len(l) != 1 || !strings.Contains(l[0], "web-31") {
		t.Fatalf("want one line naming the refused cgroup, log:\n%s", b.log)
	}
	t.Log(lines[0])
}
