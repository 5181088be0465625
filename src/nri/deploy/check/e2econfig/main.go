// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// e2econfig: the plugin's pod as the chart makes it, for crictl in the
// end-to-end test (tests/nri-e2e). The chart is rendered by Helm's own
// engine (what `helm template` runs; Debian has no helm binary), its
// DaemonSet and ConfigMap decoded strictly into the Kubernetes API's
// types, and the pod template translated into CRI's sandbox and container
// configs: the image, its arguments, every volume mount (hostPath as is,
// the ConfigMap as files written here, an emptyDir as a directory under
// -empty-dirs), the security context (capabilities, read-only root, user,
// seccomp, AppArmor, privileged) and the memory limit. What a kubelet
// adds and CRI cannot take from the template, the test sets: the host
// network (no CNI in the VM) and the pod's cgroup parent.
//
//	e2econfig -chart DIR -o DIR -empty-dirs DIR -uid UID [-set-default SPEC]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

func main() {
	chartDir := flag.String("chart", "", "the chart's directory")
	out := flag.String("o", "", "directory for pod.json, container.json and the ConfigMap's files")
	emptyDirs := flag.String("empty-dirs", "", "directory (in the guest) holding the emptyDir volumes")
	uid := flag.String("uid", "", "the plugin pod's UID")
	def := flag.String("set-default", "", "the chart's defaultPolicy")
	flag.Parse()
	if *chartDir == "" || *out == "" || *emptyDirs == "" || *uid == "" {
		fmt.Fprintln(os.Stderr, "e2econfig: give -chart DIR -o DIR -empty-dirs DIR -uid UID")
		os.Exit(2)
	}
	if err := run(*chartDir, *out, *emptyDirs, *uid, *def); err != nil {
		fmt.Fprintf(os.Stderr, "e2econfig: %v\n", err)
		os.Exit(1)
	}
}

func run(chartDir, out, emptyDirs, uid, def string) error {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return err
	}
	vals := map[string]any{"defaultPolicy": def}
	rv, err := chartutil.ToRenderValues(ch, vals,
		chartutil.ReleaseOptions{Name: "mthpctl-nri", Namespace: "kube-system", IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		return err
	}
	rendered, err := engine.Render(ch, rv)
	if err != nil {
		return err
	}
	var ds *appsv1.DaemonSet
	var cm *corev1.ConfigMap
	for name, text := range rendered {
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
			if !strings.HasSuffix(name, ".yaml") || strings.TrimSpace(doc) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			var kind struct{ Kind string }
			if err := json.Unmarshal(js, &kind); err != nil {
				return err
			}
			var obj any
			switch {
			case kind.Kind == "DaemonSet":
				ds = &appsv1.DaemonSet{}
				obj = ds
			case kind.Kind == "ConfigMap" && strings.HasSuffix(name, "/configmap.yaml"):
				cm = &corev1.ConfigMap{}
				obj = cm
			default:
				continue
			}
			if strict, err := kjson.UnmarshalStrict(js, obj); err != nil || len(strict) > 0 {
				return fmt.Errorf("%s: %v %v", name, err, strict)
			}
		}
	}
	if ds == nil || cm == nil {
		return fmt.Errorf("the chart rendered no DaemonSet or ConfigMap")
	}
	ps := ds.Spec.Template.Spec
	if len(ps.Containers) != 1 {
		return fmt.Errorf("%d containers in the DaemonSet", len(ps.Containers))
	}
	c := ps.Containers[0]
	cfgDir := filepath.Join(out, "configmap")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return err
	}
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(cfgDir, k), []byte(v), 0o644); err != nil {
			return err
		}
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		volumes[v.Name] = v
	}
	type mount struct {
		ContainerPath string `json:"container_path"`
		HostPath      string `json:"host_path"`
		Readonly      bool   `json:"readonly"`
	}
	var mounts []mount
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return fmt.Errorf("mount %s: no volume", m.Name)
		}
		var host string
		switch {
		case v.HostPath != nil:
			host = v.HostPath.Path
		case v.ConfigMap != nil:
			host = cfgDir
		case v.EmptyDir != nil:
			host = filepath.Join(emptyDirs, m.Name)
		default:
			return fmt.Errorf("volume %s: a kind the test does not make", m.Name)
		}
		mounts = append(mounts, mount{ContainerPath: m.MountPath, HostPath: host, Readonly: m.ReadOnly})
	}
	sc := c.SecurityContext
	secctx := map[string]any{}
	if sc != nil {
		if sc.Privileged != nil {
			secctx["privileged"] = *sc.Privileged
		}
		if sc.Capabilities != nil {
			secctx["capabilities"] = map[string]any{
				"add_capabilities": sc.Capabilities.Add, "drop_capabilities": sc.Capabilities.Drop}
		}
		if sc.ReadOnlyRootFilesystem != nil {
			secctx["readonly_rootfs"] = *sc.ReadOnlyRootFilesystem
		}
		if sc.RunAsUser != nil {
			secctx["run_as_user"] = map[string]any{"value": *sc.RunAsUser}
		}
		if sc.AllowPrivilegeEscalation != nil {
			secctx["no_new_privs"] = !*sc.AllowPrivilegeEscalation
		}
		// CRI's SecurityProfile.ProfileType: 0 RuntimeDefault, 1 Unconfined
		if sc.SeccompProfile != nil {
			secctx["seccomp"] = map[string]any{"profile_type": profileType(string(sc.SeccompProfile.Type))}
		}
		if sc.AppArmorProfile != nil {
			secctx["apparmor"] = map[string]any{"profile_type": profileType(string(sc.AppArmorProfile.Type))}
		}
	}
	linux := map[string]any{"security_context": secctx}
	if mem, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		linux["resources"] = map[string]any{"memory_limit_in_bytes": mem.Value()}
	}
	ctr := map[string]any{
		"metadata": map[string]any{"name": c.Name},
		"image":    map[string]any{"image": c.Image},
		"args":     c.Args,
		"mounts":   mounts,
		"linux":    linux,
		"log_path": c.Name + ".log",
	}
	pod := map[string]any{
		"metadata": map[string]any{"name": ds.Name, "namespace": ds.Namespace, "uid": uid, "attempt": 0},
		"labels":   ds.Spec.Template.Labels, "annotations": ds.Spec.Template.Annotations,
		"log_directory": "/run/mthpctl-nri-e2e/logs/" + ds.Name,
		"linux": map[string]any{
			"cgroup_parent": "/kubepods/besteffort/pod" + uid,
			// NODE: no CNI in the VM (the DaemonSet's pod has its own
			// network; the test reaches /metrics on the node's)
			"security_context": map[string]any{"namespace_options": map[string]any{"network": 2}},
		},
	}
	for name, obj := range map[string]any{"pod.json": pod, "container.json": ctr} {
		b, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func profileType(t string) int {
	switch t {
	case "Unconfined":
		return 1
	case "Localhost":
		return 2
	}
	return 0
}
