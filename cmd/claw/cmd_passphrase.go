package main

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/term"
)

func init() {
	doctorChecks = append(doctorChecks, doctorCheck{Name: "passphrase", Run: func(g *globals) doctorResult { return runtime.CheckPassphrase(loadDoctorState(g)) }})
}

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
		broker.DefaultArgon2id.Memory, broker.DefaultArgon2id.Time, broker.DefaultArgon2id.Threads)
	return nil
}

// readNewPassphrase reads the new passphrase: twice without echo on a
// terminal, or one line of standard input with --stdin.
func readNewPassphrase(g *globals, fromStdin bool) (string, error) {
	short := func() error {
		return withCode(exitError, fmt.Errorf("the passphrase must be at least %d characters", broker.MinPassphraseLen))
	}
	if fromStdin {
		r := bufio.NewReader(io.LimitReader(g.stdin, term.MaxPassphraseInput+2))
		line, err := r.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", withCode(exitError, fmt.Errorf("reading standard input: %w", err))
		}
		if !strings.HasSuffix(line, "\n") && len(line) > term.MaxPassphraseInput {
			return "", withCode(exitError, fmt.Errorf("the passphrase is longer than %d bytes", term.MaxPassphraseInput))
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if len(line) < broker.MinPassphraseLen {
			return "", short()
		}
		return line, nil
	}
	f, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(f) {
		return "", withCode(exitNeedsHuman, errors.New("standard input is not a terminal, so the passphrase cannot be typed without echo"),
			"pipe it in with --stdin")
	}
	ctx := context.Background()
	p1, err := term.ReadNoEcho(ctx, f, func() { fmt.Fprint(g.stderr, "New passphrase: ") })
	fmt.Fprintln(g.stderr)
	if err != nil {
		return "", withCode(exitError, err)
	}
	if len(p1) < broker.MinPassphraseLen {
		return "", short()
	}
	p2, err := term.ReadNoEcho(ctx, f, func() { fmt.Fprint(g.stderr, "Repeat passphrase: ") })
	fmt.Fprintln(g.stderr)
	if err != nil {
		return "", withCode(exitError, err)
	}
	if subtle.ConstantTimeCompare([]byte(p1), []byte(p2)) != 1 {
		return "", withCode(exitError, errors.New("the passphrases do not match"), "nothing was changed")
	}
	return p1, nil
}
