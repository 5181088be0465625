// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Issue 45, item 3: nothing leaked across a restart of the plugin.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"
)

// stateFiles: the records in the bench's state directory, as "ID=PATH"
// with the path relative to the cgroup root.
func (b *bench) stateFiles() string {
	b.t.Helper()
	ents, err := os.ReadDir(filepath.Join(b.dir, "state"))
	if err != nil && !os.IsNotExist(err) {
		b.t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		c, err := os.ReadFile(filepath.Join(b.dir, "state", e.Name()))
		if err != nil {
			b.t.Fatal(err)
		}
		out = append(out, e.Name()+"="+strings.TrimPrefix(strings.TrimSpace(string(c)), b.root+"/"))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func (b *bench) rmCgroup(rel string) uint64 {
	b.t.Helper()
	id := cgroupID(filepath.Join(b.root, rel))
	if err := os.Remove(filepath.Join(b.root, rel)); err != nil {
		b.t.Fatal(err)
	}
	return id
}

// A pod removed while the plugin was not running, whose cgroup the
// kubelet removed too (mthpctl status then knows its pins by id only):
// the next plugin process removes its pins, from the ids the earlier one
// kept on the host; a policy of a removed cgroup that the plugin did not
// attach stays; a record whose pins were removed by hand goes.
func TestRestartRemovesPinsOfRemovedCgroups(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{})
	gone := b.newPod(64, ann("fixed max-size=64K"), true)
	keep := b.newPod(65, map[string]string{"policy.mthpctl.io/container.db": "never"}, true)
	byHand := b.newPod(66, ann("auto"), true)
	b.run(gone)
	b.run(keep)
	db := b.create(keep, "db")
	dbDir := systemdPodDir(65) + "/cri-containerd-" + db.Id + ".scope"
	b.mkdir(dbDir)
	b.start(keep, db)
	db.State = api.ContainerState_CONTAINER_RUNNING
	b.run(byHand)
	b.mkdir("system.slice/other.service")
	if err := f.Attach(nil, filepath.Join(b.root, "system.slice/other.service"), Spec{Policy: "never"}, false); err != nil {
		t.Fatal(err)
	}
	b.wantState(systemdPodDir(64) + "=fixed:65536 " + dbDir + "=never " + systemdPodDir(66) + "=auto " +
		"system.slice/other.service=never")
	goneID, dbID, handID := cgroupID(filepath.Join(b.root, systemdPodDir(64))),
		cgroupID(filepath.Join(b.root, dbDir)), cgroupID(filepath.Join(b.root, systemdPodDir(66)))
	want := []string{fmt.Sprintf("%d=%s", goneID, systemdPodDir(64)), fmt.Sprintf("%d=%s", dbID, dbDir),
		fmt.Sprintf("%d=%s", handID, systemdPodDir(66))}
	sort.Strings(want)
	if got := b.stateFiles(); got != strings.Join(want, " ") {
		t.Fatalf("state:\n got  %q\n want %q", got, strings.Join(want, " "))
	}

	// the plugin down: pod 64 removed with its cgroup, as the kubelet
	// does; pod 66's policy detached by hand and the pod removed; a
	// service's cgroup with a policy removed
	b.stopPlugin()
	b.forget(gone)
	b.rmCgroup(systemdPodDir(64))
	if err := f.Detach(nil, filepath.Join(b.root, systemdPodDir(66))); err != nil {
		t.Fatal(err)
	}
	b.forget(byHand)
	b.rmCgroup("system.slice/other.service")
	f.takeCalls()

	b.startPlugin(Config{})
	b.wantState(dbDir + "=never system.slice/other.service=never")
	calls := f.takeCalls()
	if strings.Join(calls, "\n") != fmt.Sprintf("status\ndetach-id %d", goneID) {
		t.Errorf("the restarted plugin ran %q, want a status and the removed pod's detach by id", calls)
	}
	if got, w := b.stateFiles(), fmt.Sprintf("%d=%s", dbID, dbDir); got != w {
		t.Errorf("state after the restart %q, want %q", got, w)
	}
	if l := b.log.lines("1 of removed cgroups"); len(l) != 1 {
		t.Errorf("want the synchronize line to count 1 removed cgroup, log:\n%s", b.log)
	}
	if l := b.log.lines("1 policies of removed cgroups the plugin did not attach"); len(l) != 1 {
		t.Errorf("want a line for the service's policy left alone, log:\n%s", b.log)
	}
}

// A plugin that kept no records (its state in an emptyDir, or an earlier
// version) leaves the pins of a pod removed while it was down; the next
// one that keeps them records the pods it finds attached at its start,
// so that from then on nothing leaks.
func TestRecordsFromAStartWithoutThem(t *testing.T) {
	f := newFakeBackend()
	b := newBench(t, f, Config{StateDir: "-"})
	first := b.newPod(67, ann("never"), true)
	second := b.newPod(68, ann("auto"), true)
	b.run(first)
	b.run(second)
	b.wantState(systemdPodDir(67) + "=never " + systemdPodDir(68) + "=auto")
	if s := b.stateFiles(); s != "" {
		t.Fatalf("records without a state directory: %q", s)
	}
	b.stopPlugin()
	b.forget(first)
	b.rmCgroup(systemdPodDir(67))
	b.startPlugin(Config{StateDir: "-"})
	// not known as the plugin's: left (mthpctl status lists it)
	b.wantState(systemdPodDir(67) + "=never " + systemdPodDir(68) + "=auto")

	b.stopPlugin()
	b.startPlugin(Config{}) // an upgrade to a plugin with a state directory
	b.wantState(systemdPodDir(67) + "=never " + systemdPodDir(68) + "=auto")
	secondID := cgroupID(filepath.Join(b.root, systemdPodDir(68)))
	if got, w := b.stateFiles(), fmt.Sprintf("%d=%s", secondID, systemdPodDir(68)); got != w {
		t.Fatalf("state after the upgrade %q, want %q", got, w)
	}
	b.stopPlugin()
	b.forget(second)
	b.rmCgroup(systemdPodDir(68))
	b.startPlugin(Config{})
	b.wantState(systemdPodDir(67) + "=never")
}
