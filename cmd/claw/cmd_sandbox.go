package main

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
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
		r      runtime.SandboxRun
		asJSON bool
		stdin  bool
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
			r.Argv = args
			if !c.Flags().Changed("run-as") {
				r.DefaultRunAs = func(write []string) string { return ownerRunAs(g, write) }
			}
			if stdin {
				r.Stdin = g.stdin
			}
			r.Warn = func(format string, args ...any) { warnf(g.stderr, format, args...) }
			// An error before the run (usage, standard input) passes
			// through reportRun as it is.
			res, err := r.Run(c.Context())
			return reportRun(g, res, err, asJSON)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&r.Read, "read", nil, "grant read (and execute) access to `PATH` (repeatable)")
	f.StringArrayVar(&r.Write, "write", nil, "grant read-write access to `PATH` (repeatable)")
	f.StringVar(&r.NetPorts, "net", "", "allow TCP connections to `PORTS` (comma-separated); default no network")
	f.DurationVar(&r.Timeout, "timeout", runtime.SandboxTimeout, "kill the whole process tree after `D`")
	f.StringVar(&r.Cwd, "cwd", "", "working directory (default the first --write path, else the private home)")
	f.StringArrayVar(&r.Env, "env", nil, "pass `NAME` from the environment, or set NAME=VALUE (secret-looking names are refused)")
	f.StringVar(&r.RunAs, "run-as", "", "when root, run as this `USER` or uid (\"\": uid 0 with no capabilities; default: [sandbox] run_as when it owns every --write path, else uid 0)")
	f.BoolVar(&stdin, "stdin", false, "pass standard input to the command (default /dev/null)")
	f.Int64Var(&r.MaxOutput, "max-output", runtime.SandboxMaxOutput, "bytes of stdout and of stderr kept")
	f.Uint64Var(&r.Limits.CPUSeconds, "cpu", 0, "CPU seconds (default 120)")
	f.Uint64Var(&r.Limits.MemoryBytes, "memory", 0, "data size in bytes (default 4 GiB)")
	f.Uint64Var(&r.Limits.Processes, "pids", 0, "number of processes (default 512)")
	f.Uint64Var(&r.Limits.FileSizeBytes, "file-size", 0, "largest file the command may write, in bytes (default 1 GiB)")
	f.IntVar(&r.MinLandlockABI, "min-landlock-abi", 0, "required Landlock ABI (default 6)")
	f.BoolVar(&r.Degraded, "unsafe-degraded", false, "run even when the kernel cannot confine the command fully (prints a warning; writes no receipt)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return c
}

// ownerRunAs is the user claw sandbox run (and an MCP upstream) uses as
// root when none is named (runtime.OwnerRunAs).
func ownerRunAs(g *globals, write []string) string {
	home, path, err := configPaths(g)
	if err != nil {
		return ""
	}
	return runtime.OwnerRunAs(home, path, write)
}

var abs = runtime.AbsPaths

// reportRun prints a sandboxed run's outcome and maps it to claw's exit
// status: the command's own, or 5, 126, 127.
func reportRun(g *globals, res runtime.SandboxResult, err error, asJSON bool) error {
	if err := runtime.RunFailed(err); err != nil {
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
	if err == nil && res.TimedOut {
		infof(g.stderr, "timed out after %v; the process tree was killed", res.Duration.Round(time.Millisecond))
	}
	return runtime.RunExit(res, err)
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
