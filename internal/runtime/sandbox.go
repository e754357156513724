package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/config"
)

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
