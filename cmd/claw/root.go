package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

// globals are the flags every command shares.
type globals struct {
	home   string // --home, or $CLAW_HOME, or ~/.claw
	config string // --config, or $CLAW_HOME/config.toml
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// hookFallback is set when the hook's fast path tried first (fastHook).
	hookFallback *hookFallback
}

// commands are claw's command groups, one file each.
func commands(g *globals) []*cobra.Command {
	return []*cobra.Command{
		newAgentCommand(g),
		newAuditCommand(g),
		newConfigCommand(g),
		newDoctorCommand(g),
		newEstopCommand(g),
		newExecCommand(g),
		newGateCommand(g),
		newGrantCommand(g),
		newHookCommand(g),
		newInitCommand(g),
		newKeysCommand(g),
		newMCPCommand(g),
		newMemoryCommand(g),
		newOnboardCommand(g),
		newPassphraseCommand(g),
		newPluginCommand(g),
		newProviderCommand(g),
		newReceiptCommand(g),
		newSandboxCommand(g),
		newServeCommand(g),
		newServiceCommand(g),
		newSOPCommand(g),
		newToolCommand(g),
		newVersionCommand(g),
	}
}

func newRootCommand(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "claw",
		Short: "Policy-first security gateway and sandboxed executor for LLM agents",
		Long: `claw decides every action an agent proposes with Rego policies, asks a human
when the policy says so, runs what is allowed under Landlock and seccomp, and
records every attempt in a signed, hash-chained receipt log.

EXIT STATUS
  0 ok or allowed, 1 error, 2 usage, 3 denied by policy, 4 verification
  failed, 5 sandbox unavailable, 6 needs approval or passphrase, 130
  interrupted. claw exec and claw sandbox run pass the child's status
  through; 126 means sandbox setup failed and nothing ran, 127 command not
  found.`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetIn(g.stdin)
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.PersistentFlags().StringVar(&g.home, "home", "", "claw home directory (default $CLAW_HOME or ~/.claw)")
	root.PersistentFlags().StringVar(&g.config, "config", "", "config file (default HOME/config.toml)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return withCode(exitUsage, err, fmt.Sprintf("see '%s --help'", c.CommandPath()))
	})
	root.AddCommand(commands(g)...)
	root.Version = version
	root.SetVersionTemplate(versionLine(versionInfo()) + "\n")
	root.PersistentPreRun = func(c *cobra.Command, _ []string) { noticeOldSpellings(c, g) }
	addCompletions(root, flagValues(g))
	return root
}

// run is the one exit point: it runs the command line and maps the result to
// an exit code.
func run(args []string) int {
	if code, ok := runtime.Reenter(args); ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globals{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	if code, ok := fastHook(ctx, args, g); ok {
		return code
	}
	root := newRootCommand(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		if isCobraUsage(err) {
			err = withCode(exitUsage, err, "see 'claw --help'")
		}
		printError(g.stderr, err)
		if ctx.Err() != nil && exitCodeOf(err) == exitError {
			return exitInterrupted
		}
	}
	return exitCodeOf(err)
}

// isCobraUsage reports whether err is one of cobra's argument errors, which
// it returns as plain errors.
func isCobraUsage(err error) bool {
	var ce *codeError
	if errors.As(err, &ce) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if len(msg) >= len(p) && containsFold(msg, p) {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
