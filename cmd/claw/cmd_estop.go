package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

// checkEstop fails while the emergency stop is engaged: no action runs.
func checkEstop(g *globals) doctorResult { return runtime.CheckEstop(loadDoctorState(g)) }

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
			switch {
			case status:
				return estopShow(g, runtime.Estop{Home: home}.File(), asJSON)
			case clear:
				return estopClear(c.Context(), g, &keys, home)
			}
			return estopEngage(c.Context(), g, &keys, home, estopBy(), reason)
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
var estopBy = runtime.EstopBy

// estopOf is the emergency stop of the claw home home, receipted with the
// key keys unlock.
func estopOf(g *globals, keys *keyOptions, home string) runtime.Estop {
	return runtime.Estop{Home: home, Log: stateLog(g, keys), Warn: func(format string, args ...any) { warnf(g.stderr, format, args...) }}
}

func estopEngage(ctx context.Context, g *globals, keys *keyOptions, home, by, reason string) error {
	stop := estopOf(g, keys, home)
	already, err := stop.Engage(ctx, by, reason)
	if err != nil {
		return err
	}
	if already {
		infof(g.stderr, "the emergency stop was already engaged (%s); recorded again", stop.File())
		return nil
	}
	infof(g.stderr, "emergency stop engaged: no action runs, actions in flight are cancelled")
	infof(g.stderr, "clear it with 'claw estop --clear'")
	return nil
}

func estopClear(ctx context.Context, g *globals, keys *keyOptions, home string) error {
	engaged, err := estopOf(g, keys, home).Clear(ctx, estopBy())
	if err != nil {
		return err
	}
	if !engaged {
		infof(g.stderr, "the emergency stop is not engaged")
		return nil
	}
	infof(g.stderr, "emergency stop cleared")
	return nil
}

func estopShow(g *globals, file string, asJSON bool) error {
	st := runtime.ReadEstop(file)
	if asJSON {
		return json.NewEncoder(g.stdout).Encode(st)
	}
	if !st.Engaged {
		fmt.Fprintln(g.stdout, "not engaged")
		return nil
	}
	fmt.Fprintf(g.stdout, "engaged since %s by %s\n", runtime.OrUnknown(st.Since), runtime.OrUnknown(st.By))
	if st.Reason != "" {
		fmt.Fprintf(g.stdout, "reason: %s\n", st.Reason)
	}
	return nil
}

// stateLog is where state-change receipts (estop, grants) go: the receipt
// log of the claw home of g, signed with the key keys unlock.
func stateLog(g *globals, keys *keyOptions) runtime.StateLog {
	return runtime.StateLog{
		Signer: func() (*runtime.Signer, error) { return loadReceiptSigner(g, keys) },
		Dir:    func() (string, error) { return receiptDir(g) },
		Config: func() (string, string, error) { return configPaths(g) },
	}
}

// withReceiptLog opens the receipt log for a state-change receipt, lets
// fn append to it, and closes it.
func withReceiptLog(g *globals, keys *keyOptions, fn func(*runtime.ReceiptLog) error) error {
	return stateLog(g, keys).Write(fn)
}
