package main

import (
	"github.com/clawsec/claw/internal/runtime"
)

// The exit codes are a published contract, defined once in the runtime
// package; these are their names in this package.
const (
	exitOK          = runtime.ExitOK
	exitError       = runtime.ExitError
	exitUsage       = runtime.ExitUsage
	exitDenied      = runtime.ExitDenied
	exitVerify      = runtime.ExitVerify
	exitSandbox     = runtime.ExitSandbox
	exitNeedsHuman  = runtime.ExitNeedsHuman
	exitSetupFailed = runtime.ExitSetupFailed
	exitNotFound    = runtime.ExitNotFound
	exitInterrupted = runtime.ExitInterrupted
)

// codeError carries an exit code and hints to the one exit point in run.
type codeError = runtime.Error

var (
	withCode    = runtime.WithCode
	usageErrorf = runtime.Usagef
	silentExit  = runtime.SilentExit
	exitCodeOf  = runtime.ExitCode
)
