package main

import (
	"context"
	"time"

	"github.com/clawsec/claw/internal/term"

	"github.com/clawsec/claw/internal/runtime"
)

// actionOptions are the flags of commands that run actions through the
// broker (claw exec, claw tool run).
type actionOptions struct {
	autonomy  string
	workspace string
	timeout   time.Duration
	yes       bool // never: approvals come from a human, see approveOnTTY
	keys      keyOptions
}

func (o *actionOptions) addFlags(fs interface {
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.StringVar(&o.autonomy, "autonomy", "", "autonomy level: readonly, supervised or full (default from config)")
	fs.StringVar(&o.workspace, "workspace", "", "workspace directory (default from config)")
	fs.DurationVar(&o.timeout, "timeout", 0, "wall timeout of the action (default from config)")
}

// openBroker returns a broker for one-shot CLI actions (runtime.OpenBroker)
// with the config of g and the flags o. The default approver asks on the
// terminal when standard input is one, and so does the passphrase gate.
func openBroker(ctx context.Context, g *globals, o *actionOptions, configure ...func(*runtime.BrokerConfig, *env)) (b *runtime.Broker, close func(), err error) {
	var e *env
	s := ttySetup(g, o, &e)
	fs := make([]func(*runtime.BrokerConfig, *runtime.Env), 0, len(configure))
	for _, f := range configure {
		fs = append(fs, func(c *runtime.BrokerConfig, _ *runtime.Env) { f(c, e) })
	}
	return runtime.OpenBroker(ctx, s, fs...)
}

// ttySetup is brokerSetup with the terminal's approver and passphrase
// prompt, when standard input is a terminal.
func ttySetup(g *globals, o *actionOptions, e **env) runtime.Setup {
	s := brokerSetup(g, o, e)
	if a := newTTYApprover(g); a != nil {
		s.Approver = a
	}
	if a := term.NewPassphrase(g.stdin, g.stderr); a != nil {
		s.Passphrase = a
	}
	return s
}

// brokerSetup is what runtime.OpenBroker needs from the command line; *e
// is set to the env it loads.
func brokerSetup(g *globals, o *actionOptions, e **env) runtime.Setup {
	return runtime.Setup{
		Actions: runtime.Actions{Autonomy: o.autonomy, Workspace: o.workspace, Timeout: o.timeout},
		Env: func() (*runtime.Env, error) {
			var err error
			if *e, err = loadEnv(g); err != nil {
				return nil, err
			}
			return (*e).rt(), nil
		},
		Signer:     signerOf(g, &o.keys),
		ReceiptDir: func() (string, error) { return receiptDir(g) },
		Warn:       func(problem, fix string) { warnFix(g.stderr, problem, fix) },
	}
}

// agentSetup is the setup of an agent runtime from g and the flags o.
func agentSetup(g *globals, o *actionOptions) runtime.Setup {
	var e *env
	s := brokerSetup(g, o, &e)
	s.LogTo, s.Version = g.stderr, version
	return s
}

// outcomeExit maps a broker outcome to claw's exit codes. Output of a
// command that ran is written first.
func outcomeExit(g *globals, out *runtime.Outcome, err error, asJSON bool) error {
	if out == nil {
		return err
	}
	if err := runtime.OutcomeFailed(out); err != nil {
		return err
	}
	return reportRun(g, *out.Result, out.Err, asJSON)
}
