package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/textesc"
)

// Defaults of claw sandbox run.
const (
	SandboxTimeout   = executor.DefaultTimeout
	SandboxMaxOutput = executor.DefaultMaxOutput
)

// SandboxResult is what a sandboxed run did.
type SandboxResult = executor.Result

// maxSandboxStdin bounds the standard input claw sandbox run passes on.
const maxSandboxStdin = 16 << 20

// SandboxRun is one run of claw sandbox run: a command in a sandbox made
// for it, without the gate.
type SandboxRun struct {
	Argv             []string
	Read, Write, Env []string // paths as given; made absolute by Run
	NetPorts         string   // comma-separated TCP ports; "" no network
	Timeout          time.Duration
	Cwd, RunAs       string
	Degraded         bool
	MinLandlockABI   int
	MaxOutput        int64
	Limits           executor.Limits
	// DefaultRunAs, when set, chooses RunAs from the write grants.
	DefaultRunAs func(write []string) string
	// Stdin, when set, is passed to the command (at most 16 MiB).
	Stdin io.Reader
	// Warn says, before the command runs, that it may run unconfined.
	Warn func(format string, args ...any)
}

// Run runs the command and returns its result (see executor.Run).
func (r SandboxRun) Run(ctx context.Context) (executor.Result, error) {
	spec := executor.Spec{
		Argv: r.Argv, Read: AbsPaths(r.Read), Write: AbsPaths(r.Write), Env: r.Env, Timeout: r.Timeout,
		RunAs: r.RunAs, MinLandlockABI: r.MinLandlockABI, Degraded: r.Degraded, MaxOutput: r.MaxOutput, Limits: r.Limits,
	}
	if r.Cwd != "" {
		spec.Cwd = AbsPaths([]string{r.Cwd})[0]
	}
	if r.DefaultRunAs != nil {
		spec.RunAs = r.DefaultRunAs(spec.Write)
	}
	if r.NetPorts != "" {
		ports, err := parsePorts(r.NetPorts)
		if err != nil {
			return executor.Result{}, Usagef("--net: %v", err)
		}
		spec.Net.Ports = ports
	}
	if r.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(r.Stdin, maxSandboxStdin+1))
		if err != nil {
			return executor.Result{}, fmt.Errorf("reading standard input: %w", err)
		}
		if len(data) > maxSandboxStdin {
			return executor.Result{}, Usagef("--stdin: more than 16 MiB")
		}
		spec.Stdin = data
	}
	if r.Degraded {
		r.Warn("--unsafe-degraded: the command runs with whatever confinement this kernel offers, perhaps none, and no receipt records it")
	}
	return executor.Run(ctx, spec)
}

// OwnerRunAs is the user a sandboxed command runs as under root when no
// user is named: the config's run_as (of the config at path, in the claw
// home home) when that user owns every write grant, so that the command
// can write in a workspace init handed to it; else "" (uid 0, no
// capabilities). An unreadable config leaves uid 0.
func OwnerRunAs(home, path string, write []string) string {
	if os.Geteuid() != 0 || len(write) == 0 {
		return ""
	}
	cfg, _, err := config.LoadOrDefault(path, home)
	if err != nil {
		return ""
	}
	uid, _, ok, err := RunAsIDs(cfg.Sandbox.RunAs)
	if err != nil || !ok {
		return ""
	}
	for _, w := range write {
		fi, err := os.Stat(w)
		if err != nil {
			return ""
		}
		if st, isUnix := fi.Sys().(*syscall.Stat_t); !isUnix || int(st.Uid) != uid {
			return ""
		}
	}
	return cfg.Sandbox.RunAs
}

// AbsPaths returns the paths ps absolute and with symlinks resolved,
// where they can be.
func AbsPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		out = append(out, p)
	}
	return out
}

func parsePorts(s string) ([]uint16, error) {
	var ports []uint16
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("bad port %q", p)
		}
		ports = append(ports, uint16(n))
	}
	return ports, nil
}

// RunFailed is the error of a sandboxed run that leaves nothing to show:
// the sandbox unavailable (exit 5), a bad spec (2), or any other error
// but a failed setup or a command not found. nil means the run's output
// is to be shown, and [RunExit] says how it ends.
func RunFailed(err error) error {
	var se *executor.SetupError
	switch {
	case errors.Is(err, executor.ErrUnavailable):
		return WithCode(ExitSandbox, err, "run 'claw doctor' to see what this kernel supports")
	case errors.Is(err, executor.ErrInvalidSpec):
		return WithCode(ExitUsage, err)
	case err != nil && !errors.As(err, &se) && !errors.Is(err, executor.ErrNotFound):
		return err
	}
	return nil
}

// RunExit is how a sandboxed run whose output was shown ends claw: 126
// when the sandbox could not be set up, 127 when the command was not
// found, else the command's own status.
func RunExit(res executor.Result, err error) error {
	var se *executor.SetupError
	switch {
	case errors.As(err, &se):
		return WithCode(ExitSetupFailed, err, "nothing ran")
	case errors.Is(err, executor.ErrNotFound):
		return WithCode(ExitNotFound, err)
	case res.ExitCode != 0:
		return SilentExit(res.ExitCode)
	}
	return nil
}

// SandboxReport is what claw doctor found: the kernel's support, the
// Landlock ABI actions require, and the checks beyond the sandbox.
type SandboxReport struct {
	executor.Support
	MinLandlockABI int            `json:"min_landlock_abi"`
	Checks         []DoctorResult `json:"checks"`
	// Unavailable says why the sandbox cannot run actions on this kernel;
	// "" when it can.
	Unavailable string `json:"-"`
}

// ProbeSandbox probes what the kernel supports, and whether that is
// enough for the Landlock ABI actions require (the config's, when cfg is
// not nil and sets one).
func ProbeSandbox(cfg *config.Config) SandboxReport {
	r := SandboxReport{Support: executor.Check(), MinLandlockABI: executor.DefaultMinLandlockABI}
	if cfg != nil && cfg.Sandbox.MinLandlockABI > 0 {
		r.MinLandlockABI = cfg.Sandbox.MinLandlockABI // what actions will require
	}
	err := r.Require(r.MinLandlockABI)
	r.Err = ""
	if err != nil {
		r.Err = err.Error()
		r.Unavailable = strings.TrimPrefix(err.Error(), executor.ErrUnavailable.Error()+": ")
	}
	return r
}

// CheckWorkspace fails when actions could not use the workspace: missing,
// inside a forbidden path, or out of the run_as user's reach.
func CheckWorkspace(ctx context.Context, s DoctorState) DoctorResult {
	if !s.HomeExists {
		return DoctorNotInitialised(s)
	}
	if s.Cfg == nil {
		return DoctorSkipped("the config could not be loaded")
	}
	e := &Env{Home: s.Home, Config: s.Cfg}
	e.UserDir, _ = os.UserHomeDir()
	if problem, fix := WorkspaceIssue(ctx, e, s.Cfg.WorkspaceDir); problem != "" {
		return DoctorFailed(problem, fix)
	}
	detail := s.Cfg.WorkspaceDir
	if _, _, ok, _ := RunAsIDs(s.Cfg.Sandbox.RunAs); ok {
		detail += " (actions run as " + s.Cfg.Sandbox.RunAs + ")"
	}
	return DoctorPassed(detail)
}

// CheckToolPrograms fails when claw runs as root and the run_as user its
// tools switch to could not start claw or its helper.
func CheckToolPrograms(s DoctorState) DoctorResult {
	if s.Cfg == nil {
		return DoctorSkipped("the config could not be loaded")
	}
	runAs := s.Cfg.Sandbox.RunAs
	if _, _, ok, _ := RunAsIDs(runAs); !ok {
		return DoctorSkipped("tools keep claw's own uid")
	}
	if problem, fix := ProgramsProblem(runAs, executor.Check().Helper); problem != "" {
		return DoctorFailed(problem, fix)
	}
	return DoctorPassed("claw and its helper can be started by " + runAs)
}

// OutcomeFailed is the error of a broker outcome that ran nothing to
// show (denied, estop, waiting for a human, rejected, timed out, the
// sandbox unavailable, an error), with its exit status and hint; nil when
// the outcome has a run result to show.
func OutcomeFailed(out *broker.Outcome) error {
	reasons := func() string {
		var s []string
		for _, r := range out.Decision.Reasons {
			s = append(s, r.ID+": "+textesc.Clip(r.Msg, -1))
		}
		return strings.Join(s, "\n")
	}
	switch out.Status {
	case broker.StatusDenied:
		return WithCode(ExitDenied, fmt.Errorf("denied by policy\n%s", reasons()), "see why with 'claw gate test --explain'")
	case broker.StatusEstop:
		return WithCode(ExitDenied, errors.New("the emergency stop is engaged"), "clear it with 'claw estop --clear'")
	case broker.StatusNeedsApproval:
		return WithCode(ExitNeedsHuman, fmt.Errorf("%v\n%s", out.Err, reasons()), "run it from a terminal to approve it, or adjust the autonomy level")
	case broker.StatusRejected:
		if out.Err != nil {
			// a wrong passphrase says so, and when the gate locks
			return WithCode(ExitDenied, fmt.Errorf("rejected: %v", out.Err))
		}
		return WithCode(ExitDenied, errors.New("rejected"))
	case broker.StatusApprovalTO:
		return WithCode(ExitDenied, errors.New("approval timed out"))
	case broker.StatusUnavailable:
		return WithCode(ExitSandbox, out.Err, "run 'claw doctor' to see what this kernel supports")
	case broker.StatusError:
		return WithCode(ExitError, out.Err, "nothing ran")
	}
	if out.Result == nil {
		return WithCode(ExitError, errors.New("no result"))
	}
	return nil
}
