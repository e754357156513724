package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/estop"
)

func init() {
	doctorChecks = append(doctorChecks, doctorCheck{Name: "emergency stop", Run: checkEstop})
}

// checkEstop fails while the emergency stop is engaged: no action runs.
func checkEstop(g *globals) doctorResult {
	s := loadDoctorState(g)
	if !s.HomeExists {
		return notInitialised(s)
	}
	st, _ := readEstop(filepath.Join(s.Home, estop.FileName))
	if !st.Engaged {
		return passed("not engaged")
	}
	d := "engaged since " + orUnknown(st.Since) + " by " + orUnknown(st.By)
	if st.Reason != "" {
		d += ": " + st.Reason
	}
	return failed(d+"; no action runs", "clear it with 'claw estop --clear'")
}

// maxEstopReason bounds the reason kept in the ESTOP file and receipt.
const maxEstopReason = 512

// estopStatus is the --status -o json shape.
type estopStatus = estop.State

func newEstopCommand(g *globals) *cobra.Command {
	var (
		reason        string
		clear, status bool
		asJSON        bool
		keys          keyOptions
	)
	c := &cobra.Command{
		Use:   "estop [--reason TEXT] | --clear | --status",
		Short: "Engage, clear or show the emergency stop",
		Long: `Engage the emergency stop: create HOME/ESTOP (mode 0600) and record an
estop receipt. While it exists no action runs (each attempt is receipted
as "estop"), and every broker with actions in flight (claw exec, claw
agent, claw serve) cancels them: their sandboxed process trees are
killed and their outcome receipts say "estop".

--clear records the clearing and removes the file; --status shows it.

EXIT STATUS
  0 done (or --status, engaged or not), 1 error (the receipt could not be
  written: a stop is still engaged, a clear is not done), 2 usage.`,
		Example: `  claw estop --reason "agent looping on deploys"
  claw estop --status -o json
  claw estop --clear`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if clear && status || (clear || status) && c.Flags().Changed("reason") {
				return usageErrorf("--clear, --status and --reason do not go together")
			}
			home, err := receiptHome(g)
			if err != nil {
				return err
			}
			file := filepath.Join(home, estop.FileName)
			switch {
			case status:
				return estopShow(g, file, asJSON)
			case clear:
				return estopClear(c.Context(), g, &keys, file)
			}
			return estopEngage(c.Context(), g, &keys, home, file, estopBy(), reason)
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why the stop is engaged (kept in the file and the receipt)")
	c.Flags().BoolVar(&clear, "clear", false, "clear the emergency stop")
	c.Flags().BoolVar(&status, "status", false, "show whether the emergency stop is engaged")
	addOutputFlag(c, &asJSON)
	keys.addFlags(c)
	return c
}

// estopBy names who engaged or cleared the stop.
func estopBy() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

func estopEngage(ctx context.Context, g *globals, keys *keyOptions, home, file, by, reason string) error {
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return withCode(exitError, fmt.Errorf("no claw home at %s", home), "create it with 'claw init'")
	}
	reason = cleanReason(reason)
	// The stop takes effect first, even when the receipt log cannot be
	// opened; the broker's log then records it.
	already, err := estop.Engage(file, by, reason, time.Now())
	switch {
	case errors.Is(err, estop.ErrDetails): // the file exists: the stop is engaged anyway
		warnf(g.stderr, "%v", err)
	case err != nil:
		return withCode(exitError, err)
	}
	err = withReceiptLog(g, keys, func(log *broker.Log) error {
		_, err := log.EngageEstop(ctx, file, by, reason)
		return err
	})
	if err != nil {
		return withCode(exitError, fmt.Errorf("the emergency stop is engaged, but its receipt could not be written: %w", err))
	}
	if already {
		infof(g.stderr, "the emergency stop was already engaged (%s); recorded again", file)
		return nil
	}
	infof(g.stderr, "emergency stop engaged: no action runs, actions in flight are cancelled")
	infof(g.stderr, "clear it with 'claw estop --clear'")
	return nil
}

func estopClear(ctx context.Context, g *globals, keys *keyOptions, file string) error {
	if !estop.Engaged(file) {
		infof(g.stderr, "the emergency stop is not engaged")
		return nil
	}
	// The clearing is recorded before the stop is lifted: no receipt, no
	// clearing.
	recorded := false
	err := withReceiptLog(g, keys, func(log *broker.Log) error {
		_, err := log.ClearEstop(ctx, file, estopBy())
		recorded = !errors.Is(err, broker.ErrNoReceipt)
		return err
	})
	switch {
	case err != nil && !recorded:
		return withCode(exitError, fmt.Errorf("the clearing could not be recorded, so the emergency stop stays engaged: %w", err))
	case err != nil:
		return withCode(exitError, err)
	}
	infof(g.stderr, "emergency stop cleared")
	return nil
}

func estopShow(g *globals, file string, asJSON bool) error {
	st, err := readEstop(file)
	if err != nil {
		return withCode(exitError, err)
	}
	if asJSON {
		return json.NewEncoder(g.stdout).Encode(st)
	}
	if !st.Engaged {
		fmt.Fprintln(g.stdout, "not engaged")
		return nil
	}
	fmt.Fprintf(g.stdout, "engaged since %s by %s\n", orUnknown(st.Since), orUnknown(st.By))
	if st.Reason != "" {
		fmt.Fprintf(g.stdout, "reason: %s\n", st.Reason)
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// readEstop reads the ESTOP file (see estop.Read), its details escaped
// for a terminal.
func readEstop(file string) (estopStatus, error) {
	st := estop.Read(file)
	st.Since, st.By, st.Reason = sanitize(st.Since), sanitize(st.By), sanitize(st.Reason)
	return st, nil
}

// cleanReason makes the reason one line, bounded, without control
// characters or secrets.
func cleanReason(s string) string {
	s = strings.Join(strings.Fields(sanitize(s)), " ")
	s = broker.Redact(s)
	if len(s) > maxEstopReason {
		s = strings.ToValidUTF8(s[:maxEstopReason], "") + "…"
	}
	return s
}

// withReceiptLog opens the receipt log for a state-change receipt (estop,
// grants), lets fn append to it, and closes it.
func withReceiptLog(g *globals, keys *keyOptions, fn func(*broker.Log) error) error {
	signer, err := loadReceiptSigner(g, keys)
	if err != nil {
		return err
	}
	dir, err := receiptDir(g)
	if err != nil {
		return err
	}
	// The stop must work with a broken config too: the config only moves
	// the receipt directory, and only when it loads cleanly.
	if home, path, err := configPaths(g); err == nil {
		if cfg, _, err := config.LoadOrDefault(path, home); err == nil && cfg.Receipts.Dir != "" {
			dir = cfg.Receipts.Dir
		}
	}
	log, err := broker.OpenLog(dir, signer, broker.LogOptions{CheckpointInterval: -1})
	if err != nil {
		return err
	}
	if err := fn(log); err != nil {
		log.Close()
		return err
	}
	return log.Close()
}
