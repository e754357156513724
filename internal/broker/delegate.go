package broker

import (
	"context"
	"fmt"
	"slices"

	"github.com/clawsec/claw/gate"
)

// MaxDelegationDepth is how deep delegation nests: a sub-agent's own
// delegate call is denied (rule delegate.depth).
const MaxDelegationDepth = 1

// RuleDelegateDepth denies a delegate call beyond MaxDelegationDepth.
const RuleDelegateDepth = "delegate.depth"

// Delegation is what a delegate action hands its sub-agent: the action's
// id, and the autonomy and tools it may narrow to.
type Delegation struct {
	ParentAction string
	// Autonomy is the sub-agent's autonomy; it binds only where it is
	// narrower than the broker's (or an enclosing delegation's).
	Autonomy string
	// ToolsAllow, when not nil, lists the only tools the sub-agent may use,
	// on top of the channel's tools_allow.
	ToolsAllow []string
	depth      int
}

type delegationKey struct{}

// WithDelegation returns ctx for a sub-agent started by the action d
// names. Every action taken with it is receipted with the parent action,
// decided at the narrower autonomy and denied outside the narrower tools;
// nested in another delegation, it can only narrow that one's further.
func WithDelegation(ctx context.Context, d Delegation) context.Context {
	if outer, ok := DelegationFrom(ctx); ok {
		d.Autonomy = narrowerAutonomy(outer.Autonomy, d.Autonomy)
		d.ToolsAllow = narrowerTools(outer.ToolsAllow, d.ToolsAllow)
		d.depth = outer.depth
	}
	d.depth++
	return context.WithValue(ctx, delegationKey{}, d)
}

// Narrow returns d narrowed further by autonomy and tools (each empty or
// nil: no narrowing), as a delegation nested in it would be, at the same
// depth: an external agent's own config narrows its delegate call so.
func (d Delegation) Narrow(autonomy string, tools []string) Delegation {
	d.Autonomy = narrowerAutonomy(d.Autonomy, autonomy)
	d.ToolsAllow = narrowerTools(d.ToolsAllow, tools)
	return d
}

// DelegationFrom is the delegation WithDelegation put in ctx.
func DelegationFrom(ctx context.Context) (Delegation, bool) {
	d, ok := ctx.Value(delegationKey{}).(Delegation)
	return d, ok
}

// Depth is how many delegations deep the sub-agent is (1: the parent's
// own sub-agent).
func (d Delegation) Depth() int { return d.depth }

type actionKey struct{}

// ActionIDFrom is the id of the action an in-process tool runs for (a
// delegate call passes it on to its sub-agent), or "".
func ActionIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(actionKey{}).(string)
	return id
}

// autonomyRank orders the autonomy levels; anything unknown ranks as the
// narrowest.
func autonomyRank(a string) int {
	return max(slices.Index([]string{"readonly", "supervised", "full"}, a), 0)
}

// narrowerAutonomy is the narrower of a and b; an empty one does not
// bind, an unknown one is readonly.
func narrowerAutonomy(a, b string) string {
	if b != "" && autonomyRank(b) == 0 {
		b = "readonly"
	}
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case autonomyRank(b) < autonomyRank(a):
		return b
	}
	return a
}

// narrowerTools is the intersection of two allow lists (nil: everything).
func narrowerTools(a, b []string) []string {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := []string{}
	for _, t := range b {
		if slices.Contains(a, t) {
			out = append(out, t)
		}
	}
	return out
}

// delegationDenial turns d into a denial of a delegate call made too deep.
func delegationDenial(d gate.Decision, depth int) gate.Decision {
	d.Decision = gate.Deny
	d.Reasons = append(append([]gate.Reason(nil), d.Reasons...), gate.Reason{ID: RuleDelegateDepth, Severity: "high",
		Msg: fmt.Sprintf("a sub-agent at depth %d may not delegate (at most %d)", depth, MaxDelegationDepth)})
	return d
}

// Autonomy is the autonomy actions taken with ctx are decided at: the
// broker's, narrowed by the delegation in ctx.
func (b *Broker) Autonomy(ctx context.Context) string {
	if d, ok := DelegationFrom(ctx); ok {
		return narrowerAutonomy(b.cfg.Autonomy, d.Autonomy)
	}
	return b.cfg.Autonomy
}

// ToolsAllow is the tools actions taken with ctx may use (nil: every
// tool): the channel's tools_allow, narrowed by the delegation in ctx.
func (b *Broker) ToolsAllow(ctx context.Context) []string {
	if d, ok := DelegationFrom(ctx); ok {
		return narrowerTools(b.cfg.ToolsAllow, d.ToolsAllow)
	}
	return b.cfg.ToolsAllow
}
