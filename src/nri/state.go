// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The cgroups the plugin attached to, kept on the host (stateDir, a
// hostPath below /run: it outlives the plugin's restarts and upgrades and
// goes with a reboot, as the pins in bpffs do). One file per cgroup,
// named by its cgroup id, holding its path. A pod removed while no plugin
// process ran takes its cgroup with it, and mthpctl status then knows its
// pins by id only: a new process reads the files at its first
// Synchronize and removes the pins of the ids it finds there (detach
// --cgroup-id), never those of a cgroup it did not attach to.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// loadRecords reads stateDir once (under the lock).
func (p *Plugin) loadRecords() {
	if p.recordsLoaded {
		return
	}
	p.recordsLoaded = true
	dir := p.cfg.StateDir
	if dir == "" {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !os.IsNotExist(err) {
			p.stateError(err)
		}
		return
	}
	for _, e := range ents {
		id, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil || id == 0 || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			p.stateError(err)
			continue
		}
		p.records[id] = strings.TrimSpace(string(b))
	}
}

// addRecord notes that the plugin attached to cgroup id (under the lock).
func (p *Plugin) addRecord(id uint64, cg string) {
	if id == 0 {
		return
	}
	if old, ok := p.records[id]; ok && old == cg {
		return
	}
	p.records[id] = cg
	dir := p.cfg.StateDir
	if dir == "" {
		return
	}
	name := filepath.Join(dir, strconv.FormatUint(id, 10))
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		err = os.WriteFile(name+".tmp", []byte(cg+"\n"), 0o600)
	}
	if err == nil {
		err = os.Rename(name+".tmp", name)
	}
	if err != nil {
		p.stateError(err)
	}
}

// dropRecord: nothing of cgroup id is attached any more (under the lock).
func (p *Plugin) dropRecord(id uint64) {
	if _, ok := p.records[id]; !ok || id == 0 {
		return
	}
	delete(p.records, id)
	if p.cfg.StateDir == "" {
		return
	}
	err := os.Remove(filepath.Join(p.cfg.StateDir, strconv.FormatUint(id, 10)))
	if err != nil && !os.IsNotExist(err) {
		p.stateError(err)
	}
}

// stateError is logged once: the plugin goes on, with what a restart
// can no longer clean up.
func (p *Plugin) stateError(err error) {
	if p.stateFailed {
		return
	}
	p.stateFailed = true
	p.logf("state %s: %v; the pins of a pod removed while the plugin is not running may stay "+
		"(mthpctl status lists them without a cgroup)", p.cfg.StateDir, err)
}
