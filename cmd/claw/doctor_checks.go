package main

import (
	"context"

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
