// Command claw-sandbox is the small helper claw starts for every sandboxed
// action: it confines itself (namespaces' mounts, rlimits, credentials,
// Landlock, a seccomp program compiled by claw) and executes the action.
// It is built without cgo and installed next to claw, which finds it
// there; it is not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	"github.com/clawsec/claw/executor/internal/child"
)

func main() {
	if len(os.Args) >= 2 {
		switch os.Args[1] {
		case child.EntrySandbox:
			os.Exit(child.Main(os.Args[2:]))
		case child.EntryRelay:
			os.Exit(child.Relay(os.Args[2:]))
		case child.EntryTool:
			os.Exit(child.ToolMain(os.Args[2:]))
		}
	}
	fmt.Fprintln(os.Stderr, "claw-sandbox: internal helper of claw; run 'claw sandbox run' instead")
	os.Exit(2)
}
