//go:build !linux

package child

import (
	"fmt"
	"os"
)

// Main refuses: the sandbox exists only on Linux.
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, "claw: sandbox: not supported on this operating system")
	return CodeSetup
}

// LandlockABI is 0 off Linux.
func LandlockABI() (abi, errata int) { return 0, 0 }

// Exit codes of the child when it could not run the command.
const (
	CodeSetup    = 126
	CodeNotFound = 127
)

// Relay refuses: the sandbox exists only on Linux.
func Relay(args []string) int { return Main(args) }
