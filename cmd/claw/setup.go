package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/runtime"
)

// env is what most commands need: the claw home, the effective config and
// the compiled gate.
type env struct {
	home    string
	cfg     *config.Config
	userDir string // the user's home directory
	// dryRunTimeout, when larger, replaces the gate timeout: a table of
	// cases on a loaded machine is not an agent waiting for an answer.
	dryRunTimeout time.Duration
}

// loadEnv resolves the claw home and loads the config. A missing config file
// means defaults (with a note on stderr); an invalid one is an error.
func loadEnv(g *globals) (*env, error) {
	home, _, err := configPaths(g)
	if err != nil {
		return nil, err
	}
	cfg, err := loadUserConfig(g)
	if err != nil {
		return nil, err
	}
	e := &env{home: home, cfg: cfg}
	e.userDir, _ = os.UserHomeDir()
	return e, nil
}

// policyFromConfig maps the config's security section to the gate's policy data.
var policyFromConfig = runtime.Policy

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newEngine compiles the built-in and user policies for cfg.
func newEngine(ctx context.Context, e *env, pol gate.Policy) (*gate.Engine, error) {
	timeout := e.cfg.Security.GateTimeout.Duration
	if e.dryRunTimeout > timeout {
		timeout = e.dryRunTimeout
	}
	eng, err := gate.New(ctx, gate.Options{
		Policy:        pol,
		Home:          e.userDir,
		ClawHome:      e.home,
		UserPolicyDir: filepath.Join(e.home, "policies"),
		Timeout:       timeout,
	})
	if err != nil {
		return nil, withCode(exitError, err, "check the policies in "+filepath.Join(e.home, "policies")+" with 'claw gate test --rego'")
	}
	return eng, nil
}

// canonicalDir returns dir absolute and with symlinks resolved (when it
// exists), so the gate and the sandbox see the same path.
func canonicalDir(dir string) (string, error) {
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
