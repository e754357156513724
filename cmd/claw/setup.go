package main

import (
	"os"
	"time"

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

// runtimeEnv is loadEnv(g) as the runtime package takes it.
func (g *globals) runtimeEnv() (*runtime.Env, error) {
	e, err := loadEnv(g)
	if err != nil {
		return nil, err
	}
	return e.rt(), nil
}

// rt is e as the runtime package takes it.
func (e *env) rt() *runtime.Env {
	return &runtime.Env{Home: e.home, Config: e.cfg, UserDir: e.userDir, DryRunTimeout: e.dryRunTimeout}
}

// checkWorkspaceOwner warns when sandboxed actions, running as the run_as
// user, will not be able to use the workspace.
func checkWorkspaceOwner(g *globals, ws, runAs string) {
	if problem, fix := runtime.WorkspaceProblem(ws, runAs); problem != "" {
		warnFix(g.stderr, problem, fix)
	}
}
