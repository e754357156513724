package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/service"
)

func init() {
	doctorChecks = append(doctorChecks,
		doctorCheck{Name: "service unit", Run: checkServiceUnit},
		doctorCheck{Name: "serve token", Run: checkServeToken},
	)
}

// serviceUnitDirs are where an installed claw.service is looked for.
var serviceUnitDirs = []string{service.DefaultUnitDir, "/usr/local/lib/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}

// checkServiceUnit finds an installed claw.service and scores its
// hardening with systemd-analyze when it is installed.
func checkServiceUnit(*globals) doctorResult {
	var path string
	var unit []byte
	for _, d := range serviceUnitDirs {
		p := filepath.Join(d, service.UnitName)
		if b, err := os.ReadFile(p); err == nil {
			path, unit = p, b
			break
		}
	}
	if path == "" {
		return doctorResult{Skipped: true, Detail: "claw.service is not installed (claw service install)"}
	}
	if strings.Contains(string(unit), "SystemCallFilter=") && !strings.Contains(string(unit), "landlock_restrict_self") {
		return doctorResult{Detail: path + ": its SystemCallFilter lacks the Landlock calls, so claw serve refuses every action",
			Fix: "claw service install --force"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	score, _, err := service.Analyze(ctx, path)
	switch {
	case errors.Is(err, service.ErrNoAnalyzer):
		return doctorResult{OK: true, Detail: path + " (systemd-analyze not installed: hardening not scored)"}
	case err != nil:
		return doctorResult{Detail: fmt.Sprintf("%s: %v", path, err), Fix: "systemd-analyze security --offline=yes " + path}
	case score > service.MaxExposure:
		return doctorResult{Detail: fmt.Sprintf("%s: exposure %.1f, above %.1f", path, score, service.MaxExposure),
			Fix: "claw service install --force (see systemd-analyze security --offline=yes " + path + ")"}
	}
	running := ""
	if !service.Running() {
		running = "; systemd is not running here"
	}
	return doctorResult{OK: true, Detail: fmt.Sprintf("%s: exposure %.1f (at most %.1f)%s", path, score, service.MaxExposure, running)}
}

// checkServeToken checks that the bearer token of claw serve is readable
// by its owner only.
func checkServeToken(g *globals) doctorResult {
	home, path, err := configPaths(g)
	if err != nil {
		return doctorResult{Skipped: true, Detail: err.Error()}
	}
	cfg, _, err := config.LoadOrDefault(path, home)
	if err != nil {
		return doctorResult{Skipped: true, Detail: "config does not load (see the config check)"}
	}
	tok := cfg.Serve.TokenFile
	if tok == "" {
		return doctorResult{Skipped: true, Detail: "no token file configured"}
	}
	fi, err := os.Lstat(tok)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return doctorResult{Skipped: true, Detail: tok + " does not exist yet"}
	case err != nil:
		return doctorResult{Detail: err.Error()}
	case !fi.Mode().IsRegular():
		return doctorResult{Detail: tok + " is not a regular file", Fix: "remove it and run claw init"}
	case fi.Mode().Perm()&0o077 != 0:
		return doctorResult{Detail: fmt.Sprintf("%s has mode %04o: others can read the serve token", tok, fi.Mode().Perm()),
			Fix: "chmod 600 " + tok}
	}
	return doctorResult{OK: true, Detail: fmt.Sprintf("%s (mode %04o)", tok, fi.Mode().Perm())}
}
