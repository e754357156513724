package main

import (
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/term"
)

// newTTYApprover is the terminal approver of a command whose standard
// output carries data (claw exec, claw tool run, claw sop): it asks on
// standard error and reads plain lines. nil when standard input is not a
// terminal: piped input can never approve.
func newTTYApprover(g *globals) runtime.Approver {
	if !term.IsTerminal(g.stdin) {
		return nil
	}
	return term.NewApprover(term.NewPromptInput(g.stdin, g.stderr), g.stderr)
}
