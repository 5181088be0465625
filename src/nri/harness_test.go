// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The test bench: NRI's runtime side (pkg/adaptation, what containerd
// links) on a socket in a temporary directory, the plugin connected to it
// through pkg/stub over ttRPC, and a fake attach backend that keeps the
// policies of a cgroup tree made in the same directory.
package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

// fakeBackend answers as mthpctl would: exit 4 for a missing cgroup
// directory, 5 for an attach without --replace to an attached cgroup or a
// detach of one without a policy, 1 for a max-size that is not a power of
// two; the policy of a removed cgroup stays (status: cgroup null) until
// detached by its id.
type fakeBackend struct {
	mu          sync.Mutex
	pols        map[string]Params // cgroup -> policy
	ids         map[string]uint64 // cgroup -> its id when attached
	calls       []string          // "attach CG SPEC [replace]", "detach CG", "detach-id N", "status"
	delay       time.Duration     // each attach takes this long (a verifier's load)
	unsupported bool              // the kernel has no bpf_mthp_ops
	samples     map[string]string // cgroup -> its sample_cgroup in status
	failAttach  error             // each attach fails with it
	// object: the built-in object this mthpctl attaches (status'
	// builtin_object_hash; "": an mthpctl that does not say), objs the
	// one each cgroup runs (status' object_hash; "": not known)
	object string
	objs   map[string]string
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{pols: map[string]Params{}, ids: map[string]uint64{}, object: "00000000000000a1",
		objs: map[string]string{}}
}

func (f *fakeBackend) Attach(_ context.Context, cg string, s Spec, replace bool) error {
	f.mu.Lock()
	delay := f.delay
	f.mu.Unlock()
	time.Sleep(delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	c := "attach " + cg + " " + s.String()
	if replace {
		c += " replace"
	}
	f.calls = append(f.calls, c)
	if f.unsupported {
		return &ExitError{Code: ExitUnsupported, Msg: "the kernel has no bpf_mthp_ops"}
	}
	if f.failAttach != nil {
		return f.failAttach
	}
	if st, err := os.Stat(cg); err != nil || !st.IsDir() {
		return &ExitError{Code: ExitCgroup, Msg: cg + " does not exist"}
	}
	if p := s.Params(); p.MaxSizeBytes != nil && *p.MaxSizeBytes&(*p.MaxSizeBytes-1) != 0 {
		return &ExitError{Code: ExitUsage, Msg: "--max-size must be a power of two"}
	}
	if _, ok := f.pols[cg]; ok && !replace {
		return &ExitError{Code: ExitState, Msg: cg + " has a policy already (--replace swaps it)"}
	}
	f.pols[cg] = statusParams(s)
	f.ids[cg] = cgroupID(cg)
	f.objs[cg] = f.object
	return nil
}

// statusParams is what mthpctl status -j reports of a policy attached
// with spec (mthpctl-status(8), mthpctl_params_json): the fake's own
// account of it, not the plugin's Spec.Params, so that a test of the
// plugin's comparison can fail. attach's defaults: window 1s and
// threshold 100ms for auto and simple, min-usage 16M for auto.
func statusParams(s Spec) Params {
	p := Params{Policy: s.Policy}
	opt := func(name string, def uint64, parse func(string) (uint64, error)) *uint64 {
		v, ok := s.Opts[name]
		if !ok {
			return &def
		}
		n, err := parse(v)
		if err != nil {
			panic(fmt.Sprintf("fake mthpctl: %s=%s: %v", name, v, err))
		}
		return &n
	}
	switch s.Policy {
	case "auto":
		p.MinUsageBytes = opt("min-usage", 16<<20, parseSize)
		fallthrough
	case "simple":
		p.WindowNs = opt("window", 1_000_000_000, parseDuration)
		p.ThresholdNs = opt("threshold", 100_000_000, parseDuration)
	}
	if _, ok := s.Opts["max-size"]; ok {
		p.MaxSizeBytes = opt("max-size", 0, parseSize)
	}
	return p
}

func (f *fakeBackend) Detach(_ context.Context, cg string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "detach "+cg)
	if _, err := os.Stat(cg); err != nil {
		return &ExitError{Code: ExitCgroup, Msg: cg + " does not exist; policies of removed cgroups go with detach --all"}
	}
	if _, ok := f.pols[cg]; !ok {
		return &ExitError{Code: ExitState, Msg: cg + " has no policy attached by mthpctl"}
	}
	delete(f.pols, cg)
	return nil
}

func (f *fakeBackend) DetachID(_ context.Context, id uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("detach-id %d", id))
	for cg, i := range f.ids {
		if i == id {
			if _, ok := f.pols[cg]; ok {
				delete(f.pols, cg)
				return nil
			}
		}
	}
	return &ExitError{Code: ExitState, Msg: fmt.Sprintf("cgroup id %d has no policy attached by mthpctl", id)}
}

func (f *fakeBackend) Status(context.Context) (StatusReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "status")
	supported := !f.unsupported
	r := StatusReport{Supported: &supported, Object: f.object}
	for _, cg := range sortedKeys(f.pols) {
		p := f.pols[cg]
		path := cg
		pol := Policy{Cgroup: &path, CgroupID: f.ids[cg], Attached: true, Policy: p.Policy, Restriction: "none",
			AllowedSizesKB: []uint64{4, 16, 64}}
		if _, err := os.Stat(cg); err != nil {
			pol.Cgroup = nil // removed
		}
		if sc, ok := f.samples[cg]; ok {
			pol.SampleCgroup = &sc
		}
		if o := f.objs[cg]; o != "" {
			pol.ObjectHash = &o
		}
		pol.Params.WindowNs, pol.Params.ThresholdNs = p.WindowNs, p.ThresholdNs
		pol.Params.MinUsageBytes, pol.Params.MaxSizeBytes = p.MinUsageBytes, p.MaxSizeBytes
		r.Policies = append(r.Policies, pol)
	}
	return r, nil
}

// state is the policies as "cgroup-relative-path=policy[:max]" words.
func (f *fakeBackend) state(root string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var w []string
	for cg, p := range f.pols {
		s := strings.TrimPrefix(cg, root+"/") + "=" + p.Policy
		if p.MaxSizeBytes != nil {
			s += fmt.Sprintf(":%d", *p.MaxSizeBytes)
		}
		w = append(w, s)
	}
	sort.Strings(w)
	return strings.Join(w, " ")
}

func (f *fakeBackend) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// syncBuffer is a log sink shared by the plugin and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lines of the log containing sub.
func (s *syncBuffer) lines(sub string) []string {
	var out []string
	for _, l := range strings.Split(s.String(), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// bench is a runtime with pods, and the plugin connected to it.
type bench struct {
	t       *testing.T
	dir     string
	root    string // the fake cgroup2 root
	rt      *adaptation.Adaptation
	pods    map[string]*api.PodSandbox
	ctrs    map[string]*api.Container
	mu      sync.Mutex
	backend Backend
	fake    *fakeBackend // backend, when it is the Go fake
	log     *syncBuffer
	plugin  *Plugin
	stub    stub.Stub
	// file system types the plugin's statfs sees (fakeNode), by path
	nodeTypes map[string]int64
	// the runtime's callbacks, for a restart of it
	syncFn   adaptation.SyncFn
	updateFn adaptation.UpdateFn
}

func newBench(t *testing.T, backend Backend, cfg Config) *bench {
	t.Helper()
	// a short path: a unix socket's path has at most 107 bytes
	dir, err := os.MkdirTemp("", "nri-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b := &bench{t: t, dir: dir, root: filepath.Join(dir, "cgroup"), backend: backend,
		pods: map[string]*api.PodSandbox{}, ctrs: map[string]*api.Container{}}
	if f, ok := backend.(*fakeBackend); ok {
		b.fake = f
	}
	for _, d := range []string{"plugins", "conf.d", "cgroup", "bpf"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(b.root, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.syncFn = func(ctx context.Context, cb adaptation.SyncCB) error {
		b.mu.Lock()
		var pods []*api.PodSandbox
		var ctrs []*api.Container
		for _, id := range sortedKeys(b.pods) {
			pods = append(pods, b.pods[id])
		}
		for _, id := range sortedKeys(b.ctrs) {
			ctrs = append(ctrs, b.ctrs[id])
		}
		b.mu.Unlock()
		_, err := cb(ctx, pods, ctrs)
		return err
	}
	b.updateFn = func(context.Context, []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) { return nil, nil }
	b.restartRuntime()
	t.Cleanup(func() {
		b.stopPlugin()
		b.rt.Stop()
	})
	retryDelay = 200 * time.Millisecond
	b.startPlugin(cfg)
	return b
}

// startPlugin connects a new plugin (a restart: nothing of the earlier
// one's memory) and waits for its Synchronize.
func (b *bench) startPlugin(cfg Config) {
	b.t.Helper()
	b.startPluginWith(func(c *Config) {
		c.Default = cfg.Default
		if cfg.StateDir == "-" {
			c.StateDir = ""
		}
	})
}

// startPluginWith starts a plugin with the bench's configuration, as set
// changes it.
func (b *bench) startPluginWith(set func(*Config)) {
	b.t.Helper()
	base := defaultConfig()
	base.CgroupRoot = b.root
	base.StateDir = filepath.Join(b.dir, "state")
	set(&base)
	b.log = &syncBuffer{}
	p, err := NewPlugin(base, b.backend, log.New(b.log, "mthpctl-nri: ", 0))
	if err != nil {
		b.t.Fatal(err)
	}
	b.fakeNode(p, b.nodeTypes)
	b.plugin = p
	b.connect()
}

// fakeNode gives p the bench's node: its cgroup root a cgroup2 mount
// and its bpf directory a bpffs (the file system types statfs would
// say), or what types says of a path.
func (b *bench) fakeNode(p *Plugin, types map[string]int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.node.bpffs = filepath.Join(b.dir, "bpf")
	p.node.fsType = func(path string) (int64, error) {
		if t, ok := types[path]; ok {
			return t, nil
		}
		switch path {
		case b.root:
			return cgroup2Magic, nil
		case filepath.Join(b.dir, "bpf"):
			return bpffsMagic, nil
		}
		return fsType(path)
	}
}

// connect connects b.plugin to the runtime and waits for its
// Synchronize to be done.
func (b *bench) connect() {
	b.t.Helper()
	synced := make(chan struct{}, 1)
	b.plugin.mu.Lock()
	b.plugin.Synced = func() {
		select {
		case synced <- struct{}{}:
		default:
		}
	}
	b.plugin.mu.Unlock()
	s, err := stub.New(b.plugin, stub.WithPluginName("mthpctl"), stub.WithPluginIdx("50"),
		stub.WithSocketPath(filepath.Join(b.dir, "nri.sock")))
	if err != nil {
		b.t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		b.t.Fatal(err)
	}
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		b.t.Fatal("the plugin was not synchronized in 10s")
	}
	// the runtime has registered the plugin once a sync block is granted
	b.rt.BlockPluginSync().Unblock()
	b.stub = s
}

// restartRuntime starts a runtime on the bench's socket (again: a
// restart of containerd).
func (b *bench) restartRuntime() {
	b.t.Helper()
	rt, err := adaptation.New("containerd", "2.1.0-test", b.syncFn, b.updateFn,
		adaptation.WithPluginPath(filepath.Join(b.dir, "plugins")),
		adaptation.WithPluginConfigPath(filepath.Join(b.dir, "conf.d")),
		adaptation.WithSocketPath(filepath.Join(b.dir, "nri.sock")))
	if err != nil {
		b.t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.rt = rt
}

// reconnect: the plugin's connection closed and made again (the same
// plugin, its memory kept).
func (b *bench) reconnect() {
	b.t.Helper()
	if b.stub != nil {
		b.stub.Stop()
		b.stub.Wait()
	}
	b.connect()
}

func (b *bench) stopPlugin() {
	if b.stub != nil {
		b.stub.Stop()
		b.stub.Wait()
		b.stub = nil
	}
	if b.plugin != nil {
		b.plugin.Close()
	}
}

// uid of pod n, and its cgroup in the systemd driver's layout.
func podUID(n int) string { return fmt.Sprintf("%08x-1111-2222-3333-%012x", n, n) }

func systemdSlice(n int) string {
	return "kubepods-burstable-pod" + strings.ReplaceAll(podUID(n), "-", "_") + ".slice"
}

func systemdPodDir(n int) string {
	return "kubepods.slice/kubepods-burstable.slice/" + systemdSlice(n)
}

// newPod makes pod n; with mkdir its cgroup directory exists.
func (b *bench) newPod(n int, ann map[string]string, mkdir bool) *api.PodSandbox {
	b.t.Helper()
	pod := &api.PodSandbox{
		Id: fmt.Sprintf("sandbox-%d", n), Name: fmt.Sprintf("web-%d", n), Uid: podUID(n),
		Namespace: "default", Annotations: ann,
		Linux: &api.LinuxPodSandbox{CgroupParent: systemdSlice(n)},
	}
	if mkdir {
		b.mkdir(systemdPodDir(n))
	}
	return pod
}

func (b *bench) mkdir(rel string) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Join(b.root, rel), 0o755); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bench) run(pod *api.PodSandbox) {
	b.t.Helper()
	b.mu.Lock()
	b.pods[pod.Id] = pod
	b.mu.Unlock()
	if err := b.rt.RunPodSandbox(context.Background(), &api.RunPodSandboxRequest{Pod: pod}); err != nil {
		b.t.Fatalf("RunPodSandbox %s: %v", pod.Name, err)
	}
}

func (b *bench) create(pod *api.PodSandbox, name string) *api.Container {
	b.t.Helper()
	id := pod.Id + "-" + name
	// as containerd makes it: with runc's SystemdCgroup the slice (the
	// last element of the kubelet's expanded path) ":cri-containerd:" ID,
	// else the parent's path and ID
	parent := pod.Linux.CgroupParent
	cp := parent + "/" + id
	if strings.HasSuffix(parent, ".slice") {
		cp = filepath.Base(parent) + ":cri-containerd:" + id
	}
	ctr := &api.Container{Id: id, PodSandboxId: pod.Id, Name: name, Linux: &api.LinuxContainer{CgroupsPath: cp}}
	b.mu.Lock()
	b.ctrs[id] = ctr
	b.mu.Unlock()
	if _, err := b.rt.CreateContainer(context.Background(), &api.CreateContainerRequest{Pod: pod, Container: ctr}); err != nil {
		b.t.Fatalf("CreateContainer %s/%s: %v", pod.Name, name, err)
	}
	return ctr
}

func (b *bench) start(pod *api.PodSandbox, ctr *api.Container) {
	b.t.Helper()
	if err := b.rt.StartContainer(context.Background(), &api.StartContainerRequest{Pod: pod, Container: ctr}); err != nil {
		b.t.Fatalf("StartContainer %s/%s: %v", pod.Name, ctr.Name, err)
	}
}

func (b *bench) update(pod *api.PodSandbox) {
	b.t.Helper()
	if _, err := b.rt.UpdatePodSandbox(context.Background(), &api.UpdatePodSandboxRequest{Pod: pod}); err != nil {
		b.t.Fatalf("UpdatePodSandbox %s: %v", pod.Name, err)
	}
}

// remove stops and removes a pod (its containers first), as the kubelet
// does.
func (b *bench) remove(pod *api.PodSandbox) {
	b.t.Helper()
	ctx := context.Background()
	if err := b.rt.StopPodSandbox(ctx, &api.StopPodSandboxRequest{Pod: pod}); err != nil {
		b.t.Fatalf("StopPodSandbox %s: %v", pod.Name, err)
	}
	b.mu.Lock()
	var ctrs []*api.Container
	for id, c := range b.ctrs {
		if c.PodSandboxId == pod.Id {
			ctrs = append(ctrs, c)
			delete(b.ctrs, id)
		}
	}
	delete(b.pods, pod.Id)
	b.mu.Unlock()
	for _, c := range ctrs {
		if err := b.rt.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: pod, Container: c}); err != nil {
			b.t.Fatalf("RemoveContainer: %v", err)
		}
	}
	if err := b.rt.RemovePodSandbox(ctx, &api.RemovePodSandboxRequest{Pod: pod}); err != nil {
		b.t.Fatalf("RemovePodSandbox %s: %v", pod.Name, err)
	}
}

// forget drops a pod from the runtime without events (removed while the
// plugin was not connected).
func (b *bench) forget(pod *api.PodSandbox) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pods, pod.Id)
	for id, c := range b.ctrs {
		if c.PodSandboxId == pod.Id {
			delete(b.ctrs, id)
		}
	}
}

// add puts a pod in the runtime without events (started while the
// plugin was not connected).
func (b *bench) add(pod *api.PodSandbox) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pods[pod.Id] = pod
}

func (b *bench) wantState(want string) {
	b.t.Helper()
	if !b.plugin.waitIdle(10 * time.Second) {
		b.t.Fatalf("the plugin's worker is still busy after 10s; log:\n%s", b.log)
	}
	if got := b.fake.state(b.root); got != want {
		b.t.Fatalf("attached policies:\n got  %q\n want %q\nlog:\n%s", got, want, b.log)
	}
}
