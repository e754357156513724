package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/term"
)

func newPassphraseCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "passphrase",
		Short: "Manage the passphrase that gates high-risk actions",
		Args:  cobra.NoArgs,
	}
	var fromStdin bool
	set := &cobra.Command{
		Use:   "set",
		Short: "Set the passphrase (stored as an argon2id hash in the config)",
		Long: `Set the passphrase asked for by actions the gate decides "passphrase"
(security.passphrase_for). On a terminal it is typed twice without echo;
with --stdin one line is read from standard input, for scripts.

Only an argon2id hash (m=64 MiB, t=3, p=2, random salt) is stored, as
security.passphrase_hash in the config file; the rest of the file is kept
as it is. The passphrase must be at least 8 characters.

Wrong passphrases are counted: security.passphrase_max_failures in a row
(default 5) lock the gate for security.passphrase_lockout (default 15m),
also across restarts (HOME/passphrase.state).

EXIT STATUS
  0 set, 1 error (too short, mismatch, invalid config), 2 usage,
  6 standard input is not a terminal and --stdin was not given.`,
		Example: `  claw passphrase set
  printf '%s\n' "$PASS" | claw passphrase set --stdin`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runPassphraseSet(c.Context(), g, fromStdin)
		},
	}
	set.Flags().BoolVar(&fromStdin, "stdin", false, "read the passphrase from one line of standard input")
	c.AddCommand(set)
	return c
}

func runPassphraseSet(_ context.Context, g *globals, fromStdin bool) error {
	home, path, err := configPaths(g)
	if err != nil {
		return err
	}
	if err := runtime.SetPassphrase(home, path, func() (string, error) { return readNewPassphrase(g, fromStdin) }); err != nil {
		return err
	}
	infof(g.stderr, "passphrase set in %s (argon2id, m=%d KiB, t=%d, p=%d)", path,
		runtime.DefaultArgon2id.Memory, runtime.DefaultArgon2id.Time, runtime.DefaultArgon2id.Threads)
	return nil
}

// readNewPassphrase reads the new passphrase: twice without echo on a
// terminal, or one line of standard input with --stdin.
func readNewPassphrase(g *globals, fromStdin bool) (string, error) {
	if fromStdin {
		return runtime.PassphraseLine(g.stdin)
	}
	f, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(f) {
		return "", withCode(exitNeedsHuman, errors.New("standard input is not a terminal, so the passphrase cannot be typed without echo"),
			"pipe it in with --stdin")
	}
	return runtime.NewPassphrase(func(prompt string) (string, error) {
		p, err := term.ReadNoEcho(context.Background(), f, func() { fmt.Fprint(g.stderr, prompt) })
		fmt.Fprintln(g.stderr)
		return p, err
	})
}
