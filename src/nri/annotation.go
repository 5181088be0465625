// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The annotation's keys. Kubernetes accepts an annotation key of at most
// one slash: an optional prefix, a DNS subdomain of at most 253
// characters, and a name of at most 63 characters of [A-Za-z0-9._-]
// that starts and ends with a letter or digit. The plain key is the
// configured one (mthpctl.io/policy); the scopes follow the form of the
// NRI project's plugins, SCOPE/pod and SCOPE/container.NAME, SCOPE being
// the key's name put in front of its prefix (policy.mthpctl.io).
package main

import (
	"fmt"
	"regexp"
	"strings"
)

// scopePrefix is the prefix of the scoped keys: "mthpctl.io/policy" gives
// "policy.mthpctl.io"; a key without a prefix is its own.
func scopePrefix(key string) string {
	prefix, name, ok := strings.Cut(key, "/")
	if !ok {
		return key
	}
	return name + "." + prefix
}

func podKey(key string) string { return scopePrefix(key) + "/pod" }

func containerKey(key, container string) string {
	return scopePrefix(key) + "/container." + container
}

// maxContainerName is the longest container name whose key is valid:
// the name part "container.NAME" has at most 63 characters.
const maxContainerName = 63 - len("container.")

var (
	qualifiedNameRe = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	dnsSubdomainRe  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// checkKey says why Kubernetes would refuse an annotation key (nil if it
// accepts it). The rules are apimachinery's (IsQualifiedName, the
// annotations' key check); the tests hold them against apimachinery's own.
func checkKey(k string) error {
	// the API server checks the key in lower case (ValidateAnnotations)
	prefix, name, hasPrefix := strings.Cut(strings.ToLower(k), "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	}
	if strings.Contains(name, "/") {
		return fmt.Errorf("%q has more than one slash", k)
	}
	if hasPrefix {
		if prefix == "" {
			return fmt.Errorf("%q has an empty prefix", k)
		}
		if len(prefix) > 253 || !dnsSubdomainRe.MatchString(prefix) {
			return fmt.Errorf("%q: the prefix %q is not a DNS subdomain of at most 253 characters", k, prefix)
		}
	}
	if name == "" || len(name) > 63 || !qualifiedNameRe.MatchString(name) {
		return fmt.Errorf("%q: the name %q is not 1-63 characters of [A-Za-z0-9._-] starting and ending with a letter or digit", k, name)
	}
	return nil
}

// checkAnnotationKey refuses a configured annotation whose keys
// Kubernetes would not accept: the plain key and the pod scope's (the
// container scope's then holds for container names of at most
// maxContainerName characters).
func checkAnnotationKey(key string) error {
	for _, k := range []string{key, podKey(key), containerKey(key, "c")} {
		if err := checkKey(k); err != nil {
			return fmt.Errorf("annotation %q: its key %v", key, err)
		}
	}
	return nil
}
