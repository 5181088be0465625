// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The annotation's policy spec: "auto", "fixed max-size=64K", "never",
// "auto window=2s threshold=50ms min-usage=0 max-size=2M", each option
// word the long option of mthpctl attach without its dashes. The words are
// checked here so that a malformed annotation is named with its fix before
// anything runs; the values' meaning (a power of two, a window in range) is
// mthpctl's to judge, and its refusal (exit 1) is reported the same way.
package main

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// Spec is a parsed policy spec. Opts holds the option words given, by
// name (without "--"); Private is the bare word "private".
type Spec struct {
	Policy  string
	Opts    map[string]string
	Private bool
}

// optKind tells how an option's value is read: a size or a duration.
type optKind int

const (
	kindSize optKind = iota
	kindDuration
)

var optKinds = map[string]optKind{
	"threshold": kindDuration,
	"window":    kindDuration,
	"min-usage": kindSize,
	"max-size":  kindSize,
}

// Which options each policy takes (mthpctl-attach(8), OPTIONS).
var policyOpts = map[string][]string{
	"auto":   {"threshold", "window", "min-usage", "max-size"},
	"fixed":  {"max-size"},
	"never":  {},
	"simple": {"threshold", "window", "max-size"},
}

// ParseSpec reads an annotation value. The error says what is wrong and
// what a right value looks like, in one line.
func ParseSpec(s string) (Spec, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return Spec{}, fmt.Errorf("empty: give auto, fixed max-size=SIZE or never")
	}
	sp := Spec{Policy: words[0], Opts: map[string]string{}}
	allowed, ok := policyOpts[sp.Policy]
	if !ok {
		return Spec{}, fmt.Errorf("unknown policy %q: the first word is auto, fixed, never or simple", words[0])
	}
	for _, w := range words[1:] {
		if w == "private" {
			sp.Private = true
			continue
		}
		k, v, found := strings.Cut(w, "=")
		if !found || v == "" {
			return Spec{}, fmt.Errorf("%q is not NAME=VALUE: write e.g. max-size=64K", w)
		}
		if !contains(allowed, k) {
			if len(allowed) == 0 {
				return Spec{}, fmt.Errorf("%s takes no options: remove %q", sp.Policy, w)
			}
			return Spec{}, fmt.Errorf("%s takes %s, not %q", sp.Policy, strings.Join(allowed, ", "), k)
		}
		if _, dup := sp.Opts[k]; dup {
			return Spec{}, fmt.Errorf("%s given twice: keep one", k)
		}
		var err error
		switch optKinds[k] {
		case kindSize:
			_, err = parseSize(v)
			if err != nil {
				err = fmt.Errorf("%s=%s: a size is a number with K, M, G or T, e.g. %s=64K", k, v, k)
			}
		case kindDuration:
			_, err = parseDuration(v)
			if err != nil {
				err = fmt.Errorf("%s=%s: a duration needs a unit ns, us, ms, s or min, e.g. %s=100ms", k, v, k)
			}
		}
		if err != nil {
			return Spec{}, err
		}
		sp.Opts[k] = v
	}
	if sp.Policy == "fixed" && sp.Opts["max-size"] == "" {
		return Spec{}, fmt.Errorf("fixed needs max-size: write e.g. \"fixed max-size=64K\"")
	}
	return sp, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// String is the spec's canonical form: the policy, the options sorted.
func (s Spec) String() string {
	parts := []string{s.Policy}
	for _, k := range s.sortedKeys() {
		parts = append(parts, k+"="+s.Opts[k])
	}
	if s.Private {
		parts = append(parts, "private")
	}
	return strings.Join(parts, " ")
}

func (s Spec) sortedKeys() []string {
	keys := make([]string, 0, len(s.Opts))
	for k := range s.Opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Args are the words of mthpctl attach for the spec (after --cgroup).
func (s Spec) Args() []string {
	args := []string{"--policy", s.Policy}
	for _, k := range s.sortedKeys() {
		args = append(args, "--"+k, s.Opts[k])
	}
	if s.Private {
		args = append(args, "--private")
	}
	return args
}

// Params are the numbers mthpctl status -j reports for the spec
// (policy and params), with attach's defaults filled in, so that an
// attached policy can be compared with the one a pod asks for.
func (s Spec) Params() Params {
	p := Params{Policy: s.Policy}
	// the sampled policies report their window and threshold, auto its
	// minimum usage too (mthpctl_params_json)
	if s.Policy == "auto" || s.Policy == "simple" {
		p.WindowNs = u64p(1_000_000_000)
		p.ThresholdNs = u64p(100_000_000)
		if s.Policy == "auto" {
			p.MinUsageBytes = u64p(16 << 20)
		}
		if v, ok := s.Opts["window"]; ok {
			n, _ := parseDuration(v)
			p.WindowNs = &n
		}
		if v, ok := s.Opts["threshold"]; ok {
			n, _ := parseDuration(v)
			p.ThresholdNs = &n
		}
		if v, ok := s.Opts["min-usage"]; ok {
			n, _ := parseSize(v)
			p.MinUsageBytes = &n
		}
	}
	if v, ok := s.Opts["max-size"]; ok {
		n, _ := parseSize(v)
		p.MaxSizeBytes = &n
	}
	return p
}

func u64p(v uint64) *uint64 { return &v }

var sizeUnits = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

var durationUnits = map[string]uint64{
	"ns": 1, "us": 1000, "ms": 1_000_000, "s": 1_000_000_000, "min": 60_000_000_000,
}

// parseSize and parseDuration read what mthpctl's parse.c reads: digits,
// an optional fraction of at most 9 digits that makes a whole number, a
// unit (sizes case-insensitive, durations not).
func parseSize(s string) (uint64, error) { return parseScaled(s, sizeUnits, true) }

func parseDuration(s string) (uint64, error) { return parseScaled(s, durationUnits, false) }

func parseScaled(s string, units map[string]uint64, nocase bool) (uint64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("no number in %q", s)
	}
	num := s[:i]
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 || j-i-1 > 9 {
			return 0, fmt.Errorf("bad fraction in %q", s)
		}
		num = s[:j]
		i = j
	}
	unit := s[i:]
	if nocase {
		unit = strings.ToLower(unit)
	}
	mult, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", s[i:])
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad number %q", num)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(mult)))
	if !r.IsInt() || !r.Num().IsUint64() {
		return 0, fmt.Errorf("%q is not a whole number of bytes or nanoseconds", s)
	}
	return r.Num().Uint64(), nil
}
