package broker

import "context"

type runKey struct{}

type runStep struct{ run, step string }

// WithRunStep returns ctx carrying the workflow run and step an action
// belongs to (a `claw sop` run and the id of its step). The broker
// records both in the receipts of every action taken with that context,
// the agent's tool calls of an agent step included.
func WithRunStep(ctx context.Context, run, step string) context.Context {
	return context.WithValue(ctx, runKey{}, runStep{run, step})
}

// RunStepFrom is the run and step WithRunStep put in ctx, or "", "".
func RunStepFrom(ctx context.Context) (run, step string) {
	rs, _ := ctx.Value(runKey{}).(runStep)
	return rs.run, rs.step
}
