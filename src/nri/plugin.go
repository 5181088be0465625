// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The NRI plugin: a pod's policy spec (its annotation, or the node
// default) attached to the pod's cgroup when the sandbox runs or, if the
// cgroup is not there yet, when its first container is created (before
// any of its processes run); replaced when the spec changes; detached when
// the pod stops. No hook ever fails a pod: what goes wrong is logged.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/containerd/nri/pkg/api"
)

// Config of the plugin (a YAML file, or the config NRI passes).
type Config struct {
	// Default is the spec of pods without the annotation ("" or
	// "none": no policy).
	Default string `json:"default"`
	// Annotation is the pod annotation read (mthpctl.io/policy).
	Annotation string `json:"annotation"`
	// CgroupRoot is the cgroup2 mount (/sys/fs/cgroup).
	CgroupRoot string `json:"cgroupRoot"`
	// Mthpctl is the path of the mthpctl binary.
	Mthpctl string `json:"mthpctl"`
	// MetricsAddress to serve /metrics on ("" turns it off).
	MetricsAddress string `json:"metricsAddress"`
	// TimeoutMs bounds each mthpctl command (below NRI's request
	// timeout, containerd's plugin_request_timeout, 2s by default).
	TimeoutMs int `json:"timeoutMs"`
}

func defaultConfig() Config {
	return Config{
		Annotation:     "mthpctl.io/policy",
		CgroupRoot:     "/sys/fs/cgroup",
		Mthpctl:        "/usr/local/sbin/mthpctl",
		MetricsAddress: ":9818",
		TimeoutMs:      1500,
	}
}

type ctrInfo struct {
	name   string
	cgroup string // its own cgroup directory ("" if not known)
}

type podState struct {
	id, namespace, name string
	cgroup              string // the pod cgroup ("" until known)
	want                *Spec  // nil: no policy
	wantText            string // what want came from, for messages
	attached            *Params
	attachedSpec        string // the spec attached ("" when from status)
	reported            string // a refused spec already logged
	stopped             bool
	containers          map[string]ctrInfo
}

// Plugin holds the pods it has seen and what it attached to them.
type Plugin struct {
	mu      sync.Mutex
	cfg     Config
	def     *Spec // the node default, parsed
	backend Backend
	log     *log.Logger
	pods    map[string]*podState
	// Synced, if set, is called after each Synchronize (tests).
	Synced func()
}

// NewPlugin checks the configuration: a node default that does not parse
// is refused here, at start, rather than for every pod.
func NewPlugin(cfg Config, b Backend, logger *log.Logger) (*Plugin, error) {
	p := &Plugin{cfg: cfg, backend: b, log: logger, pods: map[string]*podState{}}
	if err := p.setDefault(cfg.Default); err != nil {
		return nil, err
	}
	return p, nil
}

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

func podName(ps *podState) string { return ps.namespace + "/" + ps.name }

// desire sets ps.want from the pod's annotation or the node default. A
// malformed annotation is logged once, with its fix, and the default
// used.
func (p *Plugin) desire(ps *podState, ann map[string]string) {
	v, ok := ann[p.cfg.Annotation]
	v = strings.TrimSpace(v)
	switch {
	case !ok:
		ps.want, ps.wantText = p.def, "node default"
	case v == "none":
		ps.want, ps.wantText = nil, "annotation"
	default:
		s, err := ParseSpec(v)
		if err == nil {
			ps.want, ps.wantText = &s, "annotation"
			return
		}
		ps.want, ps.wantText = p.def, "node default"
		if ps.reported != v {
			ps.reported = v
			p.logf("pod %s: annotation %s=%q: %v; the pod runs with %s",
				podName(ps), p.cfg.Annotation, v, err, p.fallbackText())
		}
	}
}

func (p *Plugin) fallbackText() string {
	if p.def == nil {
		return "no policy"
	}
	return fmt.Sprintf("the node default %q", p.def.String())
}

// upsert records a pod from NRI's view of it.
func (p *Plugin) upsert(pod *api.PodSandbox) *podState {
	ps := p.pods[pod.GetId()]
	if ps == nil {
		ps = &podState{id: pod.GetId(), containers: map[string]ctrInfo{}}
		p.pods[pod.GetId()] = ps
	}
	ps.namespace, ps.name = pod.GetNamespace(), pod.GetName()
	if ps.cgroup == "" {
		if parent := pod.GetLinux().GetCgroupParent(); parent != "" {
			cg, err := podCgroupOfParent(p.cfg.CgroupRoot, parent)
			if err != nil {
				p.logf("pod %s: cgroup parent %q: %v", podName(ps), parent, err)
			} else {
				ps.cgroup = cg
			}
		}
	}
	p.desire(ps, pod.GetAnnotations())
	return ps
}

func (p *Plugin) addContainer(ps *podState, ctr *api.Container) {
	cp := ctr.GetLinux().GetCgroupsPath()
	ci := ctrInfo{name: ctr.GetName()}
	if cp != "" {
		if ps.cgroup == "" {
			if cg, err := podCgroupOfContainer(p.cfg.CgroupRoot, cp); err == nil {
				ps.cgroup = cg
			} else {
				p.logf("pod %s: container %s: cgroups path %q: %v", podName(ps), ctr.GetName(), cp, err)
			}
		}
		ci.cgroup, _ = containerCgroup(p.cfg.CgroupRoot, cp)
	}
	ps.containers[ctr.GetId()] = ci
}

// ensure makes the pod cgroup's policy what the pod wants. Errors are
// logged; the pod goes on in any case.
func (p *Plugin) ensure(ctx context.Context, ps *podState) {
	if ps.cgroup == "" || ps.stopped {
		return
	}
	if ps.want == nil {
		if ps.attached != nil {
			p.detach(ctx, ps)
		}
		return
	}
	want := ps.want.Params()
	if ps.attached != nil && ps.attached.Equal(want) {
		return
	}
	replace := ps.attached != nil
	err := p.backend.Attach(ctx, ps.cgroup, *ps.want, replace)
	if !replace && exitCode(err) == ExitState {
		// attached by an earlier run or by hand: replace it
		err = p.backend.Attach(ctx, ps.cgroup, *ps.want, true)
	}
	switch code := exitCode(err); {
	case err == nil:
		ps.attached, ps.attachedSpec = &want, ps.want.String()
		p.logf("pod %s: %s policy %q on %s (%s)", podName(ps),
			map[bool]string{true: "replaced with", false: "attached"}[replace],
			ps.want.String(), ps.cgroup, ps.wantText)
	case code == ExitCgroup:
		// not created yet: the next container event tries again; a
		// directory that exists and is refused is worth a line
		if _, serr := os.Stat(ps.cgroup); serr == nil && ps.reported != "cgroup" {
			ps.reported = "cgroup"
			p.logf("pod %s: cannot attach to %s: %s", podName(ps), ps.cgroup, err.(*ExitError).Msg)
		}
	case code == ExitUsage && ps.wantText == "annotation":
		spec := ps.want.String()
		if ps.reported != spec {
			ps.reported = spec
			p.logf("pod %s: annotation %s=%q refused by mthpctl: %s; the pod runs with %s",
				podName(ps), p.cfg.Annotation, spec, err.(*ExitError).Msg, p.fallbackText())
		}
		ps.want, ps.wantText = p.def, "node default"
		p.ensure(ctx, ps)
	default:
		p.logf("pod %s: cannot attach %q to %s: %v", podName(ps), ps.want.String(), ps.cgroup, err)
	}
}

func (p *Plugin) detach(ctx context.Context, ps *podState) {
	err := p.backend.Detach(ctx, ps.cgroup)
	switch exitCode(err) {
	case -1:
		if err != nil {
			p.logf("pod %s: cannot detach the policy of %s: %v", podName(ps), ps.cgroup, err)
			return
		}
	case ExitState, ExitCgroup:
		// nothing attached, or the cgroup is gone already
	default:
		p.logf("pod %s: cannot detach the policy of %s: %v", podName(ps), ps.cgroup, err)
		return
	}
	if err == nil {
		p.logf("pod %s: detached the policy of %s", podName(ps), ps.cgroup)
	}
	ps.attached, ps.attachedSpec = nil, ""
}

// --- NRI events -------------------------------------------------------

// Configure takes the plugin's configuration when NRI passes one (a
// pre-installed plugin's conf file); the events are those implemented.
func (p *Plugin) Configure(_ context.Context, config, runtime, version string) (api.EventMask, error) {
	p.logf("connected to %s %s", runtime, version)
	if strings.TrimSpace(config) == "" {
		return 0, nil
	}
	cfg := p.cfg
	if err := parseConfig([]byte(config), &cfg); err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.setDefault(cfg.Default); err != nil {
		return 0, err
	}
	p.cfg = cfg
	return 0, nil
}

// Synchronize takes the runtime's pods and containers (at every connect,
// after a restart too) and makes the attached policies match them: one
// policy for each pod that wants one, none left on pod cgroups of pods
// that are gone. It answers once it has read what is attached (one
// mthpctl status, bounded by the timeout); the attaches and detaches
// follow in the background, one pod at a time, so that NRI's request
// timeout does not limit how many pods a node may have, and the events of
// other pods are handled in between.
func (p *Plugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pods = map[string]*podState{}
	for _, pod := range pods {
		p.upsert(pod)
	}
	for _, c := range ctrs {
		if ps := p.pods[c.GetPodSandboxId()]; ps != nil {
			p.addContainer(ps, c)
		}
	}
	pols, err := p.backend.Status(ctx)
	if err != nil {
		p.logf("synchronize: %v; attaching without knowing what is attached", err)
	}
	byCgroup := map[string]Policy{}
	gone := 0
	for _, pol := range pols {
		if pol.Cgroup == nil {
			gone++
			continue
		}
		byCgroup[filepath.Clean(*pol.Cgroup)] = pol
	}
	mine := map[string]bool{}
	var todo []*podState
	for _, id := range p.sortedPodIDs() {
		ps := p.pods[id]
		if ps.cgroup == "" {
			continue
		}
		mine[ps.cgroup] = true
		if pol, ok := byCgroup[ps.cgroup]; ok {
			prm := pol.ParamsOf()
			ps.attached = &prm
		}
		todo = append(todo, ps)
	}
	// policies on pod cgroups of pods the runtime no longer has: removed
	// while the plugin was away
	var leaked []string
	for cg := range byCgroup {
		if !mine[cg] && p.isPodCgroup(cg) {
			leaked = append(leaked, cg)
		}
	}
	sort.Strings(leaked)
	if gone > 0 {
		p.logf("synchronize: %d policies of removed cgroups are pinned still; "+
			"mthpctl detach --all removes them (with every other policy)", gone)
	}
	go p.reconcile(todo, leaked, len(pols))
	return nil, nil
}

func (p *Plugin) reconcile(todo []*podState, leaked []string, before int) {
	ctx := context.Background()
	for _, ps := range todo {
		p.mu.Lock()
		if p.pods[ps.id] == ps { // not removed meanwhile
			p.ensure(ctx, ps)
		}
		p.mu.Unlock()
	}
	for _, cg := range leaked {
		p.mu.Lock()
		p.detach(ctx, &podState{namespace: "(gone)", name: filepath.Base(cg), cgroup: cg})
		p.mu.Unlock()
	}
	p.logf("synchronized: %d pods, %d policies attached before, %d leftovers detached",
		len(todo), before, len(leaked))
	if p.Synced != nil {
		p.Synced()
	}
}

// A pod cgroup: pod<UID> (cgroupfs) or <qos>-pod<UID>.slice (systemd)
// under the cgroup root.
var podCgroupRe = regexp.MustCompile(`^(.*-)?pod[0-9a-fA-F]{8}([-_][0-9a-fA-F]{4}){3}[-_][0-9a-fA-F]{12}(\.slice)?$`)

func (p *Plugin) isPodCgroup(cg string) bool {
	root := filepath.Clean(p.cfg.CgroupRoot) + "/"
	return strings.HasPrefix(cg, root) && podCgroupRe.MatchString(filepath.Base(cg))
}

func (p *Plugin) sortedPodIDs() []string {
	ids := make([]string, 0, len(p.pods))
	for id := range p.pods {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (p *Plugin) RunPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ensure(ctx, p.upsert(pod))
	return nil
}

func (p *Plugin) UpdatePodSandbox(ctx context.Context, pod *api.PodSandbox, _, _ *api.LinuxResources) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ensure(ctx, p.upsert(pod))
	return nil
}

func (p *Plugin) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.upsert(pod)
	p.addContainer(ps, ctr)
	p.ensure(ctx, ps)
	return nil, nil, nil
}

func (p *Plugin) RemoveContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.pods[pod.GetId()]; ps != nil {
		delete(ps.containers, ctr.GetId())
	}
	return nil
}

// StopPodSandbox detaches while the pod cgroup still exists (the kubelet
// removes it after the sandbox stopped).
func (p *Plugin) StopPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.pods[pod.GetId()]
	if ps == nil {
		ps = p.upsert(pod)
		// not seen before (the plugin restarted in between): it may
		// have a policy of an earlier run
		ps.attached = &Params{}
	}
	if ps.cgroup != "" && ps.attached != nil {
		p.detach(ctx, ps)
	}
	ps.stopped = true
	return nil
}

func (p *Plugin) RemovePodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ps := p.pods[pod.GetId()]; ps != nil {
		if ps.cgroup != "" && ps.attached != nil {
			p.detach(ctx, ps)
		}
		delete(p.pods, pod.GetId())
	}
	return nil
}

// --- what the metrics need --------------------------------------------

type podRef struct {
	namespace, pod, container string
}

// cgroupIndex maps pod cgroups and container cgroups to their names.
func (p *Plugin) cgroupIndex() (pods map[string]podRef, ctrs map[string]podRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pods, ctrs = map[string]podRef{}, map[string]podRef{}
	for _, ps := range p.pods {
		if ps.cgroup == "" {
			continue
		}
		pods[ps.cgroup] = podRef{namespace: ps.namespace, pod: ps.name}
		for _, c := range ps.containers {
			if c.cgroup != "" {
				ctrs[c.cgroup] = podRef{namespace: ps.namespace, pod: ps.name, container: c.name}
			}
		}
	}
	return pods, ctrs
}
