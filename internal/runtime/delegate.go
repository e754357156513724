package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/delegate"
	"github.com/clawsec/claw/internal/toolkind"
)

// The sub-agent's budget: one turn of at most delegateRounds rounds of
// tool calls and delegateCalls calls in all.
const (
	delegateRounds = 4
	delegateCalls  = 8
)

// delegateResult is what a delegate call gives back to the model.
type delegateResult struct {
	Autonomy  string             `json:"autonomy"`
	Provider  string             `json:"provider"`
	Reply     string             `json:"reply"`
	ToolCalls []agent.ToolRecord `json:"tool_calls"`
	// Stopped says why the sub-agent was stopped before its answer (its
	// token budget, [delegate] max_tokens).
	Stopped string `json:"stopped,omitempty"`
}

// delegateTool runs the delegate tool for rt: one turn of a sub-agent on
// the task, through rt's broker, with ctx narrowed to the autonomy and
// tools asked for (broker.WithDelegation), so each of its calls is
// decided at most as the parent's would be and receipted with the
// delegate action's id. The parent's estop cancels ctx, and so the turn.
func delegateTool(rt *Agent, c *broker.Config, log *slog.Logger) broker.ToolFunc {
	return func(ctx context.Context, args map[string]any) (json.RawMessage, error) {
		parent := broker.ActionIDFrom(ctx)
		if parent == "" || rt.Agent == nil {
			return nil, errors.New("delegate: no parent action")
		}
		str := func(k string) string { s, _ := args[k].(string); return strings.TrimSpace(s) }
		task, autonomy := str("task"), str("autonomy")
		if autonomy != "" && !slices.Contains(config.Autonomies, autonomy) {
			return nil, fmt.Errorf("unknown autonomy %q (one of %s)", autonomy, strings.Join(config.Autonomies, ", "))
		}
		d := broker.Delegation{ParentAction: parent, Autonomy: autonomy}
		tools := withoutTool(rt.Agent.Tools(), tool.YieldToUser.Name)
		if s := str("tools"); s != "" {
			d.ToolsAllow = splitList(s)
			tools = slices.DeleteFunc(tools, func(t tool.Spec) bool { return !slices.Contains(d.ToolsAllow, string(t.Name)) })
		}
		if name := str("agent"); name != "" {
			if str("provider") != "" {
				return nil, errors.New("give agent (an external agent) or provider (a claw sub-agent's model), not both")
			}
			return delegateExternal(ctx, rt, c, name, task, d)
		}
		ctx = broker.WithDelegation(ctx, d)
		if del, _ := broker.DelegationFrom(ctx); del.Depth() >= broker.MaxDelegationDepth {
			tools = withoutTool(tools, toolkind.Delegate)
		}
		p, model := rt.Provider, rt.model
		if name := str("provider"); name != "" {
			var err error
			if p, err = provider.Build(ProviderSpecs(rt.Env.Config), name, os.Getenv, log); err != nil {
				return nil, fmt.Errorf("provider %q: %w", name, err)
			}
			model = ""
		}
		if max := rt.Env.Config.Delegate.MaxTokens; max > 0 {
			p = &delegate.TokenBudget{Provider: p, Max: max}
		}
		eff := rt.Broker.Autonomy(ctx)
		ag, err := agent.New(agent.Config{
			Provider: p, Memory: rt.Memory, Invoker: rt.Broker.Agent(), Tools: tools,
			Channel: rt.Channel + ".delegate", Model: model,
			Policy:           PolicySummary(eff, rt.Work) + "\nYou are a sub-agent: do the task you are given and answer with the result.",
			MaxToolRounds:    delegateRounds,
			MaxResponseBytes: rt.Env.Config.Agent.MaxResponseBytes,
			Log:              log,
		})
		if err != nil {
			return nil, err
		}
		log.Info("delegate started", "event", "delegate_started", "parent_action", parent, "autonomy", eff, "provider", p.Name(), "tools", len(tools))
		res, err := ag.Turn(ctx, agent.TurnRequest{NewConversation: true, Message: task, MaxToolCalls: delegateCalls})
		out := delegateResult{Autonomy: eff, Provider: p.Name(), Reply: res.Reply, ToolCalls: res.ToolCalls}
		if errors.Is(err, delegate.ErrBudget) {
			out.Stopped, err = "the sub-agent was stopped: "+err.Error(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("sub-agent: %w", err)
		}
		return json.Marshal(out)
	}
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	out := []string{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// defaultDelegateTimeout bounds a whole delegate call, the sub-agent's
// model calls, tool calls and approvals included.
const defaultDelegateTimeout = 10 * time.Minute

// delegateTimeout is a delegate call's wall timeout: the --timeout given
// on the command line, else defaultDelegateTimeout.
func delegateTimeout(flag time.Duration) time.Duration {
	if flag > 0 {
		return flag
	}
	return defaultDelegateTimeout
}
