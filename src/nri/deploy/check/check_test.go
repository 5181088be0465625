// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The deployment's checks, with Helm's own Go packages (no helm binary:
// Debian has none): `helm lint` of the chart, its templates rendered with
// several value sets, and every object of the renderings and of
// daemonset.yaml decoded strictly into the Kubernetes API's Go types, as
// the API server decodes (an unknown, mistyped or duplicate field fails,
// as kubeconform's schema check would),
// then held to what the plugin needs (capabilities, host paths, socket,
// config keys). The Grafana dashboard's queries may name only the series
// the plugin serves. A module of its own, so that the plugin does not
// build with Helm's dependencies.
package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const chartDir = "../helm/mthpctl-nri"

// The keys of the plugin's configuration (Config in ../../plugin.go).
var configKeys = map[string]bool{"default": true, "annotation": true, "cgroupRoot": true,
	"mthpctl": true, "metricsAddress": true, "timeoutMs": true, "hookWaitMs": true, "stateDir": true}

// The node label the DaemonSet selects on: nodes whose kernel has the
// series (mthpctl-nri(8), DEPLOYMENT).
const seriesLabel = "mthpctl.io/bpf-mthp-ops"

func TestHelmLint(t *testing.T) {
	for _, vals := range valueSets() {
		l := lint.All(chartDir, vals, "kube-system", false)
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint (values %v): %s", vals, m)
			}
		}
	}
}

// Value sets the chart is rendered with: the defaults, everything on,
// privileged, metrics off, a node default.
func valueSets() []map[string]any {
	return []map[string]any{
		{},
		{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}}},
			"grafanaDashboard": map[string]any{"enabled": true}},
		{"privileged": true, "appArmorProfile": nil},
		{"metrics": map[string]any{"enabled": false}, "defaultPolicy": "fixed max-size=64K"},
	}
}

func render(t *testing.T, vals map[string]any) []byte {
	t.Helper()
	out := renderAll(t, vals)
	var names []string
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	var all bytes.Buffer
	for _, n := range names {
		if strings.HasSuffix(n, ".yaml") {
			fmt.Fprintf(&all, "---\n# %s\n%s\n", n, out[n])
		}
	}
	return all.Bytes()
}

// renderAll is every template rendered, by name (NOTES.txt too).
func renderAll(t *testing.T, vals map[string]any) map[string]string {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals,
		chartutil.ReleaseOptions{Name: "mthpctl-nri", Namespace: "kube-system", IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatalf("render (values %v): %v", vals, err)
	}
	return out
}

// NOTES.txt names the annotation's scopes with the keys the plugin reads
// (one slash each), for the default key and another one.
func TestNotes(t *testing.T) {
	for key, want := range map[string][]string{
		"mthpctl.io/policy": {"mthpctl.io/policy: \"fixed max-size=64K\"", "policy.mthpctl.io/pod",
			"policy.mthpctl.io/container.NAME"},
		"example.com/mthp": {"example.com/mthp: \"fixed", "mthp.example.com/pod", "mthp.example.com/container.NAME"},
	} {
		var notes string
		for n, s := range renderAll(t, map[string]any{"annotation": key}) {
			if strings.HasSuffix(n, "NOTES.txt") {
				notes = s
			}
		}
		for _, w := range want {
			if !strings.Contains(notes, w) {
				t.Errorf("annotation %s: NOTES.txt lacks %q:\n%s", key, w, notes)
			}
		}
		// the DaemonSet runs only on labelled nodes: NOTES.txt says so
		// and how to label one
		if strings.Contains(notes, "every node") ||
			!strings.Contains(notes, "kubectl label node NODE mthpctl.io/bpf-mthp-ops=true") ||
			!strings.Contains(notes, "mthpctl.io/bpf-mthp-ops=true") {
			t.Errorf("NOTES.txt does not say the plugin needs a node label:\n%s", notes)
		}
	}
}

type objects struct {
	kinds []string
	ds    *appsv1.DaemonSet
	cm    *corev1.ConfigMap
	other map[string]bool
}

// serviceMonitor is the part of monitoring.coreos.com/v1 the chart
// writes (the operator's CRD is not a Go module here); strict decoding
// refuses anything else.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Interval    string `json:"interval"`
			HonorLabels bool   `json:"honorLabels"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// decode splits a YAML stream and decodes each object strictly into its
// API type.
func decode(t *testing.T, stream []byte) objects {
	t.Helper()
	var o objects
	o.other = map[string]bool{}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(stream), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		kind := tm.APIVersion + "/" + tm.Kind
		o.kinds = append(o.kinds, kind)
		var obj any
		switch kind {
		case "apps/v1/DaemonSet":
			o.ds = &appsv1.DaemonSet{}
			obj = o.ds
		case "v1/ConfigMap":
			cm := &corev1.ConfigMap{}
			obj = cm
			if strings.HasSuffix(docName(doc), "dashboard.yaml") {
				o.other["dashboard"] = true
				defer checkDashboardConfigMap(t, cm)
			} else {
				o.cm = cm
			}
		case "v1/Service":
			obj = &corev1.Service{}
		case "monitoring.coreos.com/v1/ServiceMonitor":
			obj = &serviceMonitor{}
		default:
			t.Fatalf("unexpected kind %s", kind)
		}
		if err := strictDecode([]byte(doc), obj); err != nil {
			t.Errorf("%s does not match the API: %v\n%s", kind, err, doc)
		}
		if m, ok := obj.(metav1.Object); ok && (m.GetName() == "" || m.GetNamespace() == "") {
			t.Errorf("%s without name or namespace", kind)
		}
	}
	return o
}

// strictDecode decodes as the API server does: field names match case
// for case (encoding/json alone would take "mountpath" for "mountPath"),
// and an unknown or duplicate field is an error.
func strictDecode(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

func docName(doc string) string {
	if m := regexp.MustCompile(`(?m)^# (\S+)$`).FindStringSubmatch(doc); m != nil {
		return m[1]
	}
	return ""
}

// checkDaemonSet holds the DaemonSet to what the plugin needs.
func checkDaemonSet(t *testing.T, ds *appsv1.DaemonSet, cm *corev1.ConfigMap) {
	t.Helper()
	if ds == nil || cm == nil {
		t.Fatal("no DaemonSet or no ConfigMap")
	}
	sel, tl := ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels
	for k, v := range sel {
		if tl[k] != v {
			t.Errorf("selector %s=%s does not match the pod template's labels %v", k, v, tl)
		}
	}
	if len(sel) == 0 {
		t.Error("empty selector")
	}
	ps := ds.Spec.Template.Spec
	if ps.NodeSelector[seriesLabel] != "true" {
		t.Errorf("nodeSelector %v: a node without the series (no %s=true) would get the plugin",
			ps.NodeSelector, seriesLabel)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%d containers", len(ps.Containers))
	}
	c := ps.Containers[0]
	if c.Image == "" || !strings.Contains(c.Image, ":") {
		t.Errorf("image %q without a tag", c.Image)
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("no securityContext")
	}
	priv := sc.Privileged != nil && *sc.Privileged
	if !priv {
		caps := map[corev1.Capability]bool{}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				caps[c] = true
			}
			if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
				t.Errorf("capabilities not dropped: %v", sc.Capabilities.Drop)
			}
		}
		if !caps["BPF"] || !caps["SYS_ADMIN"] || len(caps) != 2 {
			t.Errorf("capabilities %v: want BPF and SYS_ADMIN, nothing else", caps)
		}
		if sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined {
			t.Errorf("without privileged, AppArmor must let it pin in /sys/fs/bpf: %v", sc.AppArmorProfile)
		}
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Error("the plugin needs no API token: automountServiceAccountToken: false")
	}
	hostPaths := map[string]string{}
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
	}
	for path, rw := range map[string]bool{"/sys/fs/bpf": true, "/sys/fs/cgroup": false, "/var/run/nri": true,
		"/run/mthpctl-nri": true} {
		m, ok := mounts[path]
		if !ok || hostPaths[m.Name] != path {
			t.Errorf("the host's %s is not mounted at %s", path, path)
			continue
		}
		if rw && m.ReadOnly {
			t.Errorf("%s is read-only", path)
		}
	}
	if len(hostPaths) != 4 {
		t.Errorf("host paths %v: only /sys/fs/bpf, /sys/fs/cgroup, /var/run/nri and /run/mthpctl-nri", hostPaths)
	}
	if m, ok := mounts["/run/mthpctl"]; !ok || m.ReadOnly {
		t.Errorf("no writable /run/mthpctl (mthpctl's probe cache) with a read-only root")
	}
	// the config file: the plugin's keys, read from where --config says
	var cfgPath string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			cfgPath = v
		}
	}
	dir, file := filepath.Split(cfgPath)
	if m, ok := mounts[strings.TrimSuffix(dir, "/")]; !ok || m.Name != "config" {
		t.Errorf("--config=%s is not on the config volume", cfgPath)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data[file]), &cfg); err != nil || len(cfg) == 0 {
		t.Fatalf("ConfigMap %s: %v", file, err)
	}
	for k := range cfg {
		if !configKeys[k] {
			t.Errorf("config key %q is not the plugin's", k)
		}
	}
	// the records of what the plugin attached outlive its container:
	// on the host's /run (not an emptyDir), where stateDir says
	if m, ok := mounts[fmt.Sprint(cfg["stateDir"])]; !ok || hostPaths[m.Name] != "/run/mthpctl-nri" || m.ReadOnly {
		t.Errorf("stateDir %v is not the host's /run/mthpctl-nri, writable", cfg["stateDir"])
	}
}

func TestChartRenders(t *testing.T) {
	for i, vals := range valueSets() {
		o := decode(t, render(t, vals))
		checkDaemonSet(t, o.ds, o.cm)
		t.Logf("values %d: %s", i, strings.Join(o.kinds, ", "))
		switch i {
		case 1:
			if !strings.Contains(strings.Join(o.kinds, " "), "ServiceMonitor") || !o.other["dashboard"] {
				t.Errorf("ServiceMonitor and dashboard on, got %v", o.kinds)
			}
		case 3:
			if strings.Contains(strings.Join(o.kinds, " "), "Service") {
				t.Errorf("metrics off but %v", o.kinds)
			}
			if !strings.Contains(o.cm.Data["config.yaml"], `default: "fixed max-size=64K"`) {
				t.Errorf("defaultPolicy not in the config:\n%s", o.cm.Data["config.yaml"])
			}
		}
	}
}

func TestPlainDaemonSet(t *testing.T) {
	b, err := os.ReadFile("../daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, b)
	checkDaemonSet(t, o.ds, o.cm)
}

func checkDashboardConfigMap(t *testing.T, cm *corev1.ConfigMap) {
	if cm.Data["mthpctl-nri.json"] == "" {
		t.Error("the dashboard ConfigMap is empty")
	}
	checkDashboard(t, []byte(cm.Data["mthpctl-nri.json"]))
}

// The dashboard's queries name only the series the plugin serves.
func checkDashboard(t *testing.T, b []byte) {
	t.Helper()
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	src, err := os.ReadFile("../../metrics.go")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(mthpctl_[a-z_]+)"`).FindAllStringSubmatch(string(src), -1) {
		served[m[1]] = true
	}
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, name := range regexp.MustCompile(`mthpctl_[a-z_]+`).FindAllString(tg.Expr, -1) {
				n++
				if !served[name] {
					t.Errorf("panel %q queries %s, which the plugin does not serve", p.Title, name)
				}
			}
		}
	}
	if d.Title == "" || n == 0 {
		t.Errorf("dashboard %q queries %d series", d.Title, n)
	}
}

func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "dashboards/mthpctl-nri.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkDashboard(t, b)
}
