package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/config"
)

func newSandboxCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a command in claw's sandbox, without the policy gate",
		Long: `The sandbox alone, without the gate: what bwrap is to a shell. It only ever
adds restrictions, and it is how a policy's sandbox plan is debugged.`,
	}
	c.AddCommand(newSandboxRunCommand(g), newSandboxCheckCommand(g))
	return c
}

func newSandboxRunCommand(g *globals) *cobra.Command {
	var (
		read, write, env []string
		netPorts         string
		timeout          time.Duration
		cwd, runAs       string
		asJSON, stdin    bool
		degraded         bool
		minABI           int
		maxOutput        int64
		limits           executor.Limits
	)
	c := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARG...]",
		Short: "Run one command under Landlock, seccomp and namespaces",
		Long: `Run one command in a sandbox made for it. The command reads the system
directories, the --read paths read-only, the --write paths read-write, a
private home and TMPDIR, and nothing else (outside them it can still stat
a path it names: see claw doctor); it has no network unless --net grants
TCP ports to connect to; its environment is an allowlist.

Output is collected (head and tail kept up to --max-output per stream) and
printed when the command ends.

EXIT STATUS
  The command's own status passes through (128+N when killed by signal N).
  5 the sandbox is unavailable on this kernel (see claw doctor), 126 the
  sandbox could not be set up and nothing ran, 127 command not found, 2
  usage.

As root, the command keeps uid 0 without capabilities, except when every
--write path belongs to the [sandbox] run_as user (like the workspace
claw init hands to it): then it runs as that user, as claw exec would
there. --run-as chooses the user itself.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			spec := executor.Spec{
				Argv: args, Read: abs(read), Write: abs(write), Env: env, Timeout: timeout,
				RunAs: runAs, MinLandlockABI: minABI, Degraded: degraded, MaxOutput: maxOutput, Limits: limits,
			}
			if cwd != "" {
				spec.Cwd = abs([]string{cwd})[0]
			}
			if !c.Flags().Changed("run-as") {
				spec.RunAs = ownerRunAs(g, spec.Write)
			}
			if netPorts != "" {
				ports, err := parsePorts(netPorts)
				if err != nil {
					return usageErrorf("--net: %v", err)
				}
				spec.Net.Ports = ports
			}
			if stdin {
				data, err := io.ReadAll(io.LimitReader(g.stdin, 16<<20+1))
				if err != nil {
					return fmt.Errorf("reading standard input: %w", err)
				}
				if len(data) > 16<<20 {
					return usageErrorf("--stdin: more than 16 MiB")
				}
				spec.Stdin = data
			}
			if degraded {
				warnf(g.stderr, "--unsafe-degraded: the command runs with whatever confinement this kernel offers, perhaps none, and no receipt records it")
			}
			res, err := executor.Run(c.Context(), spec)
			return reportRun(g, res, err, asJSON)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&read, "read", nil, "grant read (and execute) access to `PATH` (repeatable)")
	f.StringArrayVar(&write, "write", nil, "grant read-write access to `PATH` (repeatable)")
	f.StringVar(&netPorts, "net", "", "allow TCP connections to `PORTS` (comma-separated); default no network")
	f.DurationVar(&timeout, "timeout", executor.DefaultTimeout, "kill the whole process tree after `D`")
	f.StringVar(&cwd, "cwd", "", "working directory (default the first --write path, else the private home)")
	f.StringArrayVar(&env, "env", nil, "pass `NAME` from the environment, or set NAME=VALUE (secret-looking names are refused)")
	f.StringVar(&runAs, "run-as", "", "when root, run as this `USER` or uid (\"\": uid 0 with no capabilities; default: [sandbox] run_as when it owns every --write path, else uid 0)")
	f.BoolVar(&stdin, "stdin", false, "pass standard input to the command (default /dev/null)")
	f.Int64Var(&maxOutput, "max-output", executor.DefaultMaxOutput, "bytes of stdout and of stderr kept")
	f.Uint64Var(&limits.CPUSeconds, "cpu", 0, "CPU seconds (default 120)")
	f.Uint64Var(&limits.MemoryBytes, "memory", 0, "data size in bytes (default 4 GiB)")
	f.Uint64Var(&limits.Processes, "pids", 0, "number of processes (default 512)")
	f.Uint64Var(&limits.FileSizeBytes, "file-size", 0, "largest file the command may write, in bytes (default 1 GiB)")
	f.IntVar(&minABI, "min-landlock-abi", 0, "required Landlock ABI (default 6)")
	f.BoolVar(&degraded, "unsafe-degraded", false, "run even when the kernel cannot confine the command fully (prints a warning; writes no receipt)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return c
}

// ownerRunAs is the user claw sandbox run uses as root when --run-as is not
// given: the config's run_as when that user owns every write grant, so that
// the command can write in a workspace init handed to it; else "" (uid 0,
// no capabilities). An unreadable config leaves uid 0.
func ownerRunAs(g *globals, write []string) string {
	if os.Geteuid() != 0 || len(write) == 0 {
		return ""
	}
	home, path, err := configPaths(g)
	if err != nil {
		return ""
	}
	cfg, _, err := config.LoadOrDefault(path, home)
	if err != nil {
		return ""
	}
	uid, _, ok, err := runAsIDs(cfg.Sandbox.RunAs)
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

func abs(ps []string) []string {
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

// reportRun prints a sandboxed run's outcome and maps it to claw's exit
// status: the command's own, or 5, 126, 127.
func reportRun(g *globals, res executor.Result, err error, asJSON bool) error {
	var se *executor.SetupError
	switch {
	case errors.Is(err, executor.ErrUnavailable):
		return withCode(exitSandbox, err, "run 'claw doctor' to see what this kernel supports")
	case errors.Is(err, executor.ErrInvalidSpec):
		return withCode(exitUsage, err)
	case err != nil && !errors.As(err, &se) && !errors.Is(err, executor.ErrNotFound):
		return err
	}
	if asJSON {
		if jerr := json.NewEncoder(g.stdout).Encode(res); jerr != nil {
			return jerr
		}
	} else {
		g.stdout.Write(res.Stdout)
		g.stderr.Write(res.Stderr)
	}
	if res.StdoutTruncated || res.StderrTruncated {
		warnf(g.stderr, "output truncated (%d bytes of stdout, %d of stderr produced)", res.StdoutBytes, res.StderrBytes)
	}
	if res.Sandbox.Degraded {
		missing := make([]string, len(res.Sandbox.Warnings))
		for i, w := range res.Sandbox.Warnings {
			missing[i] = strings.TrimPrefix(w, "DEGRADED: ") // said once, first
		}
		warnf(g.stderr, "DEGRADED sandbox: %s", strings.Join(missing, "; "))
	}
	switch {
	case errors.As(err, &se):
		return withCode(exitSetupFailed, err, "nothing ran")
	case errors.Is(err, executor.ErrNotFound):
		return withCode(exitNotFound, err)
	case res.TimedOut:
		infof(g.stderr, "timed out after %v; the process tree was killed", res.Duration.Round(time.Millisecond))
	}
	if res.ExitCode != 0 {
		return silentExit(res.ExitCode)
	}
	return nil
}

func newSandboxCheckCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "check",
		Short: "Show what the kernel supports and what the sandbox enforces",
		Long: `Same as claw doctor.

EXIT STATUS
  0 the sandbox is available and every check passed, 5 the sandbox is
  unavailable, 1 a check failed.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runDoctor(g, asJSON) },
	}
	addOutputFlag(c, &asJSON)
	return c
}
