// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

package main

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct{ in, canon, args, err string }{
		{in: "auto", canon: "auto", args: "--policy auto"},
		{in: "  fixed   max-size=64K ", canon: "fixed max-size=64K", args: "--policy fixed --max-size 64K"},
		{in: "never", canon: "never", args: "--policy never"},
		{in: "auto window=2s threshold=50ms min-usage=0 max-size=2M private",
			canon: "auto max-size=2M min-usage=0 threshold=50ms window=2s private",
			args:  "--policy auto --max-size 2M --min-usage 0 --threshold 50ms --window 2s --private"},
		{in: "", err: "empty"},
		{in: "Auto", err: "unknown policy"},
		{in: "fixed", err: "fixed needs max-size"},
		{in: "never max-size=64K", err: "never takes no options"},
		{in: "fixed window=1s max-size=64K", err: "fixed takes max-size, not \"window\""},
		{in: "auto max-size", err: "not NAME=VALUE"},
		{in: "auto max-size=64X", err: "a size is a number"},
		{in: "auto threshold=100", err: "a duration needs a unit"},
		{in: "auto window=1s window=2s", err: "window given twice"},
	} {
		s, err := ParseSpec(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSpec(%q) = %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tc.in, err)
			continue
		}
		if s.String() != tc.canon || strings.Join(s.Args(), " ") != tc.args {
			t.Errorf("ParseSpec(%q) = %q / %q, want %q / %q", tc.in, s, s.Args(), tc.canon, tc.args)
		}
	}
}

// Spec.Params must equal what mthpctl status -j reports for the attach,
// defaults included, or a restarted plugin replaces policies for nothing.
func TestSpecParams(t *testing.T) {
	a, _ := ParseSpec("auto")
	b, _ := ParseSpec("auto window=1000ms threshold=0.1s min-usage=16M")
	if !a.Params().Equal(b.Params()) {
		t.Errorf("auto and its defaults spelled out differ: %+v %+v", a.Params(), b.Params())
	}
	c, _ := ParseSpec("auto max-size=64K")
	if a.Params().Equal(c.Params()) {
		t.Errorf("a max-size made no difference")
	}
	f, _ := ParseSpec("fixed max-size=1.5M")
	if p := f.Params(); *p.MaxSizeBytes != 3<<19 || p.WindowNs != nil {
		t.Errorf("fixed max-size=1.5M: %+v", p)
	}
}

func TestParseScaled(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "64K": 65536, "64kib": 65536, "1.5M": 3 << 19, "2G": 2 << 30, "7": 7} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "1.K", "0.5", "1.1234567891K", "64X", "-1"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
	for in, want := range map[string]uint64{"100ms": 1e8, "1.5s": 15e8, "2min": 120e9, "10ns": 10} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"100", "1MS", "0.5ns"} {
		if _, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) accepted", in)
		}
	}
}
