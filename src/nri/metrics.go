// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// /metrics: each pod's policy figures from mthpctl status -j, at scrape
// time, labelled by namespace, pod, container and scope instead of cgroup
// path and id. scope is "pod" for a pod cgroup's policy, "container" for
// a container's own. For a pod's policy "container" names the container
// whose sampled state the figures are (status' sample_cgroup: the pod
// cgroup's busiest descendant); it is empty when the state is the pod
// cgroup's own or there is none yet.
package main

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var reasons = []string{"none", "pressure", "low-usage", "no-sample", "cap", "sparse"}

type collector struct {
	p       *Plugin
	timeout time.Duration

	info, attached, allowedMax, allowed, restricted, fallbacks, calls, anon, up *prometheus.Desc
	attachErrors, podError, connected, supported, pending, nodeReady            *prometheus.Desc
}

func newCollector(p *Plugin, timeout time.Duration) *collector {
	l := []string{"namespace", "pod", "container", "scope"}
	d := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append(append([]string{}, l...), extra...), nil)
	}
	return &collector{
		p: p, timeout: timeout,
		info: d("mthpctl_pod_policy_info", "The pod's policy, its parameters and the object it runs (1).",
			"policy", "max_size_bytes", "object_hash"),
		attached:   d("mthpctl_pod_policy_attached", "1 while the policy's link is attached to the pod cgroup."),
		allowedMax: d("mthpctl_pod_allowed_max_size_bytes", "The largest folio size page faults may get now."),
		allowed:    d("mthpctl_pod_size_allowed", "1 for each folio size page faults may get now.", "size_bytes"),
		restricted: d("mthpctl_pod_restricted", "1 for the reason the policy narrows page faults now, 0 for the others.", "reason"),
		fallbacks:  d("mthpctl_pod_fallbacks_total", "Decisions whose answer narrowed the orders offered, by reason and caller.", "reason", "tva"),
		calls:      d("mthpctl_pod_hook_calls_total", "Calls of the policy's choose_orders, by caller.", "tva"),
		anon:       d("mthpctl_pod_anon_shmem_bytes", "Anonymous + shmem memory of the pod cgroup now."),
		up: prometheus.NewDesc("mthpctl_status_up",
			"1 if mthpctl status -j answered at this scrape.", nil, nil),
		attachErrors: prometheus.NewDesc("mthpctl_nri_attach_errors_total",
			"Attaches that failed or were not tried, by reason (annotation, cgroup, timeout, mthpctl).",
			[]string{"reason"}, nil),
		podError: d("mthpctl_nri_pod_policy_error",
			"1 while the last attach of the pod's (or container's) policy failed, with its reason.", "reason"),
		connected: prometheus.NewDesc("mthpctl_nri_connected",
			"1 while the plugin is connected to the runtime.", nil, nil),
		supported: prometheus.NewDesc("mthpctl_nri_kernel_supported",
			"1 if the node's kernel has bpf_mthp_ops, 0 if not (the plugin is idle), absent before the first status.",
			nil, nil),
		nodeReady: prometheus.NewDesc("mthpctl_nri_node_ready",
			"1 if the node has what the plugin needs (cgroup2 with the memory controller, bpffs), 0 with the reason "+
				"if not (the plugin is idle).", []string{"reason"}, nil),
		pending: prometheus.NewDesc("mthpctl_nri_pending_cgroups",
			"Cgroups whose policy the plugin has still to attach or detach.", nil, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.attached, c.allowedMax, c.allowed, c.restricted,
		c.fallbacks, c.calls, c.anon, c.up, c.attachErrors, c.podError, c.connected, c.supported, c.pending,
		c.nodeReady} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.collectPlugin(ch)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.p.backend.Status(ctx)
	pols := st.Policies
	if err != nil {
		c.p.logf("metrics: %v", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	pods, ctrs := c.p.cgroupIndex()
	for _, pol := range pols {
		if pol.Cgroup == nil {
			continue
		}
		// a pod's policy (scope "pod", container: the one its figures
		// sample) or a container's own (scope "container"): a pod's
		// policy that samples a container with a policy of its own has
		// the same container label, the scope tells them apart
		scope := scopePod
		ref, ok := pods[filepath.Clean(*pol.Cgroup)]
		if !ok {
			if ref, ok = ctrs[filepath.Clean(*pol.Cgroup)]; !ok {
				continue // not a pod's: mthpctl status shows it
			}
			scope = scopeContainer
		} else if pol.SampleCgroup != nil {
			if cr, ok := ctrs[filepath.Clean(*pol.SampleCgroup)]; ok {
				ref.container = cr.container
			}
		}
		lv := []string{ref.namespace, ref.pod, ref.container, scope}
		g := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(append([]string{}, lv...), extra...)...)
		}
		cnt := func(d *prometheus.Desc, v uint64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append(append([]string{}, lv...), extra...)...)
		}
		maxSize := ""
		if pol.Params.MaxSizeBytes != nil {
			maxSize = strconv.FormatUint(*pol.Params.MaxSizeBytes, 10)
		}
		obj := ""
		if pol.ObjectHash != nil {
			obj = *pol.ObjectHash
		}
		g(c.info, 1, pol.Policy, maxSize, obj)
		g(c.attached, b2f(pol.Attached))
		if len(pol.AllowedSizesKB) > 0 {
			top := uint64(0)
			for _, kb := range pol.AllowedSizesKB {
				g(c.allowed, 1, strconv.FormatUint(kb<<10, 10))
				top = max(top, kb<<10)
			}
			g(c.allowedMax, float64(top))
		}
		if pol.Restriction != "" {
			for _, r := range reasons {
				g(c.restricted, b2f(r == pol.Restriction), r)
			}
		}
		if pol.Live.AnonShmemBytes != nil {
			g(c.anon, float64(*pol.Live.AnonShmemBytes))
		}
		if pol.Totals != nil {
			for _, r := range sortedKeys(pol.Totals.Fallbacks) {
				for _, t := range sortedKeys(pol.Totals.Fallbacks[r]) {
					cnt(c.fallbacks, pol.Totals.Fallbacks[r][t], r, t)
				}
			}
			for _, t := range sortedKeys(pol.Totals.Calls) {
				cnt(c.calls, pol.Totals.Calls[t], t)
			}
		}
	}
}

// collectPlugin: the plugin's own series, without mthpctl.
func (c *collector) collectPlugin(ch chan<- prometheus.Metric) {
	s := c.p.state()
	for _, r := range errorReasons {
		ch <- prometheus.MustNewConstMetric(c.attachErrors, prometheus.CounterValue, float64(s.errors[r]), r)
	}
	refs := make([]podRef, 0, len(s.failing))
	for r := range s.failing {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		return a.namespace+"/"+a.pod+"/"+a.container < b.namespace+"/"+b.pod+"/"+b.container
	})
	for _, r := range refs {
		ch <- prometheus.MustNewConstMetric(c.podError, prometheus.GaugeValue, 1,
			r.namespace, r.pod, r.container, r.scope(), s.failing[r])
	}
	ch <- prometheus.MustNewConstMetric(c.connected, prometheus.GaugeValue, b2f(s.connected))
	if s.supported != nil {
		ch <- prometheus.MustNewConstMetric(c.supported, prometheus.GaugeValue, b2f(*s.supported))
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(s.pending))
	if s.node != nil {
		ch <- prometheus.MustNewConstMetric(c.nodeReady, prometheus.GaugeValue, b2f(*s.node == ""), *s.node)
	}
}

// The values of the label scope: a pod cgroup's policy, a container's own.
const (
	scopePod       = "pod"
	scopeContainer = "container"
)

func (r podRef) scope() string {
	if r.container != "" {
		return scopeContainer
	}
	return scopePod
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
