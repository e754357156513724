package main

import "github.com/clawsec/claw/internal/runtime"

func init() {
	doctorChecks = append(doctorChecks,
		doctorCheck{Name: "service unit", Run: func(*globals) doctorResult { return runtime.CheckServiceUnit() }},
		doctorCheck{Name: "serve token", Run: func(g *globals) doctorResult { return runtime.CheckServeToken(loadDoctorState(g)) }},
	)
}
