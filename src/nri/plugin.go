// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The NRI plugin: a pod's policy spec (its annotation, or the node
// default) attached to the pod's cgroup, and a container's own spec (the
// annotation's container scope) to the container's cgroup; replaced when
// the spec changes; detached when the last sandbox or container using the
// cgroup stops.
//
// The state is kept per cgroup, with the sandboxes and containers that use
// it: a pod's sandbox re-created by the kubelet shares the pod cgroup with
// the old one, whose stop and removal must not take the policy away.
//
// No hook runs mthpctl. A hook records what the pods want, marks the
// cgroups concerned and waits at most HookWaitMs for the one worker that
// runs mthpctl, one cgroup at a time; whatever mthpctl does, the hook
// answers within the runtime's request timeout, and what is not done by
// then is caught up. No hook ever fails a pod: what goes wrong is logged
// once, counted in /metrics, and retried where a retry can help.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/api"
)

// Config of the plugin (a YAML file, or the config NRI passes).
type Config struct {
	// Default is the spec of pods without the annotation ("" or
	// "none": no policy).
	Default string `json:"default"`
	// Annotation is the pod annotation read (mthpctl.io/policy); its
	// scopes are NAME.PREFIX/pod and NAME.PREFIX/container.CTR
	// (policy.mthpctl.io/pod, policy.mthpctl.io/container.CTR), keys
	// with one slash as Kubernetes requires (annotation.go).
	Annotation string `json:"annotation"`
	// CgroupRoot is the cgroup2 mount (/sys/fs/cgroup).
	CgroupRoot string `json:"cgroupRoot"`
	// Mthpctl is the path of the mthpctl binary.
	Mthpctl string `json:"mthpctl"`
	// MetricsAddress to serve /metrics on ("" turns it off).
	MetricsAddress string `json:"metricsAddress"`
	// TimeoutMs bounds each mthpctl command (it runs off the hooks'
	// path: the runtime's request timeout does not limit it).
	TimeoutMs int `json:"timeoutMs"`
	// StateDir keeps the ids of the cgroups the plugin attached to,
	// across its restarts (state.go; "" keeps them in memory only).
	StateDir string `json:"stateDir"`
	// HookWaitMs is how long a hook waits for its pod's attach before
	// it answers (below containerd's plugin_request_timeout, 2s by
	// default); the attach goes on after that.
	HookWaitMs int `json:"hookWaitMs"`
}

func defaultConfig() Config {
	return Config{
		Annotation:     "mthpctl.io/policy",
		CgroupRoot:     "/sys/fs/cgroup",
		Mthpctl:        "/usr/local/sbin/mthpctl",
		MetricsAddress: ":9818",
		TimeoutMs:      10000,
		HookWaitMs:     1000,
		StateDir:       "/run/mthpctl-nri",
	}
}

// The reasons an attach fails, the label of mthpctl_nri_attach_errors_total.
const (
	reasonAnnotation = "annotation" // the spec is malformed or mthpctl refused it
	reasonCgroup     = "cgroup"     // not the pod's (container's) own cgroup, or refused by mthpctl
	reasonTimeout    = "timeout"    // mthpctl killed at TimeoutMs
	reasonMthpctl    = "mthpctl"    // any other failure of mthpctl
	// the pod cgroup does not exist while a container of the pod runs
	// (a cgroup root or driver the plugin did not expect)
	reasonCgroupMissing = "cgroup-missing"
)

var errorReasons = []string{reasonAnnotation, reasonCgroup, reasonCgroupMissing, reasonTimeout, reasonMthpctl}

// Retries of an attach that timed out or failed: the worker tries again
// after retryDelay, up to maxRetries times.
var retryDelay = 5 * time.Second

const maxRetries = 5

type podRef struct {
	namespace, pod, container string
}

// target is a cgroup the plugin manages: a pod cgroup or a container's
// own cgroup.
type target struct {
	cgroup   string
	ref      podRef          // names for logs and metrics
	users    map[string]bool // "sandbox:ID" or "container:ID" that use it
	want     *Spec           // nil: no policy
	wantText string          // what want came from, for messages
	wantKey  string          // the annotation key of want, for messages
	attached *Params         // nil: nothing attached (as far as known)
	// the object the attached policy runs (status' object_hash; "": not
	// known): another than this mthpctl's is replaced (an upgrade)
	object   string
	id       uint64 // cgroup id, once attached (detach after removal)
	reported string // a refused spec already logged
	// a cgroup mthpctl refused already logged
	reportedCgroup bool
	// refused: the reason ("annotation") while the scope's annotation is
	// refused (malformed, refused by mthpctl, or only in the old
	// two-slash form) and the fallback applies; cleared when it is
	// fixed, removed or none
	refused        string
	mthpctlRefused string            // the spec mthpctl refused (exit 1): not tried again
	oldKeys        map[string]string // annotations of the old two-slash form logged: key -> value
	failed         string            // the reason of the last failure ("" after success)
	retries        int
	removed        bool // a removed cgroup, known by id only
}

func (t *target) name() string {
	s := t.ref.namespace + "/" + t.ref.pod
	if t.ref.container != "" {
		s += " container " + t.ref.container
	}
	return s
}

type ctrInfo struct {
	name   string
	cgroup string // its own cgroup directory ("" if not known or refused)
}

type sandbox struct {
	id, uid, namespace, name string
	cgroup                   string // the pod cgroup ("" until known)
	parent                   string // the runtime's cgroup parent, for messages
	ann                      map[string]string
	containers               map[string]ctrInfo
	reported                 string          // a refused cgroup already logged
	ctrReported              map[string]bool // containers (by id) whose missing cgroup was logged
	missingReported          bool            // the pod cgroup's absence logged
}

// Plugin holds the sandboxes it has seen, the cgroups they use and what
// it attached to them.
type Plugin struct {
	mu        sync.Mutex
	cfg       Config
	def       *Spec // the node default, parsed
	backend   Backend
	log       *log.Logger
	sandboxes map[string]*sandbox
	targets   map[string]*target
	// the worker's queue: cgroups to settle (bounded by the number of
	// cgroups: a cgroup is queued once however often it is marked)
	dirty    map[string]bool
	current  string        // the cgroup the worker is settling
	progress chan struct{} // closed (and replaced) after each step
	wake     chan struct{}
	resync   bool // a Synchronize waits for the worker's status
	// syncWaiting: a Synchronize's work is not all done yet
	syncWaiting bool
	gone        uint64 // policies of removed cgroups seen at the last resync
	// the cgroups the plugin attached to, by id, in memory and in
	// StateDir (state.go): their pins are removed once the cgroup is
	// gone (detach --cgroup-id)
	records       map[uint64]string
	recordsLoaded bool
	stateFailed   bool
	// during a Synchronize, the state before it: what was logged and
	// counted of a pod is not logged and counted again at a reconnect
	prevTargets   map[string]*target
	prevSandboxes map[string]*sandbox
	errors        map[string]uint64
	supported     *bool // the kernel has bpf_mthp_ops (nil: not known yet)
	// object: the built-in policy object this mthpctl attaches (status'
	// builtin_object_hash at the last resync; "": not known, nothing is
	// replaced for its object)
	object string
	// the node's cgroup2 and bpffs (checkNode), checked at each
	// Synchronize: nodeReason is what it lacks ("" nothing, nil not
	// checked yet); the plugin is idle while it lacks something
	node       nodeProbe
	nodeReason *string
	connected  bool
	stop       context.CancelFunc
	// Synced, if set, is called when the worker has done what a
	// Synchronize asked (tests).
	Synced func()
}

// NewPlugin checks the configuration (a node default that does not parse
// is refused here, at start, rather than for every pod) and starts the
// worker.
func NewPlugin(cfg Config, b Backend, logger *log.Logger) (*Plugin, error) {
	p := &Plugin{cfg: cfg, backend: b, log: logger, sandboxes: map[string]*sandbox{},
		targets: map[string]*target{}, dirty: map[string]bool{}, records: map[uint64]string{},
		progress: make(chan struct{}), wake: make(chan struct{}, 1), errors: map[string]uint64{},
		node: nodeProbe{cgroupRoot: cfg.CgroupRoot, bpffs: defaultBPFFS}}
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	if err := p.setDefault(cfg.Default); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go p.worker(ctx)
	return p, nil
}

// minTimeoutMs is the least timeoutMs: 0 or less would let an mthpctl
// that never returns hold the worker, and with it every pod's attach,
// for ever; below a second a verifier's load on a busy node fails.
const minTimeoutMs = 1000

// checkConfig refuses what would fail every pod later: annotation keys
// Kubernetes does not accept, a command timeout that is none or too
// short, a negative hook wait.
func checkConfig(cfg Config) error {
	if cfg.TimeoutMs < minTimeoutMs {
		return fmt.Errorf("timeoutMs %d: give at least %d (the time one mthpctl command may take "+
			"before it is killed; 0 would let a stuck one hold every attach)", cfg.TimeoutMs, minTimeoutMs)
	}
	if cfg.HookWaitMs < 0 {
		return fmt.Errorf("hookWaitMs %d: give 0 or more", cfg.HookWaitMs)
	}
	return checkAnnotationKey(cfg.Annotation)
}

// Close stops the worker (tests; the plugin's process just exits).
func (p *Plugin) Close() { p.stop() }

func (p *Plugin) setDefault(d string) error {
	d = strings.TrimSpace(d)
	if d == "" || d == "none" {
		p.def = nil
		return nil
	}
	s, err := ParseSpec(d)
	if err != nil {
		return fmt.Errorf("default %q: %v", d, err)
	}
	p.def = &s
	return nil
}

func (p *Plugin) logf(format string, args ...any) { p.log.Printf(format, args...) }

func (p *Plugin) fallbackText() string {
	if p.def == nil {
		return "no policy"
	}
	return fmt.Sprintf("the node default %q", p.def.String())
}

// runsWith says what a pod (or container) whose spec was refused gets.
func (p *Plugin) runsWith(t *target) string {
	if t.ref.container != "" {
		return "the container runs with its pod's policy"
	}
	return "the pod runs with " + p.fallbackText()
}

func (p *Plugin) countError(t *target, reason string) {
	p.errors[reason]++
	t.failed = reason
}

// annotation finds the spec text of a scope: the pod's (SCOPE/pod, then
// KEY) or a container's own (SCOPE/container.NAME only: a container
// without one runs under its pod's policy).
func (p *Plugin) annotation(ann map[string]string, container string) (string, string, bool) {
	key := p.cfg.Annotation
	if container != "" {
		k := containerKey(key, container)
		v, ok := ann[k]
		return k, v, ok
	}
	for _, k := range []string{podKey(key), key} {
		if v, ok := ann[k]; ok {
			return k, v, true
		}
	}
	return key, "", false
}

// refuseOldKeys logs (once for each key and value, counted as an
// annotation error) the keys of the scopes' first form, KEY/pod and
// KEY/container.NAME, which have two slashes: the API server refuses such
// a pod, and the plugin does not read them. The line names the key to
// write instead. It says whether the pod scope's old key is among them.
func (p *Plugin) refuseOldKeys(t *target, ann map[string]string) bool {
	key := p.cfg.Annotation
	pod := false
	if scopePrefix(key) == key {
		// a key without a prefix: its scopes' keys are the first form's
		return false
	}
	for _, k := range sortedKeys(ann) {
		rest, ok := strings.CutPrefix(k, key+"/")
		if !ok {
			continue
		}
		var instead string
		switch {
		case rest == "pod":
			instead, pod = podKey(key), true
		case strings.HasPrefix(rest, "container."):
			instead = containerKey(key, strings.TrimPrefix(rest, "container."))
		default:
			continue
		}
		if t.oldKeys == nil {
			t.oldKeys = map[string]string{}
		}
		if r, seen := t.oldKeys[k]; seen && r == ann[k] {
			continue
		}
		t.oldKeys[k] = ann[k]
		p.errors[reasonAnnotation]++
		p.logf("pod %s: annotation %s=%q ignored: Kubernetes refuses a key with two slashes; write %s",
			t.name(), k, ann[k], instead)
	}
	return pod
}

// desire sets t.want from the annotation of its scope or, for a pod
// cgroup, the node default. A malformed annotation is logged once, with
// its fix, counted, and the fallback used.
func (p *Plugin) desire(t *target, ann map[string]string) {
	oldPod := false
	if t.ref.container == "" {
		oldPod = p.refuseOldKeys(t, ann)
	}
	key, v, ok := p.annotation(ann, t.ref.container)
	t.wantKey = key
	v = strings.TrimSpace(v)
	fallback, fallbackText := p.def, "node default"
	if t.ref.container != "" {
		fallback, fallbackText = nil, "the pod's policy"
	}
	defer func() {
		if t.want == nil {
			// no attach to come: an earlier failure is no more
			t.failed = ""
		}
	}()
	switch {
	case !ok:
		t.want, t.wantText = fallback, fallbackText
		t.refused = ""
		if oldPod {
			t.refused = reasonAnnotation
		}
	case v == "none":
		t.want, t.wantText = nil, "annotation"
		t.refused = ""
	default:
		s, err := ParseSpec(v)
		if err == nil && s.String() == t.mthpctlRefused {
			// refused by mthpctl before: the fallback, without asking again
			t.want, t.wantText = fallback, fallbackText
			t.refused = reasonAnnotation
			return
		}
		if err == nil {
			t.want, t.wantText = &s, "annotation"
			t.refused = ""
			return
		}
		t.want, t.wantText = fallback, fallbackText
		t.refused = reasonAnnotation
		if t.reported != v {
			t.reported = v
			p.countError(t, reasonAnnotation)
			p.logf("pod %s: annotation %s=%q: %v; %s", t.name(), key, v, err, p.runsWith(t))
		}
	}
}

// use records that user uses cgroup, and queues the cgroup.
func (p *Plugin) use(cg, user string, ref podRef, ann map[string]string) *target {
	t := p.targets[cg]
	if t == nil {
		t = &target{cgroup: cg, users: map[string]bool{}}
		if o := p.prevTargets[cg]; o != nil {
			t.reported, t.reportedCgroup, t.oldKeys = o.reported, o.reportedCgroup, o.oldKeys
			t.failed, t.mthpctlRefused = o.failed, o.mthpctlRefused
		}
		p.targets[cg] = t
	}
	t.users[user] = true
	t.ref = ref
	p.desire(t, ann)
	p.mark(cg)
	return t
}

// release: user no longer uses cgroup; the last one gone, the policy is
// detached.
func (p *Plugin) release(cg, user string) {
	if t := p.targets[cg]; t != nil && t.users[user] {
		delete(t.users, user)
		p.mark(cg)
	}
}

func (p *Plugin) mark(cg string) {
	p.dirty[cg] = true
	p.kick()
}

func (p *Plugin) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// upsert records a sandbox from NRI's view of it, and its use of the pod
// cgroup.
func (p *Plugin) upsert(pod *api.PodSandbox) *sandbox {
	sb := p.sandboxes[pod.GetId()]
	if sb == nil {
		sb = &sandbox{id: pod.GetId(), containers: map[string]ctrInfo{}, ctrReported: map[string]bool{}}
		if o := p.prevSandboxes[pod.GetId()]; o != nil {
			sb.reported, sb.ctrReported, sb.missingReported = o.reported, o.ctrReported, o.missingReported
		}
		p.sandboxes[pod.GetId()] = sb
	}
	sb.namespace, sb.name, sb.uid, sb.ann = pod.GetNamespace(), pod.GetName(), pod.GetUid(), pod.GetAnnotations()
	sb.parent = pod.GetLinux().GetCgroupParent()
	if sb.cgroup == "" {
		if parent := pod.GetLinux().GetCgroupParent(); parent != "" {
			p.setPodCgroup(sb, podCgroupOfParent, parent)
		}
	}
	if sb.cgroup != "" {
		p.use(sb.cgroup, "sandbox:"+sb.id, podRef{namespace: sb.namespace, pod: sb.name}, sb.ann)
	}
	return sb
}

// setPodCgroup resolves the pod cgroup and keeps it if it is the pod's
// own; a refusal is logged once and counted.
func (p *Plugin) setPodCgroup(sb *sandbox, resolve func(root, path string) (string, error), path string) {
	cg, err := resolve(p.cfg.CgroupRoot, path)
	if err == nil {
		err = ownPodCgroup(p.cfg.CgroupRoot, cg, sb.uid)
	}
	if err == nil {
		sb.cgroup = cg
		return
	}
	if sb.reported != path {
		sb.reported = path
		p.errors[reasonCgroup]++
		p.logf("pod %s/%s: cgroup %q: %v; no policy for this pod", sb.namespace, sb.name, path, err)
	}
}

func (p *Plugin) addContainer(sb *sandbox, ctr *api.Container) ctrInfo {
	cp := ctr.GetLinux().GetCgroupsPath()
	ci := ctrInfo{name: ctr.GetName()}
	if cp != "" {
		if sb.cgroup == "" {
			p.setPodCgroup(sb, podCgroupOfContainer, cp)
			if sb.cgroup != "" {
				p.use(sb.cgroup, "sandbox:"+sb.id, podRef{namespace: sb.namespace, pod: sb.name}, sb.ann)
			}
		}
		if own, err := containerCgroup(p.cfg.CgroupRoot, cp); err == nil && sb.cgroup != "" &&
			filepath.Dir(own) == sb.cgroup {
			ci.cgroup = own
		}
	}
	sb.containers[ctr.GetId()] = ci
	return ci
}

// useContainer: a container with an annotation of its own uses its own
// cgroup.
func (p *Plugin) useContainer(sb *sandbox, ctrID string, ci ctrInfo) {
	if _, _, ok := p.annotation(sb.ann, ci.name); !ok {
		return
	}
	ref := podRef{namespace: sb.namespace, pod: sb.name, container: ci.name}
	if ci.cgroup == "" {
		if !sb.ctrReported[ctrID] {
			sb.ctrReported[ctrID] = true
			t := &target{ref: ref}
			p.countError(t, reasonCgroup)
			p.logf("pod %s: no cgroup of its own below the pod's: no policy of its own", t.name())
		}
		return
	}
	p.use(ci.cgroup, "container:"+ctrID, ref, sb.ann)
}

// waitSettled waits, at most HookWaitMs, until the worker has settled cg.
func (p *Plugin) waitSettled(cg string) {
	if cg == "" {
		return
	}
	deadline := time.Now().Add(time.Duration(p.cfg.HookWaitMs) * time.Millisecond)
	for {
		p.mu.Lock()
		done := !p.dirty[cg] && p.current != cg
		ch := p.progress
		p.mu.Unlock()
		left := time.Until(deadline)
		if done || left <= 0 {
			return
		}
		select {
		case <-ch:
		case <-time.After(left):
			return
		}
	}
}

// --- the worker --------------------------------------------------------

type actionKind int

const (
	actNone actionKind = iota
	actAttach
	actDetach
)

type action struct {
	kind    actionKind
	cg      string
	spec    Spec
	want    Params
	replace bool
	// roll: the parameters are the same, the object another build's (the
	// attached one): replaced by this mthpctl's
	roll bool
	from string // the object it ran
	id   uint64
	byID bool // the cgroup is gone: detach by id at once
}

func (p *Plugin) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		for ctx.Err() == nil && p.step(ctx) {
		}
	}
}

// step does one thing (a resync's status, or settling one cgroup) and
// says whether there may be more.
func (p *Plugin) step(ctx context.Context) bool {
	p.mu.Lock()
	if p.resync {
		p.mu.Unlock()
		st, err := p.backend.Status(ctx)
		p.mu.Lock()
		p.applyStatus(st, err)
		p.resync = false
		p.stepped()
		p.mu.Unlock()
		return true
	}
	cg := p.nextDirty()
	if cg == "" {
		var synced func()
		if p.syncWaiting {
			synced, p.syncWaiting = p.Synced, false
		}
		p.stepped()
		p.mu.Unlock()
		if synced != nil {
			synced()
		}
		return false
	}
	delete(p.dirty, cg)
	p.current = cg
	act := p.plan(cg)
	p.mu.Unlock()

	err := p.do(ctx, &act)

	p.mu.Lock()
	p.record(act, err)
	p.current = ""
	p.stepped()
	p.mu.Unlock()
	return true
}

func (p *Plugin) stepped() {
	close(p.progress)
	p.progress = make(chan struct{})
}

func (p *Plugin) nextDirty() string {
	var first string
	for cg := range p.dirty {
		if first == "" || cg < first {
			first = cg
		}
	}
	return first
}

// plan decides what cg needs (under the lock).
func (p *Plugin) plan(cg string) action {
	t := p.targets[cg]
	if t == nil {
		return action{}
	}
	if p.supported != nil && !*p.supported {
		return action{}
	}
	if !p.nodeOK() {
		return action{}
	}
	var want *Spec
	if len(t.users) > 0 {
		want = t.want
	}
	if want == nil {
		if t.attached == nil {
			if len(t.users) == 0 {
				delete(p.targets, cg)
			}
			return action{}
		}
		return action{kind: actDetach, cg: cg, id: t.id, byID: t.removed}
	}
	prm := want.Params()
	if t.attached != nil && t.attached.Equal(prm) {
		if p.object == "" || t.object == p.object {
			return action{}
		}
		// an upgrade: the pod runs an object another mthpctl attached
		return action{kind: actAttach, cg: cg, spec: *want, want: prm, replace: true, roll: true, from: t.object}
	}
	return action{kind: actAttach, cg: cg, spec: *want, want: prm, replace: t.attached != nil}
}

// do runs mthpctl for act, without the lock.
func (p *Plugin) do(ctx context.Context, act *action) error {
	switch act.kind {
	case actAttach:
		err := p.backend.Attach(ctx, act.cg, act.spec, act.replace)
		if !act.replace && exitCode(err) == ExitState {
			// attached by an earlier run or by hand: replace it
			act.replace = true
			err = p.backend.Attach(ctx, act.cg, act.spec, true)
		}
		if err == nil {
			act.id = cgroupID(act.cg)
		}
		return err
	case actDetach:
		if act.byID {
			return p.backend.DetachID(ctx, act.id)
		}
		err := p.backend.Detach(ctx, act.cg)
		if exitCode(err) == ExitCgroup && act.id != 0 {
			// the cgroup is gone: its pins are not, until removed by id
			err = p.backend.DetachID(ctx, act.id)
		}
		return err
	}
	return nil
}

// cgroupID is the cgroup2 directory's inode number, the cgroup id
// mthpctl pins under (0 if it cannot be read).
func cgroupID(cg string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(cg, &st) != nil {
		return 0
	}
	return st.Ino
}

// record takes the outcome of act (under the lock).
func (p *Plugin) record(act action, err error) {
	t := p.targets[act.cg]
	if t == nil || act.kind == actNone {
		return
	}
	switch act.kind {
	case actAttach:
		p.recordAttach(t, act, err)
	case actDetach:
		switch code := exitCode(err); {
		case err == nil:
			p.logf("pod %s: detached the policy of %s", t.name(), t.cgroup)
		case code == ExitState, code == ExitCgroup:
			// nothing attached, or the cgroup and its pins are gone
		default:
			p.logf("pod %s: cannot detach the policy of %s: %v", t.name(), t.cgroup, err)
			p.retry(t)
			return
		}
		p.dropRecord(t.id)
		t.attached, t.id = nil, 0
		if len(t.users) == 0 {
			delete(p.targets, t.cgroup)
		}
	}
}

func (p *Plugin) recordAttach(t *target, act action, err error) {
	code := exitCode(err)
	switch {
	case err == nil:
		t.attached, t.id, t.failed, t.retries = &act.want, act.id, "", 0
		t.object = p.object
		p.addRecord(act.id, t.cgroup)
		if act.roll {
			from := act.from
			if from == "" {
				from = "not known"
			}
			p.logf("pod %s: policy %q on %s replaced by this mthpctl's object %s (it ran object %s)",
				t.name(), act.spec.String(), t.cgroup, p.object, from)
			break
		}
		p.logf("pod %s: %s policy %q on %s (%s)", t.name(),
			map[bool]string{true: "replaced with", false: "attached"}[act.replace],
			act.spec.String(), t.cgroup, t.wantText)
	case code == ExitCgroup:
		// not created yet: the next event of its pod tries again; a
		// directory that exists and is refused is worth a line
		if _, serr := os.Stat(t.cgroup); serr == nil && !t.reportedCgroup {
			t.reportedCgroup = true
			p.countError(t, reasonCgroup)
			p.logf("pod %s: cannot attach to %s: %s", t.name(), t.cgroup, err.(*ExitError).Msg)
		}
	case code == ExitUsage && t.wantText == "annotation":
		spec := act.spec.String()
		if t.reported != spec {
			t.reported = spec
			p.countError(t, reasonAnnotation)
			p.logf("pod %s: annotation %s=%q refused by mthpctl: %s; %s",
				t.name(), t.wantKey, spec, err.(*ExitError).Msg, p.runsWith(t))
		}
		t.mthpctlRefused, t.refused = spec, reasonAnnotation
		if t.ref.container != "" {
			t.want, t.wantText = nil, "the pod's policy"
		} else {
			t.want, t.wantText = p.def, "node default"
		}
		p.mark(t.cgroup)
	default:
		reason := reasonMthpctl
		if code < 0 && strings.Contains(err.Error(), "killed") {
			reason = reasonTimeout
		}
		p.countError(t, reason)
		p.logf("pod %s: cannot attach %q to %s: %v", t.name(), act.spec.String(), t.cgroup, err)
		p.retry(t)
	}
}

// retry queues t again after retryDelay, a bounded number of times.
func (p *Plugin) retry(t *target) {
	if t.retries >= maxRetries {
		return
	}
	t.retries++
	cg := t.cgroup
	time.AfterFunc(retryDelay, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.targets[cg] == t {
			p.mark(cg)
		}
	})
}

// applyStatus takes what is attached (a resync, under the lock): the
// policies of the cgroups in use are known attached; policies on pod
// cgroups (and their containers' cgroups) nobody uses are detached; the
// pins of removed cgroups the plugin attached to are removed.
func (p *Plugin) applyStatus(st StatusReport, err error) {
	if err != nil {
		p.logf("synchronize: %v; attaching without knowing what is attached", err)
	}
	if st.Supported != nil && !*st.Supported && (p.supported == nil || *p.supported) {
		p.logf("this node's kernel has no bpf_mthp_ops (the mthpctl series): the plugin stays idle " +
			"and attaches nothing; label only the nodes with the series mthpctl.io/bpf-mthp-ops=true " +
			"(the chart's nodeSelector)")
	}
	if st.Supported != nil {
		p.supported = st.Supported
	}
	if err == nil {
		p.object = st.Object
	}
	p.gone = 0
	leaked, removed := 0, 0
	listed := map[uint64]bool{}
	for _, pol := range st.Policies {
		listed[pol.CgroupID] = true
		if pol.Cgroup == nil {
			if cg, ok := p.records[pol.CgroupID]; ok {
				// a cgroup the plugin attached to (this process or an
				// earlier one: StateDir), removed: its pins go
				t := &target{cgroup: fmt.Sprintf("(cgroup id %d)", pol.CgroupID), users: map[string]bool{},
					attached: &Params{}, id: pol.CgroupID, ref: podRef{namespace: "(gone)", pod: filepath.Base(cg)},
					removed: true}
				p.targets[t.cgroup] = t
				p.mark(t.cgroup)
				removed++
			} else {
				p.gone++
			}
			continue
		}
		cg := filepath.Clean(*pol.Cgroup)
		prm := pol.ParamsOf()
		obj := ""
		if pol.ObjectHash != nil {
			obj = *pol.ObjectHash
		}
		if t := p.targets[cg]; t != nil {
			t.attached, t.id, t.object = &prm, pol.CgroupID, obj
			// the pod's: recorded, if an earlier plugin did not
			p.addRecord(pol.CgroupID, cg)
			continue
		}
		if p.isPodCgroup(cg) || p.isPodCgroup(filepath.Dir(cg)) {
			// removed while the plugin was away
			p.targets[cg] = &target{cgroup: cg, users: map[string]bool{}, attached: &prm, id: pol.CgroupID,
				ref: podRef{namespace: "(gone)", pod: filepath.Base(cg)}}
			p.mark(cg)
			leaked++
		}
	}
	if err == nil {
		// records of what is no longer pinned (detached by hand)
		for id := range p.records {
			if !listed[id] {
				p.dropRecord(id)
			}
		}
	}
	if p.gone > 0 {
		p.logf("synchronize: %d policies of removed cgroups the plugin did not attach are pinned still; "+
			"mthpctl detach --cgroup-id removes one, detach --all all (with every other policy)", p.gone)
	}
	p.logf("synchronize: %d sandboxes, %d policies attached, %d of pods that are gone, %d of removed cgroups",
		len(p.sandboxes), len(st.Policies), leaked, removed)
}

// A pod cgroup: pod<UID> (cgroupfs) or <qos>-pod<UID>.slice (systemd)
// under the cgroup root.
var podCgroupRe = regexp.MustCompile(`^(.*-)?pod[0-9a-fA-F]{8}([-_][0-9a-fA-F]{4}){3}[-_][0-9a-fA-F]{12}(\.slice)?$`)

func (p *Plugin) isPodCgroup(cg string) bool {
	root := filepath.Clean(p.cfg.CgroupRoot) + "/"
	return strings.HasPrefix(cg, root) && podCgroupRe.MatchString(filepath.Base(cg))
}

// --- NRI events -------------------------------------------------------

// Configure takes the plugin's configuration when NRI passes one (a
// pre-installed plugin's conf file); the events are those implemented.
func (p *Plugin) Configure(_ context.Context, config, runtime, version string) (api.EventMask, error) {
	p.logf("connected to %s %s", runtime, version)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.connected = true
	if strings.TrimSpace(config) == "" {
		return 0, nil
	}
	cfg := p.cfg
	if err := parseConfig([]byte(config), &cfg); err != nil {
		return 0, err
	}
	if err := checkConfig(cfg); err != nil {
		return 0, err
	}
	if err := p.setDefault(cfg.Default); err != nil {
		return 0, err
	}
	p.cfg = cfg
	p.node.cgroupRoot = cfg.CgroupRoot
	if b, ok := p.backend.(interface{ setConfig(Config) }); ok {
		b.setConfig(cfg)
	}
	return 0, nil
}

// nodeOK: the node has what the plugin needs, or it is not known yet.
func (p *Plugin) nodeOK() bool { return p.nodeReason == nil || *p.nodeReason == "" }

// checkNode checks the node (under the lock) and logs what it lacks, once
// for each change.
func (p *Plugin) checkNode() {
	reason, msg := checkNode(p.node)
	if p.nodeReason != nil && *p.nodeReason == reason {
		return
	}
	switch {
	case reason != "":
		p.logf("this node does not suit the plugin (%s): %s; the plugin stays idle and attaches nothing", reason, msg)
	case p.nodeReason != nil:
		p.logf("this node suits the plugin now (cgroup2 with the memory controller, bpffs)")
	}
	p.nodeReason = &reason
}

// podCgroupMissing says, once for the pod, that its cgroup does not exist
// while a container of the pod runs or starts (it exists by then: the
// container's is below it): the cgroup root or the cgroup driver is not
// the one the plugin expects. Only for a pod that wants a policy.
func (p *Plugin) podCgroupMissing(sb *sandbox, ctr string) {
	if sb.cgroup == "" || sb.missingReported || !p.nodeOK() {
		return
	}
	t := p.targets[sb.cgroup]
	if t == nil || t.want == nil {
		return
	}
	if _, err := os.Stat(sb.cgroup); !os.IsNotExist(err) {
		return
	}
	sb.missingReported = true
	p.countError(t, reasonCgroupMissing)
	p.logf("pod %s: its cgroup %s does not exist while its container %s starts: no policy for this pod "+
		"(is cgroupRoot %s the host's cgroup2 mount, and does the runtime use the cgroup driver whose path "+
		"it passed, %q?)", t.name(), sb.cgroup, ctr, p.cfg.CgroupRoot, sb.parent)
}

// Synchronize takes the runtime's pods and containers (at every connect,
// after a restart of the plugin or of the runtime too) and answers at
// once: the worker then reads what is attached (mthpctl status) and makes
// the attached policies match: one for each cgroup in use that wants one,
// none on pod cgroups nobody uses (removed while the plugin was away).
func (p *Plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// what was attached is known by cgroup id for removed cgroups
	// (records; an earlier process's from StateDir)
	p.loadRecords()
	p.prevTargets, p.prevSandboxes = p.targets, p.sandboxes
	defer func() { p.prevTargets, p.prevSandboxes = nil, nil }()
	p.sandboxes, p.targets, p.dirty = map[string]*sandbox{}, map[string]*target{}, map[string]bool{}
	p.checkNode()
	for _, pod := range pods {
		p.upsert(pod)
	}
	for _, c := range ctrs {
		sb := p.sandboxes[c.GetPodSandboxId()]
		if sb == nil {
			continue
		}
		ci := p.addContainer(sb, c)
		if c.GetState() == api.ContainerState_CONTAINER_RUNNING || c.GetState() == api.ContainerState_CONTAINER_CREATED {
			p.useContainer(sb, c.GetId(), ci)
		}
		if c.GetState() == api.ContainerState_CONTAINER_RUNNING {
			p.podCgroupMissing(sb, c.GetName())
		}
	}
	// the targets' cgroups are queued; the status goes first
	p.resync, p.syncWaiting = true, true
	p.kick()
	return nil, nil
}

func (p *Plugin) RunPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.mu.Lock()
	sb := p.upsert(pod)
	p.mu.Unlock()
	p.waitSettled(sb.cgroup)
	return nil
}

func (p *Plugin) UpdatePodSandbox(_ context.Context, pod *api.PodSandbox, _, _ *api.LinuxResources) error {
	p.mu.Lock()
	sb := p.upsert(pod)
	p.mu.Unlock()
	p.waitSettled(sb.cgroup)
	return nil
}

// CreateContainer: the pod cgroup of the cgroupfs driver may exist only
// now; a container's own cgroup does not yet (StartContainer).
func (p *Plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.mu.Lock()
	sb := p.upsert(pod)
	p.addContainer(sb, ctr)
	p.mu.Unlock()
	p.waitSettled(sb.cgroup)
	return nil, nil, nil
}

// StartContainer runs after the container's cgroup exists and before its
// process starts: the time for a policy of its own.
func (p *Plugin) StartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.mu.Lock()
	sb := p.upsert(pod)
	ci := p.addContainer(sb, ctr)
	p.useContainer(sb, ctr.GetId(), ci)
	p.podCgroupMissing(sb, ctr.GetName())
	p.mu.Unlock()
	p.waitSettled(ci.cgroup)
	return nil
}

func (p *Plugin) StopContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseContainer(pod.GetId(), ctr.GetId())
	return nil, nil
}

func (p *Plugin) RemoveContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseContainer(pod.GetId(), ctr.GetId())
	if sb := p.sandboxes[pod.GetId()]; sb != nil {
		delete(sb.containers, ctr.GetId())
		delete(sb.ctrReported, ctr.GetId())
	}
	return nil
}

func (p *Plugin) releaseContainer(sbID, ctrID string) {
	if sb := p.sandboxes[sbID]; sb != nil {
		if ci, ok := sb.containers[ctrID]; ok && ci.cgroup != "" {
			p.release(ci.cgroup, "container:"+ctrID)
		}
	}
}

// StopPodSandbox: this sandbox no longer uses the pod cgroup; the policy
// is detached if no other sandbox of the pod does (the kubelet removes
// the cgroup after the stop; a removed one's pins are removed by id).
func (p *Plugin) StopPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.mu.Lock()
	sb := p.sandboxes[pod.GetId()]
	if sb == nil {
		sb = p.upsert(pod)
	}
	p.releaseSandbox(sb)
	p.mu.Unlock()
	p.waitSettled(sb.cgroup)
	return nil
}

func (p *Plugin) RemovePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sb := p.sandboxes[pod.GetId()]; sb != nil {
		p.releaseSandbox(sb)
		delete(p.sandboxes, pod.GetId())
	}
	return nil
}

func (p *Plugin) releaseSandbox(sb *sandbox) {
	for id, ci := range sb.containers {
		if ci.cgroup != "" {
			p.release(ci.cgroup, "container:"+id)
		}
	}
	if sb.cgroup != "" {
		p.release(sb.cgroup, "sandbox:"+sb.id)
	}
}

// --- what the metrics need --------------------------------------------

// pluginState is what /metrics shows of the plugin itself.
type pluginState struct {
	errors    map[string]uint64
	failing   map[podRef]string // targets whose last attach failed: the reason
	pending   int
	supported *bool
	connected bool
	node      *string // what the node lacks ("": nothing; nil: not checked)
}

func (p *Plugin) state() pluginState {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := pluginState{errors: map[string]uint64{}, failing: map[podRef]string{}, pending: len(p.dirty),
		supported: p.supported, connected: p.connected, node: p.nodeReason}
	for k, v := range p.errors {
		s.errors[k] = v
	}
	for _, t := range p.targets {
		if len(t.users) == 0 {
			continue
		}
		if t.refused != "" {
			s.failing[t.ref] = t.refused
		} else if t.failed != "" {
			s.failing[t.ref] = t.failed
		}
	}
	return s
}

func (p *Plugin) setConnected(c bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.connected = c
}

// cgroupIndex maps pod cgroups and container cgroups to their names.
func (p *Plugin) cgroupIndex() (pods map[string]podRef, ctrs map[string]podRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pods, ctrs = map[string]podRef{}, map[string]podRef{}
	for _, sb := range p.sandboxes {
		if sb.cgroup == "" {
			continue
		}
		pods[sb.cgroup] = podRef{namespace: sb.namespace, pod: sb.name}
		for _, c := range sb.containers {
			if c.cgroup != "" {
				ctrs[c.cgroup] = podRef{namespace: sb.namespace, pod: sb.name, container: c.name}
			}
		}
	}
	return pods, ctrs
}

// waitIdle waits until the worker has nothing left to do (tests).
func (p *Plugin) waitIdle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		idle := len(p.dirty) == 0 && p.current == "" && !p.resync
		ch := p.progress
		p.mu.Unlock()
		if idle {
			return true
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		}
	}
	return false
}
