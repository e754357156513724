package main

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
)

func init() {
	doctorChecks = append(doctorChecks, doctorCheck{Name: "passphrase", Run: checkPassphrase})
}

// checkPassphrase reports whether the passphrase gate is set, and fails
// while it is locked after wrong passphrases.
func checkPassphrase(g *globals) doctorResult {
	s := loadDoctorState(g)
	switch {
	case !s.homeExists:
		return notInitialised(s)
	case s.err != nil || s.cfg == nil:
		return skipped("the config does not load (see the config check)")
	case s.cfg.Security.PassphraseHash == "":
		return skipped("no passphrase set: passphrase_for has no effect (set one with 'claw passphrase set')")
	}
	st, err := broker.PassphraseLock(filepath.Join(s.home, "passphrase.state"))
	switch {
	case err != nil:
		return failed(err.Error()+"; passphrase actions are denied", "remove the file to reset the lockout")
	case !st.IsZero():
		return failed("locked after too many wrong passphrases, until "+st.UTC().Format(time.RFC3339)+"; passphrase actions are denied",
			"wait until then")
	}
	return passed("set (argon2id), not locked")
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
	if _, err := os.Stat(path); err != nil {
		return withCode(exitError, fmt.Errorf("no config file at %s", path), "create one with 'claw init'")
	}
	pass, err := readNewPassphrase(g, fromStdin)
	if err != nil {
		return err
	}
	hash, err := broker.HashPassphrase(pass, broker.DefaultArgon2id)
	if err != nil {
		return withCode(exitError, err)
	}
	if err := writePassphraseHash(path, home, hash); err != nil {
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
		r := bufio.NewReader(io.LimitReader(g.stdin, maxPassphraseInput+2))
		line, err := r.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", withCode(exitError, fmt.Errorf("reading standard input: %w", err))
		}
		if !strings.HasSuffix(line, "\n") && len(line) > maxPassphraseInput {
			return "", withCode(exitError, fmt.Errorf("the passphrase is longer than %d bytes", maxPassphraseInput))
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if len(line) < broker.MinPassphraseLen {
			return "", short()
		}
		return line, nil
	}
	f, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", withCode(exitNeedsHuman, errors.New("standard input is not a terminal, so the passphrase cannot be typed without echo"),
			"pipe it in with --stdin")
	}
	ctx := context.Background()
	p1, err := readNoEcho(ctx, f, func() { fmt.Fprint(g.stderr, "New passphrase: ") })
	fmt.Fprintln(g.stderr)
	if err != nil {
		return "", withCode(exitError, err)
	}
	if len(p1) < broker.MinPassphraseLen {
		return "", short()
	}
	p2, err := readNoEcho(ctx, f, func() { fmt.Fprint(g.stderr, "Repeat passphrase: ") })
	fmt.Fprintln(g.stderr)
	if err != nil {
		return "", withCode(exitError, err)
	}
	if subtle.ConstantTimeCompare([]byte(p1), []byte(p2)) != 1 {
		return "", withCode(exitError, errors.New("the passphrases do not match"), "nothing was changed")
	}
	return p1, nil
}

var (
	tableHeader    = lazyRegexp(`^\s*\[`)
	securityHeader = lazyRegexp(`^\s*\[\s*security\s*\]\s*(#.*)?$`)
	hashLine       = lazyRegexp(`^\s*passphrase_hash\s*=`)
)

// setHashLine returns the config text with passphrase_hash in [security]
// set to hash: the existing line replaced, or a line inserted right after
// the [security] header, or a [security] table appended.
func setHashLine(text []byte, hash string) []byte {
	line := `passphrase_hash = "` + hash + `"`
	lines := strings.SplitAfter(string(text), "\n")
	sec := -1
	for i, l := range lines {
		body := strings.TrimRight(l, "\r\n")
		switch {
		case securityHeader().MatchString(body):
			sec = i
		case sec >= 0 && tableHeader().MatchString(body):
			// the next table: no passphrase_hash line in [security]
			return []byte(strings.Join(insertAt(lines, sec+1, line+"\n"), ""))
		case sec >= 0 && hashLine().MatchString(body):
			lines[i] = line + l[len(body):]
			return []byte(strings.Join(lines, ""))
		}
	}
	if sec >= 0 {
		return []byte(strings.Join(insertAt(lines, sec+1, line+"\n"), ""))
	}
	out := string(text)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out + "\n[security]\n" + line + "\n")
}

func insertAt(lines []string, i int, s string) []string {
	if i > 0 && !strings.HasSuffix(lines[i-1], "\n") {
		lines[i-1] += "\n"
	}
	return append(lines[:i], append([]string{s}, lines[i:]...)...)
}

// writePassphraseHash sets the hash in the config file at path: it writes
// a temporary file next to it with the same mode, checks that it is a
// valid config whose hash is the new one, and renames it over the old
// file. On any problem the old file is left as it was.
func writePassphraseHash(path, home, hash string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return withCode(exitError, err)
	}
	old, err := readSmall(path, 1<<20)
	if err != nil {
		return withCode(exitError, err)
	}
	text := setHashLine(old, hash)
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".config-*.toml")
	if err != nil {
		return withCode(exitError, fmt.Errorf("writing the config: %w", err))
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(text); err == nil {
		err = tmp.Chmod(fi.Mode().Perm())
		if err == nil {
			err = tmp.Sync()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return withCode(exitError, fmt.Errorf("writing the config: %w", err))
	}
	cfg, _, err := config.LoadOrDefault(tmp.Name(), home)
	if err != nil {
		return withCode(exitError, fmt.Errorf("the config would not be valid with the new hash, so it was not changed: %w", err),
			"see 'claw config validate'")
	}
	if cfg.Security.PassphraseHash != hash {
		return withCode(exitError, errors.New("could not place passphrase_hash in the [security] table, so the config was not changed"),
			`put passphrase_hash = "" right under the [security] header, and run this again`)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return withCode(exitError, fmt.Errorf("writing the config: %w", err))
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
