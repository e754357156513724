package main

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes are a published contract (README "Exit codes"). They are defined
// here and nowhere else.
const (
	exitOK          = 0   // ok, allowed
	exitError       = 1   // operational error
	exitUsage       = 2   // bad usage or malformed input
	exitDenied      = 3   // denied by policy
	exitVerify      = 4   // verification failed (tamper-evident)
	exitSandbox     = 5   // sandbox unavailable
	exitNeedsHuman  = 6   // needs approval or passphrase, and nobody could be asked
	exitSetupFailed = 126 // sandbox setup failed, nothing ran
	exitNotFound    = 127 // command not found
	exitInterrupted = 130 // interrupted
)

// exitError carries an exit code and optional hints to the one exit point in
// run. A nil err with a code is a silent exit with that status (the command
// already said what it had to say).
type codeError struct {
	code  int
	err   error
	hints []string
}

func (e *codeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *codeError) Unwrap() error { return e.err }

// withCode wraps err so that run exits with code.
func withCode(code int, err error, hints ...string) error {
	return &codeError{code: code, err: err, hints: hints}
}

// usageErrorf is a usage error (exit 2) with optional hints.
func usageErrorf(format string, args ...any) error {
	return &codeError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// silentExit ends the command with code and no further message.
func silentExit(code int) error { return &codeError{code: code} }

// exitCodeOf maps an error to its exit code.
func exitCodeOf(err error) int {
	if err == nil {
		return exitOK
	}
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	return exitError
}
