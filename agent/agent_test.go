package agent

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/agent/tool"
)

// recorder is a provider that records what it is sent and answers with
// fixed text; summary requests get "SUMMARY".
type recorder struct {
	mu   sync.Mutex
	reqs []provider.ChatRequest
	err  error
}

func (r *recorder) Name() string                        { return "recorder" }
func (r *recorder) Capabilities() provider.Capabilities { return provider.Capabilities{Tools: true} }
func (r *recorder) Chat(_ context.Context, req provider.ChatRequest) (provider.ChatResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	if r.err != nil {
		return provider.ChatResponse{}, r.err
	}
	if req.Metadata["purpose"] == "summary" {
		return provider.ChatResponse{Text: "SUMMARY of " + req.Messages[0].Content[:20]}, nil
	}
	return provider.ChatResponse{Text: "ok"}, nil
}

type noTools struct{}

func (noTools) Invoke(context.Context, string, tool.Call) tool.Result {
	return tool.Result{IsError: true, Content: "error: no tools here", Status: "denied"}
}

func newTestAgent(t *testing.T, p provider.Provider, budget int) (*Agent, *memory.Store) {
	t.Helper()
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := New(Config{Provider: p, Memory: st, Invoker: noTools{}, Channel: "cli", HistoryBudget: budget, Soul: "I am the test soul."})
	if err != nil {
		t.Fatal(err)
	}
	return a, st
}

func TestCompaction(t *testing.T) {
	p := &recorder{}
	a, st := newTestAgent(t, p, 1000)
	ctx := context.Background()
	var conv string
	for i := 0; i < 8; i++ {
		res, err := a.Turn(ctx, TurnRequest{Message: strings.Repeat("word ", 60) + string(rune('A'+i))})
		if err != nil {
			t.Fatal(err)
		}
		conv = res.Conversation
	}
	c, msgs, err := st.Get(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Summary == "" || c.SummaryThrough == 0 {
		t.Fatalf("no summary after %d messages: %+v", len(msgs), c)
	}
	if len(msgs) != 16 {
		t.Errorf("the full log must stay: %d messages, want 16", len(msgs))
	}
	last := p.reqs[len(p.reqs)-1]
	if !strings.Contains(last.System, "SUMMARY of") || !strings.Contains(last.System, "I am the test soul.") {
		t.Errorf("system prompt lacks the summary or soul:\n%s", last.System)
	}
	size := 0
	for _, m := range last.Messages {
		size += len(m.Content)
	}
	if size > 1000+400 {
		t.Errorf("history sent is %d bytes, over the budget", size)
	}
}

func TestResumeAndNewConversation(t *testing.T) {
	a, _ := newTestAgent(t, &recorder{}, 0)
	ctx := context.Background()
	r1, err := a.Turn(ctx, TurnRequest{Message: "one"})
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := a.Turn(ctx, TurnRequest{Message: "two"})
	if r2.Conversation != r1.Conversation {
		t.Error("the channel's latest conversation was not resumed")
	}
	r3, _ := a.Turn(ctx, TurnRequest{Message: "three", NewConversation: true})
	if r3.Conversation == r1.Conversation {
		t.Error("NewConversation did not start one")
	}
	if _, err := a.Turn(ctx, TurnRequest{Message: "x", Conversation: "ffffffffffff"}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown conversation: err = %v", err)
	}
}

func TestTurnErrors(t *testing.T) {
	p := &recorder{err: errors.New("boom")}
	a, st := newTestAgent(t, p, 0)
	ctx := context.Background()
	if _, err := a.Turn(ctx, TurnRequest{Message: "  "}); !errors.Is(err, ErrEmptyMessage) {
		t.Errorf("empty: %v", err)
	}
	if _, err := a.Turn(ctx, TurnRequest{Message: strings.Repeat("x", MaxMessageBytes+1)}); err == nil {
		t.Error("oversized message accepted")
	}
	res, err := a.Turn(ctx, TurnRequest{Message: "hello"})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("provider error lost: %v", err)
	}
	// the person's message is kept even though the model failed
	_, msgs, _ := st.Get(ctx, res.Conversation)
	if len(msgs) != 1 || msgs[0].Content != "hello" {
		t.Errorf("message not kept: %+v", msgs)
	}
}

func TestResponseCap(t *testing.T) {
	if got := clipText(strings.Repeat("é", 100), 50); len(got) > 50 || !strings.HasSuffix(got, "[claw: reply truncated]") {
		t.Errorf("clipText = %q", got)
	}
}
