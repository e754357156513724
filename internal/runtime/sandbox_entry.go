package runtime

import (
	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/delegate"
)

// Reenter runs the sandboxed child or an in-sandbox tool when args (the
// command line without the program name) start with one of their hidden
// entries: claw re-executes itself for them when no claw-sandbox helper is
// installed next to it (and always for the http tool, which the small
// helper does not carry), and an external agent's hook relays through
// one. ok is false for any other command line. It also
// declares that claw can be re-executed so, and must run before any
// action.
func Reenter(args []string) (code int, ok bool) {
	executor.AllowSelfExec()
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case executor.ChildEntry:
		return executor.ChildMain(args[1:]), true
	case executor.ToolEntry:
		return executor.ToolMain(args[1:]), true
	case delegate.HookEntry:
		return delegate.HookMain(args[1:]), true
	}
	return 0, false
}

// SandboxUsable reports whether the kernel offers what the executor needs.
func SandboxUsable() bool { return executor.Check().Require(0) == nil }
