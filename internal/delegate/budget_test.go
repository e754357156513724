package delegate

import (
	"context"
	"errors"
	"testing"

	"github.com/clawsec/claw/agent/provider"
)

// tenTokens is a model whose every answer costs 10 tokens and asks for
// a tool call.
type tenTokens struct{ calls int }

func (*tenTokens) Name() string                        { return "ten" }
func (*tenTokens) Capabilities() provider.Capabilities { return provider.Capabilities{Tools: true} }
func (m *tenTokens) Chat(context.Context, provider.ChatRequest) (provider.ChatResponse, error) {
	m.calls++
	return provider.ChatResponse{ToolCalls: []provider.ToolCall{{ID: "1", Name: "time"}},
		Usage: &provider.Usage{InputTokens: 7, OutputTokens: 3}}, nil
}

// The call that goes over the budget is answered with ErrBudget, not
// its tool calls; later calls never reach the model.
func TestTokenBudget(t *testing.T) {
	m := &tenTokens{}
	b := &TokenBudget{Provider: m, Max: 25}
	for i, wantErr := range []bool{false, false, true, true} {
		resp, err := b.Chat(context.Background(), provider.ChatRequest{})
		if gotErr := errors.Is(err, ErrBudget); gotErr != wantErr {
			t.Fatalf("call %d: err %v, want budget error %v", i+1, err, wantErr)
		}
		if wantErr && len(resp.ToolCalls) > 0 {
			t.Fatalf("call %d over the budget still asks for tool calls", i+1)
		}
	}
	if m.calls != 3 || b.Used() != 30 {
		t.Errorf("the model was called %d times, %d tokens used; want 3 and 30", m.calls, b.Used())
	}
	exact := &TokenBudget{Provider: &tenTokens{}, Max: 10}
	if _, err := exact.Chat(context.Background(), provider.ChatRequest{}); err != nil {
		t.Errorf("a call that lands on the budget: %v", err)
	}
	if _, err := exact.Chat(context.Background(), provider.ChatRequest{}); !errors.Is(err, ErrBudget) {
		t.Errorf("a call after the budget is spent: %v", err)
	}
}
