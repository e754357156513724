package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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

// toolThenText is a provider that answers a request whose last message is
// the person's with two tool calls (time, shell), and anything else with
// text.
type toolThenText struct{}

func (toolThenText) Name() string                        { return "tools" }
func (toolThenText) Capabilities() provider.Capabilities { return provider.Capabilities{Tools: true} }
func (toolThenText) Chat(_ context.Context, req provider.ChatRequest) (provider.ChatResponse, error) {
	if req.Messages[len(req.Messages)-1].Role != provider.RoleUser {
		return provider.ChatResponse{Text: "the time is 03:00; the shell was denied", FinishReason: provider.FinishStop}, nil
	}
	return provider.ChatResponse{FinishReason: provider.FinishToolCalls, ToolCalls: []provider.ToolCall{
		{ID: "call_time", Name: "time", Arguments: json.RawMessage(`{}`)},
		{ID: "call_shell", Name: "shell", Arguments: json.RawMessage(`{"command":"rm -rf build"}`)},
	}}, nil
}

// shellDenied runs time and denies shell, as the broker would.
type shellDenied struct{}

func (shellDenied) Invoke(_ context.Context, _ string, c tool.Call) tool.Result {
	if c.Name == "shell" {
		return tool.Result{IsError: true, Status: "denied", ActionID: "act-shell", Content: "error: denied by policy: cmd.rm.workspace"}
	}
	return tool.Result{Status: "ok", ActionID: "act-time", Content: `{"now":"03:00"}`}
}

func toolSpecs(t *testing.T, names ...string) []tool.Spec {
	t.Helper()
	specs, err := tool.Select(names)
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// TestTurnsPersistedAndResumed: the messages of a turn share its turn id,
// a denied result is stored as an error with its status, and after a
// restart the Anthropic request built from the resumed history marks the
// denied result is_error while the successful one is not.
func TestTurnsPersistedAndResumed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.sqlite")
	st, err := memory.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tools := toolSpecs(t, "time", "shell")
	a, err := New(Config{Provider: toolThenText{}, Memory: st, Invoker: shellDenied{}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := a.Turn(ctx, TurnRequest{Message: "what time is it, and clean the build"})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := a.Turn(ctx, TurnRequest{Message: "thanks"})
	if err != nil {
		t.Fatal(err)
	}
	if !r1.Started || r2.Started || r2.Conversation != r1.Conversation {
		t.Errorf("turn 1 started %v, turn 2 started %v in %s (turn 1: %s): want only the first to start the conversation", r1.Started, r2.Started, r2.Conversation, r1.Conversation)
	}
	_, msgs, err := st.Get(ctx, r1.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	// turn 1: user, assistant with calls, two results, answer; turn 2:
	// user, assistant with calls, two results, answer.
	if len(msgs) != 10 {
		t.Fatalf("%d messages stored, want 10", len(msgs))
	}
	first, second := msgs[0].TurnID, msgs[5].TurnID
	if first == "" || second == "" || first == second {
		t.Fatalf("turn ids %q and %q: want two different ones", first, second)
	}
	for i, m := range msgs {
		want := first
		if i >= 5 {
			want = second
		}
		if m.TurnID != want {
			t.Errorf("message %d (%s) in turn %q, want %q", i, m.Role, m.TurnID, want)
		}
	}
	timeRes, shellRes := msgs[2], msgs[3]
	if timeRes.IsError || timeRes.Metadata["status"] != "ok" || timeRes.Metadata["action_id"] != "act-time" {
		t.Errorf("time result stored as %+v", timeRes)
	}
	if !shellRes.IsError || shellRes.Metadata["status"] != "denied" || shellRes.Metadata["action_id"] != "act-shell" {
		t.Errorf("denied shell result stored as %+v", shellRes)
	}
	if msgs[4].Metadata["finish_reason"] != "stop" {
		t.Errorf("answer stored as %+v", msgs[4])
	}

	// A restarted agent, on Anthropic, resumes the conversation.
	var mu sync.Mutex
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body = b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"m","type":"message","model":"c","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}`)
	}))
	defer srv.Close()
	an, err := provider.NewAnthropic(provider.HTTPConfig{Name: "an", BaseURL: srv.URL, APIKey: "test-key", Model: "c"})
	if err != nil {
		t.Fatal(err)
	}
	st, err = memory.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err = New(Config{Provider: an, Memory: st, Invoker: shellDenied{}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Turn(ctx, TurnRequest{Message: "and now?"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   *bool  `json:"is_error"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v\n%s", err, body)
	}
	results := map[string]*bool{}
	n := 0
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.Type == "tool_result" {
				results[c.ToolUseID] = c.IsError
				n++
			}
		}
	}
	if n != 4 {
		t.Fatalf("%d tool results sent, want 4:\n%s", n, body)
	}
	if e := results["call_shell"]; e == nil || !*e {
		t.Errorf("the denied result was sent without is_error:true:\n%s", body)
	}
	if e := results["call_time"]; e != nil {
		t.Errorf("the successful result was sent with is_error:%v", *e)
	}
	if !strings.Contains(string(body), `"is_error":true`) {
		t.Errorf("no is_error in the request:\n%s", body)
	}
}

// TestRouterRoutesCompaction: with a router whose purpose=summary route
// goes to one provider and everything else to another, compaction goes to
// the first and the conversation to the second.
func TestRouterRoutesCompaction(t *testing.T) {
	chat, summary := &recorder{}, &recorder{}
	r, err := provider.NewRouter(nil, chat, map[string]provider.Provider{provider.PurposeSummary: summary})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newTestAgent(t, r, 1000)
	ctx := context.Background()
	for i := range 8 {
		if _, err := a.Turn(ctx, TurnRequest{Message: strings.Repeat("word ", 60) + string(rune('A'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	if len(summary.reqs) == 0 {
		t.Fatal("no compaction reached the summary provider")
	}
	for _, req := range summary.reqs {
		if req.Metadata[provider.PurposeKey] != provider.PurposeSummary {
			t.Errorf("the summary provider got a %q request", req.Metadata[provider.PurposeKey])
		}
	}
	if len(chat.reqs) != 8 {
		t.Errorf("the chat provider got %d requests, want 8 (one per turn)", len(chat.reqs))
	}
	for _, req := range chat.reqs {
		if req.Metadata[provider.PurposeKey] != provider.PurposeChat || req.Metadata[provider.ChannelKey] != "cli" {
			t.Errorf("the chat provider got metadata %v", req.Metadata)
		}
	}
}

// TestReplyMetadataBounded: a provider's finish reason of any length is
// clipped, so the memory never refuses a turn (and loses it) over it.
func TestReplyMetadataBounded(t *testing.T) {
	meta := replyMetadata(provider.ChatResponse{FinishReason: provider.FinishReason(strings.Repeat("x", memory.MaxMetadataBytes*2))})
	if n := len(meta["finish_reason"]); n == 0 || n > maxMetaValue {
		t.Fatalf("finish_reason kept %d bytes, want 1..%d", n, maxMetaValue)
	}
}
