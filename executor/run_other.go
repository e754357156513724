//go:build !linux

package executor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

type nsMode struct{}

// Check reports that nothing is supported off Linux.
func Check() Support {
	s := Support{Err: fmt.Sprintf("%v: %s is not Linux", ErrUnavailable, runtime.GOOS)}
	return s
}

// Run refuses off Linux: there is no sandbox to run in.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	return Result{}, fmt.Errorf("%w: %s is not Linux", ErrUnavailable, runtime.GOOS)
}

// RunAfter refuses off Linux, like Run, without calling ready.
func RunAfter(ctx context.Context, s Spec, ready func() error) (Result, error) {
	return Run(ctx, s)
}

// ErrNotFound is returned (wrapped) when the command does not exist.
var ErrNotFound = errors.New("command not found")

// SetupError is returned when the sandboxed child could not confine itself.
type SetupError struct{ Stage, Msg string }

func (e *SetupError) Error() string { return "sandbox setup failed at " + e.Stage + ": " + e.Msg }

// runStdio refuses off Linux: there is no sandbox to run in.
func runStdio(ctx context.Context, s Spec, sup Support, std stdio) (Result, error) {
	return Result{}, fmt.Errorf("%w: %s is not Linux", ErrUnavailable, runtime.GOOS)
}
