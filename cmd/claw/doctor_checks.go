package main

import (
	"context"

	"github.com/clawsec/claw/internal/runtime"
)

// doctorOffline is claw doctor --offline: skip the checks that reach the
// network.
var doctorOffline bool

// doctorChecks are claw doctor's checks, in the order it prints them.
var doctorChecks = []doctorCheck{
	{Name: "emergency stop", Run: checkEstop},
	{Name: "agent hooks", Run: checkAgentHooks},
	{Name: "mcp pins", Run: func(g *globals) doctorResult {
		home, _, err := configPaths(g)
		return runtime.CheckMCPPins(home, err)
	}},
	{Name: "passphrase", Run: func(g *globals) doctorResult { return runtime.CheckPassphrase(loadDoctorState(g)) }},
	{Name: "config", Run: checkConfig},
	{Name: "receipt key", Run: checkReceiptKey},
	{Name: "receipt log", Run: checkReceiptLog},
	{Name: "provider", Run: checkProvider},
	{Name: "provider reachable", Run: checkProviderReachable},
	{Name: "memory", Run: checkMemory},
	{Name: "workspace", Run: checkWorkspace},
	{Name: "tool programs", Run: checkToolPrograms},
	{Name: "service unit", Run: func(*globals) doctorResult { return runtime.CheckServiceUnit() }},
	{Name: "serve token", Run: func(g *globals) doctorResult { return runtime.CheckServeToken(loadDoctorState(g)) }},
}

func loadDoctorState(g *globals) runtime.DoctorState {
	home, path, err := configPaths(g)
	if err != nil {
		return runtime.DoctorState{Err: err}
	}
	return runtime.LoadDoctorState(home, path)
}

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

// checkWorkspace fails when actions could not use the workspace
// (runtime.CheckWorkspace).
func checkWorkspace(g *globals) doctorResult {
	return runtime.CheckWorkspace(context.Background(), loadDoctorState(g))
}

// checkToolPrograms fails when the run_as user could not start claw or its
// helper (runtime.CheckToolPrograms).
func checkToolPrograms(g *globals) doctorResult { return runtime.CheckToolPrograms(loadDoctorState(g)) }
