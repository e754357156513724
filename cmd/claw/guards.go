package main

import (
	"path/filepath"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/term"
)

// guardConfig wires the human-facing guards of a broker from the config:
// the approval timeout, the passphrase gate (hash, lockout, state file)
// and, when standard input is a terminal, the terminal passphrase asker.
func guardConfig(g *globals, e *env, cfg *broker.Config) {
	sec := e.cfg.Security
	cfg.ApprovalTimeout = sec.ApprovalTimeout.Duration
	cfg.PassphraseHash = sec.PassphraseHash
	cfg.MaxFailures = sec.PassphraseMaxFailures
	cfg.Lockout = sec.PassphraseLockout.Duration
	cfg.StateFile = filepath.Join(e.home, "passphrase.state")
	if a := term.NewPassphrase(g.stdin, g.stderr); a != nil {
		cfg.Passphrase = a
	}
}

// newTTYApprover is the terminal approver of a command whose standard
// output carries data (claw exec, claw tool run, claw sop): it asks on
// standard error and reads plain lines. nil when standard input is not a
// terminal: piped input can never approve.
func newTTYApprover(g *globals) broker.Approver {
	if !term.IsTerminal(g.stdin) {
		return nil
	}
	return term.NewApprover(term.NewPromptInput(g.stdin, g.stderr), g.stderr)
}
