package main

import (
	"context"
	"os"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/runtime"
)

// doctorOffline is claw doctor --offline: skip the checks that reach the
// network.
var doctorOffline bool

func init() {
	doctorChecks = append(doctorChecks,
		doctorCheck{Name: "config", Run: checkConfig},
		doctorCheck{Name: "receipt key", Run: checkReceiptKey},
		doctorCheck{Name: "receipt log", Run: checkReceiptLog},
		doctorCheck{Name: "provider", Run: checkProvider},
		doctorCheck{Name: "provider reachable", Run: checkProviderReachable},
		doctorCheck{Name: "memory", Run: checkMemory},
		doctorCheck{Name: "workspace", Run: checkWorkspace},
		doctorCheck{Name: "tool programs", Run: checkToolPrograms},
	)
}

// doctorState is what the checks share: the home, whether it exists, and
// the config (nil when it could not be loaded).
type doctorState = runtime.DoctorState

func loadDoctorState(g *globals) doctorState {
	home, path, err := configPaths(g)
	if err != nil {
		return doctorState{Err: err}
	}
	return runtime.LoadDoctorState(home, path)
}

var (
	skipped        = runtime.DoctorSkipped
	passed         = runtime.DoctorPassed
	failed         = runtime.DoctorFailed
	notInitialised = runtime.DoctorNotInitialised
)

func checkConfig(g *globals) doctorResult { return runtime.CheckConfig(loadDoctorState(g)) }

func checkReceiptKey(g *globals) doctorResult {
	dir, err := receiptKeyDir(g)
	return runtime.CheckReceiptKey(loadDoctorState(g), dir, err)
}

func checkReceiptLog(g *globals) doctorResult {
	dir, err := receiptKeyDir(g)
	return runtime.CheckReceiptLog(loadDoctorState(g), dir, err)
}

func checkProvider(g *globals) doctorResult {
	s := loadDoctorState(g)
	if s.Cfg == nil {
		return runtime.CheckProvider(s, nil)
	}
	return runtime.CheckProvider(s, providerSpecs(s.Cfg))
}

func checkProviderReachable(g *globals) doctorResult {
	return runtime.CheckProviderReachable(loadDoctorState(g), doctorOffline)
}

func checkMemory(g *globals) doctorResult { return runtime.CheckMemory(loadDoctorState(g)) }

// checkWorkspace fails when actions could not use the workspace: missing,
// inside a forbidden path, or out of the run_as user's reach.
func checkWorkspace(g *globals) doctorResult {
	s := loadDoctorState(g)
	if !s.HomeExists {
		return notInitialised(s)
	}
	if s.Cfg == nil {
		return skipped("the config could not be loaded")
	}
	e := &env{home: s.Home, cfg: s.Cfg}
	e.userDir, _ = os.UserHomeDir()
	if problem, fix := workspaceIssue(context.Background(), e, s.Cfg.WorkspaceDir); problem != "" {
		return failed(problem, fix)
	}
	detail := s.Cfg.WorkspaceDir
	if _, _, ok, _ := runAsIDs(s.Cfg.Sandbox.RunAs); ok {
		detail += " (actions run as " + s.Cfg.Sandbox.RunAs + ")"
	}
	return passed(detail)
}

// checkToolPrograms fails when claw runs as root and the run_as user its
// tools switch to could not start claw or its helper.
func checkToolPrograms(g *globals) doctorResult {
	s := loadDoctorState(g)
	if s.Cfg == nil {
		return skipped("the config could not be loaded")
	}
	runAs := s.Cfg.Sandbox.RunAs
	if _, _, ok, _ := runAsIDs(runAs); !ok {
		return skipped("tools keep claw's own uid")
	}
	if problem, fix := programsProblem(runAs, executor.Check().Helper); problem != "" {
		return failed(problem, fix)
	}
	return passed("claw and its helper can be started by " + runAs)
}
