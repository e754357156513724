package main

import (
	"context"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/runtime"
)

// Names in this package for what the runtime package now holds; each goes
// when the code that calls it has moved into the runtime too.
var (
	providerSpecs        = runtime.ProviderSpecs
	runAsIDs             = runtime.RunAsIDs
	handWorkspaceToRunAs = runtime.HandWorkspaceToRunAs
	unsearchableAbove    = runtime.UnsearchableAbove
	programsProblem      = runtime.ProgramsProblem
)

func workspaceIssue(ctx context.Context, e *env, ws string) (problem, fix string) {
	return runtime.WorkspaceIssue(ctx, e.rt(), ws)
}

func workspaceForbidden(ctx context.Context, e *env, ws string) (string, error) {
	return runtime.WorkspaceForbidden(ctx, e.rt(), ws)
}

func grantExpiry(e *env) grant.Expiry { return runtime.GrantExpiry(e.cfg) }

type (
	agentRuntime   = runtime.Agent
	runtimeOptions = runtime.AgentOptions
)

var (
	policySummary = runtime.PolicySummary
	readBounded   = runtime.ReadBounded
)

// newAgentRuntime is runtime.NewAgent with the config of g and the flags
// o.
func newAgentRuntime(ctx context.Context, g *globals, o *actionOptions, channel string, approver broker.Approver, opts ...func(*runtimeOptions)) (*agentRuntime, error) {
	return runtime.NewAgent(ctx, agentSetup(g, o), channel, approver, opts...)
}

// agentSetup is the setup of an agent runtime from g and the flags o.
func agentSetup(g *globals, o *actionOptions) runtime.Setup {
	var e *env
	s := brokerSetup(g, o, &e)
	s.LogTo, s.Version = g.stderr, version
	return s
}

func keyRedactor(e *env) func(string) string { return runtime.KeyRedactor(e.rt()) }
