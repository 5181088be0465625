// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The attach backend: the mthpctl binary, driven by its JSON output (-j)
// and exit codes (mthpctl(8), EXIT STATUS). One implementation of
// attaching exists, mthpctl's own (its pin protocol under the pin lock,
// its rollback); the plugin never touches bpffs itself.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// mthpctl's exit codes (src/mthpctl.h).
const (
	ExitUsage       = 1
	ExitPerm        = 2
	ExitUnsupported = 3
	ExitCgroup      = 4
	ExitState       = 5
	ExitBPFFS       = 6
	ExitFail        = 7
)

// Backend attaches, detaches and reports policies of cgroups.
type Backend interface {
	// Attach the spec to the cgroup directory (absolute path); replace
	// swaps an attached policy atomically.
	Attach(ctx context.Context, cgroup string, spec Spec, replace bool) error
	Detach(ctx context.Context, cgroup string) error
	// DetachID removes the policy of a removed cgroup by its id.
	DetachID(ctx context.Context, id uint64) error
	Status(ctx context.Context) (StatusReport, error)
}

// StatusReport is what the plugin reads of mthpctl status -j.
type StatusReport struct {
	// Supported: the kernel has bpf_mthp_ops (nil: not said).
	Supported *bool
	// Object: the built-in policy's object this mthpctl attaches
	// (builtin_object_hash; "": an mthpctl that does not say).
	Object   string
	Policies []Policy
}

// ExitError is mthpctl's refusal: its exit code and its message.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return fmt.Sprintf("mthpctl exit %d: %s", e.Code, e.Msg) }

// exitCode is err's mthpctl exit code, or -1 when err is not a refusal.
func exitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// Params are a policy's "policy" and "params" in mthpctl's JSON.
type Params struct {
	Policy        string  `json:"policy"`
	WindowNs      *uint64 `json:"window_ns,omitempty"`
	ThresholdNs   *uint64 `json:"threshold_ns,omitempty"`
	MinUsageBytes *uint64 `json:"min_usage_bytes,omitempty"`
	MaxSizeBytes  *uint64 `json:"max_size_bytes,omitempty"`
}

func eqp(a, b *uint64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Equal: the same policy with the same parameters.
func (p Params) Equal(q Params) bool {
	return p.Policy == q.Policy && eqp(p.WindowNs, q.WindowNs) && eqp(p.ThresholdNs, q.ThresholdNs) &&
		eqp(p.MinUsageBytes, q.MinUsageBytes) && eqp(p.MaxSizeBytes, q.MaxSizeBytes)
}

// Policy is one entry of mthpctl status -j's "policies" (the fields the
// plugin uses; mthpctl-status(8) documents them all).
type Policy struct {
	Cgroup   *string `json:"cgroup"` // null: the cgroup is gone
	CgroupID uint64  `json:"cgroup_id"`
	Attached bool    `json:"attached"`
	Policy   string  `json:"policy"`
	// ObjectHash: the object the cgroup runs (nil: not known, or an
	// mthpctl that does not say)
	ObjectHash *string `json:"object_hash"`
	Params     struct {
		WindowNs      *uint64 `json:"window_ns"`
		ThresholdNs   *uint64 `json:"threshold_ns"`
		MinUsageBytes *uint64 `json:"min_usage_bytes"`
		MaxSizeBytes  *uint64 `json:"max_size_bytes"`
	} `json:"params"`
	AllowedSizesKB []uint64 `json:"allowed_sizes_kb"`
	Restriction    string   `json:"restriction"`
	SampleCgroup   *string  `json:"sample_cgroup"`
	Live           struct {
		AnonShmemBytes *uint64 `json:"anon_shmem_bytes"`
	} `json:"live"`
	Totals *struct {
		Calls     map[string]uint64            `json:"calls"`
		Fallbacks map[string]map[string]uint64 `json:"fallbacks"`
	} `json:"totals"`
}

// Params of the attached policy, comparable with Spec.Params.
func (p Policy) ParamsOf() Params {
	return Params{Policy: p.Policy, WindowNs: p.Params.WindowNs, ThresholdNs: p.Params.ThresholdNs,
		MinUsageBytes: p.Params.MinUsageBytes, MaxSizeBytes: p.Params.MaxSizeBytes}
}

// ExecBackend runs the mthpctl binary at Path.
type ExecBackend struct {
	mu      sync.Mutex // Path and Timeout, set again by setConfig
	Path    string
	Timeout time.Duration // per command; 0: none
}

// setConfig takes the binary and the timeout of a configuration NRI
// passes after the start (Configure).
func (b *ExecBackend) setConfig(cfg Config) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Path, b.Timeout = cfg.Mthpctl, time.Duration(cfg.TimeoutMs)*time.Millisecond
}

func (b *ExecBackend) run(ctx context.Context, args ...string) ([]byte, error) {
	b.mu.Lock()
	path, timeout := b.Path, b.Timeout
	b.mu.Unlock()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append([]string{"-j"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// on the timeout, kill its process group, and stop waiting for its
	// output soon after even if something it started holds the pipes
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 200 * time.Millisecond
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() < 0 {
		// not started, or killed (the timeout): attach's pin protocol
		// leaves the old policy or the new one, never half of one
		return nil, fmt.Errorf("%s %s: %w", path, args[0], err)
	}
	// with -j mthpctl prints {"error": ..., "exit_code": N}; argp's
	// refusals of the command line go to stderr
	msg := strings.TrimSpace(stderr.String())
	var je struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(stdout.Bytes(), &je) == nil && je.Error != "" {
		msg = je.Error
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return nil, &ExitError{Code: xe.ExitCode(), Msg: msg}
}

func (b *ExecBackend) Attach(ctx context.Context, cgroup string, spec Spec, replace bool) error {
	args := append([]string{"attach", "--cgroup", cgroup}, spec.Args()...)
	if replace {
		args = append(args, "--replace")
	}
	_, err := b.run(ctx, args...)
	return err
}

func (b *ExecBackend) Detach(ctx context.Context, cgroup string) error {
	_, err := b.run(ctx, "detach", "--cgroup", cgroup)
	return err
}

func (b *ExecBackend) DetachID(ctx context.Context, id uint64) error {
	_, err := b.run(ctx, "detach", "--cgroup-id", strconv.FormatUint(id, 10))
	return err
}

func (b *ExecBackend) Status(ctx context.Context) (StatusReport, error) {
	out, err := b.run(ctx, "status")
	if err != nil {
		return StatusReport{}, err
	}
	return parseStatus(out)
}

func parseStatus(out []byte) (StatusReport, error) {
	var st struct {
		Kernel struct {
			BpfMthpOps *bool `json:"bpf_mthp_ops"`
		} `json:"kernel"`
		BuiltinObjectHash string   `json:"builtin_object_hash"`
		PoliciesReadable  *bool    `json:"policies_readable"`
		Policies          []Policy `json:"policies"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return StatusReport{}, fmt.Errorf("mthpctl status -j: %w", err)
	}
	r := StatusReport{Supported: st.Kernel.BpfMthpOps, Object: st.BuiltinObjectHash}
	if st.PoliciesReadable != nil && !*st.PoliciesReadable {
		return r, fmt.Errorf("mthpctl status -j: policies not readable (the plugin needs root)")
	}
	r.Policies = st.Policies
	return r, nil
}
