package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/config"
)

// Exit codes are a published contract (README "Exit codes"). They are
// defined here and nowhere else.
const (
	ExitOK          = 0   // ok, allowed
	ExitError       = 1   // operational error
	ExitUsage       = 2   // bad usage or malformed input
	ExitDenied      = 3   // denied by policy
	ExitVerify      = 4   // verification failed (tamper-evident)
	ExitSandbox     = 5   // sandbox unavailable
	ExitNeedsHuman  = 6   // needs approval or passphrase, and nobody could be asked
	ExitSetupFailed = 126 // sandbox setup failed, nothing ran
	ExitNotFound    = 127 // command not found
	ExitInterrupted = 130 // interrupted
)

// Error carries an exit code and hints for the user to the one exit point
// of the command line. A nil Err with a code is a silent exit with that
// status (the command already said what it had to say).
type Error struct {
	Code  int
	Err   error
	Hints []string
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// WithCode wraps err so that claw exits with code, printing hints after it.
func WithCode(code int, err error, hints ...string) error {
	return &Error{Code: code, Err: err, Hints: hints}
}

// Usagef is a usage error (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// SilentExit ends the command with code and no further message.
func SilentExit(code int) error { return &Error{Code: code} }

// ExitCode maps an error to its exit code: an [Error]'s, 130 for a
// cancelled context, 1 for any other error.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitError
}

// Policy maps the config's [security] table to the gate's policy data.
// It is the only place that does: a new key of the table is added here.
func Policy(c *config.Config) gate.Policy {
	s := c.Security
	return gate.Policy{
		WorkspaceOnly:            s.WorkspaceOnly,
		ForbiddenPaths:           nonNil(s.ForbiddenPaths),
		ReadPaths:                nonNil(s.ReadPaths),
		ForbiddenCommands:        nonNil(s.ForbiddenCommands),
		AllowedCommands:          nonNil(s.AllowedCommands),
		AllowedDomains:           nonNil(s.AllowedDomains),
		AllowedRegistries:        nonNil(s.AllowedRegistries),
		AllowPrivateCIDRs:        nonNil(s.AllowPrivateCIDRs),
		WorkspaceExecAllow:       nonNil(s.WorkspaceExecAllow),
		PassphraseEnabled:        s.PassphraseHash != "",
		PassphraseFor:            nonNil(s.PassphraseFor),
		AllowPrivilegeEscalation: s.AllowPrivilegeEscalation,
	}
}

// nonNil is s, or an empty list for nil: the policy data has lists, never
// nulls.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Env is what most commands work with: the claw home, the effective
// config and the user's home directory.
type Env struct {
	Home    string // the claw home
	Config  *config.Config
	UserDir string // the user's home directory
	// DryRunTimeout, when larger, replaces the gate timeout: a table of
	// cases on a loaded machine is not an agent waiting for an answer.
	DryRunTimeout time.Duration
}

// NewEngine compiles the built-in and user policies for e with the policy
// data pol.
func NewEngine(ctx context.Context, e *Env, pol gate.Policy) (*gate.Engine, error) {
	timeout := e.Config.Security.GateTimeout.Duration
	if e.DryRunTimeout > timeout {
		timeout = e.DryRunTimeout
	}
	eng, err := gate.New(ctx, gate.Options{
		Policy:        pol,
		Home:          e.UserDir,
		ClawHome:      e.Home,
		UserPolicyDir: filepath.Join(e.Home, "policies"),
		Timeout:       timeout,
	})
	if err != nil {
		return nil, WithCode(ExitError, err, "check the policies in "+filepath.Join(e.Home, "policies")+" with 'claw gate test --rego'")
	}
	return eng, nil
}

// CanonicalDir returns dir absolute and with symlinks resolved (when it
// exists), so the gate and the sandbox see the same path.
func CanonicalDir(dir string) (string, error) {
	if strings.HasPrefix(dir, "~/") || dir == "~" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(h, strings.TrimPrefix(dir, "~"))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	}
	return abs, nil
}
