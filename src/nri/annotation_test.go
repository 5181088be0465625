// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

package main

import (
	"strings"
	"testing"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validAnnotations is the API server's verdict on a pod's annotations.
func validAnnotations(ann map[string]string) field.ErrorList {
	return apivalidation.ValidateAnnotations(ann, field.NewPath("metadata", "annotations"))
}

// The documented keys (the default configuration's) are annotations the
// API server accepts, for every container name whose key fits (at most
// maxContainerName characters); the first form's, with two slashes, is
// refused, as is a container name one character longer.
func TestAnnotationKeysKubernetesAccepts(t *testing.T) {
	key := defaultConfig().Annotation
	if podKey(key) != "policy.mthpctl.io/pod" || containerKey(key, "db") != "policy.mthpctl.io/container.db" {
		t.Errorf("keys %q, %q: not those the man page documents", podKey(key), containerKey(key, "db"))
	}
	pod := map[string]string{
		key:                      "auto",
		podKey(key):              "fixed max-size=64K",
		containerKey(key, "db"):  "fixed max-size=2M",
		containerKey(key, "web"): "none",
	}
	// the longest container name whose key is valid, and the characters
	// of a Kubernetes container name (a DNS label)
	long := strings.Repeat("a", maxContainerName-2) + "-9"
	pod[containerKey(key, long)] = "never"
	if errs := validAnnotations(pod); len(errs) > 0 {
		t.Fatalf("the API server refuses the documented keys: %v", errs.ToAggregate())
	}
	for _, k := range []string{key + "/pod", key + "/container.db", containerKey(key, long+"x")} {
		if errs := validAnnotations(map[string]string{k: "auto"}); len(errs) == 0 {
			t.Errorf("the API server accepts %q (the test's premise is wrong)", k)
		}
		if checkKey(k) == nil {
			t.Errorf("checkKey accepts %q, the API server does not", k)
		}
	}
}

// The plugin's own check of a configured annotation (it has no
// apimachinery) agrees with the API server's.
func TestCheckKeyAgreesWithAPIServer(t *testing.T) {
	for _, k := range []string{
		"mthpctl.io/policy", "example.com/mthp", "mthp", "a.b.c/x_y.z-1", "Example.com/mthp",
		"example.com/", "/mthp", "example.com/-mthp", "example.com/mthp-", "example.com/a/b",
		"example_com/mthp", strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 60) + ".com/" + strings.Repeat("b", 63),
		strings.Repeat("a.", 126) + "a/x", strings.Repeat("a.", 127) + "a/x",
		"policy.mthpctl.io/container." + strings.Repeat("c", maxContainerName),
		"policy.mthpctl.io/container." + strings.Repeat("c", maxContainerName+1),
	} {
		api := len(validAnnotations(map[string]string{k: "v"})) == 0
		ours := checkKey(k)
		if api != (ours == nil) {
			t.Errorf("%q: API server accepts: %v, checkKey: %v", k, api, ours)
		}
	}
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"mthpctl.io/policy", true},
		{"mthp.example.com", true},                       // scopes mthp.example.com/pod
		{"example.com/Policy", true},                     // checked in lower case
		{"example.com/a/b", false},                       // two slashes
		{"mthpctl.io/policy/pod", false},                 // the old scope as the key
		{"example.com/" + strings.Repeat("p", 63), true}, // a 63-character label in the scopes prefix
	} {
		err := checkAnnotationKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("checkAnnotationKey(%q): %v, want ok=%v", tc.key, err, tc.ok)
		}
		if err == nil {
			ann := map[string]string{tc.key: "v", podKey(tc.key): "v", containerKey(tc.key, "app"): "v"}
			if errs := validAnnotations(ann); len(errs) > 0 {
				t.Errorf("configured %q: the API server refuses its keys: %v", tc.key, errs.ToAggregate())
			}
		}
	}
}
