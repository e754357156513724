package main

import (
	"context"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/runtime"
)

// Names in this package for what the runtime package now holds; each goes
// when the code that calls it has moved into the runtime too.
var providerSpecs = runtime.ProviderSpecs

// newAgentRuntime is runtime.NewAgent with the config of g and the flags
// o.
func newAgentRuntime(ctx context.Context, g *globals, o *actionOptions, channel string, approver broker.Approver, opts ...func(*runtime.AgentOptions)) (*runtime.Agent, error) {
	return runtime.NewAgent(ctx, agentSetup(g, o), channel, approver, opts...)
}

// agentSetup is the setup of an agent runtime from g and the flags o.
func agentSetup(g *globals, o *actionOptions) runtime.Setup {
	var e *env
	s := brokerSetup(g, o, &e)
	s.LogTo, s.Version = g.stderr, version
	return s
}
