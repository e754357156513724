package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/agent/tool"
)

// script is a provider that gives its replies in order, then "done", and
// records every request.
type script struct {
	mu      sync.Mutex
	replies []provider.ChatResponse
	reqs    []provider.ChatRequest
}

func (s *script) Name() string                        { return "script" }
func (s *script) Capabilities() provider.Capabilities { return provider.Capabilities{Tools: true} }
func (s *script) Chat(_ context.Context, req provider.ChatRequest) (provider.ChatResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Messages = append([]provider.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, req)
	if len(s.replies) == 0 {
		return provider.ChatResponse{Text: "done", FinishReason: provider.FinishStop}, nil
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, nil
}

func (s *script) last() provider.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// calls is a reply of tool calls.
func calls(cs ...provider.ToolCall) provider.ChatResponse {
	return provider.ChatResponse{ToolCalls: cs, FinishReason: provider.FinishToolCalls}
}

func call(id, name string) provider.ToolCall {
	return provider.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}
}

// invoker runs every call it is given, recording it. With block set, the
// first call waits until its context is cancelled (closing entered first)
// and fails, as the broker does for a cancelled call.
type invoker struct {
	mu      sync.Mutex
	block   bool
	entered chan struct{}
	calls   []tool.Call
}

func (v *invoker) Invoke(ctx context.Context, _ string, c tool.Call) tool.Result {
	v.mu.Lock()
	v.calls = append(v.calls, c)
	first := len(v.calls) == 1
	v.mu.Unlock()
	if v.block && first {
		close(v.entered)
		<-ctx.Done()
		return tool.Result{IsError: true, Status: "killed", ActionID: "act-1", Content: "error: cancelled"}
	}
	return tool.Result{Status: "ok", ActionID: "act-" + c.ID, Content: "ok"}
}

func (v *invoker) called() []tool.Call {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]tool.Call(nil), v.calls...)
}

// newCallAgent is an agent with the tools time and shell over a fresh
// memory, logging JSON to the returned buffer.
func newCallAgent(t *testing.T, p provider.Provider, inv Invoker) (*Agent, *memory.Store, *syncBuffer) {
	t.Helper()
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs := &syncBuffer{}
	a, err := New(Config{Provider: p, Memory: st, Invoker: inv, Tools: toolSpecs(t, "time", "shell"),
		Log: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return a, st, logs
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// checkAnswered fails unless every tool call in msgs is followed, in the
// order of the calls, by its one result, no result stands anywhere else,
// and no call id is used twice: what OpenAI and Anthropic require.
func checkAnswered(t *testing.T, msgs []provider.Message) {
	t.Helper()
	ids := map[string]bool{}
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == provider.RoleTool {
			t.Fatalf("message %d: a result for %q answers no call before it", i, m.ToolCallID)
		}
		for k, c := range m.ToolCalls {
			if ids[c.ID] {
				t.Fatalf("message %d: call id %q used twice", i, c.ID)
			}
			ids[c.ID] = true
			j := i + 1 + k
			if j >= len(msgs) || msgs[j].Role != provider.RoleTool || msgs[j].ToolCallID != c.ID {
				t.Fatalf("message %d: call %d (%q) is not answered by message %d", i, k, c.ID, j)
			}
		}
		i += len(m.ToolCalls)
	}
}

// TestInterruptedTurnAnswersEveryCall: a turn cancelled during the first
// of two calls saves and returns a "not run" error for the second, and the
// next turn sends the model a result for every call, in order.
func TestInterruptedTurnAnswersEveryCall(t *testing.T) {
	p := &script{replies: []provider.ChatResponse{calls(call("call_a", "time"), call("call_b", "shell"))}}
	inv := &invoker{block: true, entered: make(chan struct{})}
	a, st, _ := newCallAgent(t, p, inv)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-inv.entered
		cancel()
	}()
	res, err := a.Turn(ctx, TurnRequest{Message: "what time is it, then clean up"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(inv.called()); n != 1 {
		t.Errorf("%d calls reached the invoker, want 1", n)
	}
	if len(res.ToolCalls) != 2 {
		t.Fatalf("%d tool records, want 2: %+v", len(res.ToolCalls), res.ToolCalls)
	}
	if r := res.ToolCalls[1]; r.ID != "call_b" || r.Status != StatusNotRun || r.Error != "error: not run: the turn was interrupted" {
		t.Errorf("the call not run is recorded as %+v", r)
	}
	_, msgs, err := st.Get(context.Background(), res.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4 {
		t.Fatalf("%d messages saved, want 4 (message, calls, two results): %+v", len(msgs), msgs)
	}
	if m := msgs[3]; m.ToolCallID != "call_b" || !m.IsError || !strings.Contains(m.Content, "not run: the turn was interrupted") {
		t.Errorf("the result of the call not run is saved as %+v", m)
	}

	if _, err := a.Turn(context.Background(), TurnRequest{Message: "go on"}); err != nil {
		t.Fatal(err)
	}
	req := p.last()
	checkAnswered(t, req.Messages)
	var got []string
	for _, m := range req.Messages {
		if m.Role == provider.RoleTool {
			got = append(got, m.ToolCallID)
		}
	}
	if strings.Join(got, " ") != "call_a call_b" {
		t.Errorf("results sent for %v, want [call_a call_b]", got)
	}
}

// TestHistoryAnswersEveryCall: a call saved with no result (by a crash,
// or an older claw) reaches the model with a "not run" error in its
// place, results are sent in the order of the calls, and a result that
// answers no call is left out; the memory is unchanged.
func TestHistoryAnswersEveryCall(t *testing.T) {
	p := &script{}
	a, st, logs := newCallAgent(t, p, &invoker{})
	ctx := context.Background()
	conv, err := st.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, conv.ID,
		memory.Message{Role: memory.RoleUser, Content: "three things"},
		memory.Message{Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{
			{ID: "x", Name: "time", Arguments: json.RawMessage(`{}`)},
			{ID: "y", Name: "time", Arguments: json.RawMessage(`{}`)},
			{ID: "z", Name: "time", Arguments: json.RawMessage(`{}`)},
		}},
		memory.Message{Role: memory.RoleTool, ToolCallID: "z", ToolName: "time", Content: "03:00"},
		memory.Message{Role: memory.RoleTool, ToolCallID: "stray", ToolName: "time", Content: "?"},
	); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Turn(ctx, TurnRequest{Conversation: conv.ID, Message: "well?"}); err != nil {
		t.Fatal(err)
	}
	req := p.last()
	checkAnswered(t, req.Messages)
	var got []string
	for _, m := range req.Messages {
		if m.Role == provider.RoleTool {
			got = append(got, m.ToolCallID+"="+m.Content)
		}
	}
	want := "x=error: not run: the turn was interrupted y=error: not run: the turn was interrupted z=03:00"
	if strings.Join(got, " ") != want {
		t.Errorf("results sent:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
	if !strings.Contains(logs.String(), `"event":"history_repaired"`) {
		t.Errorf("the repair is not logged:\n%s", logs)
	}
	_, msgs, _ := st.Get(ctx, conv.ID)
	if len(msgs) != 6 { // the four above, the message and the answer
		t.Errorf("%d messages in memory, want 6", len(msgs))
	}
}

func TestAnswerEveryCall(t *testing.T) {
	asst := func(ids ...string) provider.Message {
		m := provider.Message{Role: provider.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: id, Name: "time"})
		}
		return m
	}
	res := func(id string) provider.Message {
		return provider.Message{Role: provider.RoleTool, ToolCallID: id, Content: "r" + id}
	}
	user := provider.Message{Role: provider.RoleUser, Content: "u"}
	tests := []struct {
		name         string
		in           []provider.Message
		want         string // each message as role[:id=content]
		added, dropp int
	}{
		{name: "consistent", in: []provider.Message{user, asst("a", "b"), res("a"), res("b"), user},
			want: "user assistant tool:a=ra tool:b=rb user"},
		{name: "missing last", in: []provider.Message{user, asst("a", "b"), res("a"), user},
			want: "user assistant tool:a=ra tool:b=error: not run: the turn was interrupted user", added: 1},
		{name: "none answered at the end", in: []provider.Message{user, asst("a")},
			want: "user assistant tool:a=error: not run: the turn was interrupted", added: 1},
		{name: "out of order", in: []provider.Message{asst("a", "b"), res("b"), res("a")},
			want: "assistant tool:a=ra tool:b=rb"},
		{name: "stray and duplicate", in: []provider.Message{res("s"), user, asst("a"), res("a"), res("a"), res("q"), user, res("a")},
			want: "user assistant tool:a=ra user", dropp: 4},
		{name: "no calls", in: []provider.Message{user, {Role: provider.RoleAssistant, Content: "hi"}},
			want: "user assistant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, added, dropped := answerEveryCall(tt.in)
			var got []string
			for _, m := range out {
				s := string(m.Role)
				if m.Role == provider.RoleTool {
					s += ":" + m.ToolCallID + "=" + m.Content
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != tt.want || added != tt.added || dropped != tt.dropp {
				t.Errorf("got %q, %d added, %d left out\nwant %q, %d, %d", strings.Join(got, " "), added, dropped, tt.want, tt.added, tt.dropp)
			}
			checkAnswered(t, out)
		})
	}
}

// TestTooManyToolCalls: the calls of a reply beyond memory.MaxToolCalls
// are not run but answered with a tool error, logged as denied, and the
// reply is saved as two assistant messages, each with its results.
func TestTooManyToolCalls(t *testing.T) {
	const n = memory.MaxToolCalls + 6
	var cs []provider.ToolCall
	for i := range n {
		cs = append(cs, call(fmt.Sprintf("c%d", i+1), "time"))
	}
	p := &script{replies: []provider.ChatResponse{calls(cs...)}}
	inv := &invoker{}
	a, st, logs := newCallAgent(t, p, inv)
	ctx := context.Background()
	res, err := a.Turn(ctx, TurnRequest{Message: "many"})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(inv.called()); got != memory.MaxToolCalls {
		t.Errorf("%d calls ran, want %d", got, memory.MaxToolCalls)
	}
	if len(res.ToolCalls) != n {
		t.Fatalf("%d tool records, want %d", len(res.ToolCalls), n)
	}
	for i, r := range res.ToolCalls {
		over := i >= memory.MaxToolCalls
		if r.ID != cs[i].ID || over != (r.Status == StatusNotRun) {
			t.Errorf("record %d: %+v", i, r)
		}
		if over && r.Error != "error: not run: more than 64 tool calls in one reply" {
			t.Errorf("record %d: error %q", i, r.Error)
		}
	}
	// the model is sent every call and its result
	req := p.last()
	checkAnswered(t, req.Messages)
	results := 0
	for _, m := range req.Messages {
		if m.Role == provider.RoleTool {
			results++
		}
	}
	if results != n {
		t.Errorf("%d results sent, want %d", results, n)
	}
	log := logs.String()
	if !strings.Contains(log, `"event":"tool_denied"`) || !strings.Contains(log, `"count":6`) {
		t.Errorf("the calls over the limit are not logged:\n%s", log)
	}

	_, msgs, err := st.Get(ctx, res.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	// message, 64 calls and their results, 6 calls and theirs, answer
	if len(msgs) != 1+1+memory.MaxToolCalls+1+6+1 {
		t.Fatalf("%d messages saved", len(msgs))
	}
	if c1, c2 := len(msgs[1].ToolCalls), len(msgs[2+memory.MaxToolCalls].ToolCalls); c1 != memory.MaxToolCalls || c2 != 6 {
		t.Errorf("the reply is saved with %d and %d calls, want %d and 6", c1, c2, memory.MaxToolCalls)
	}
	// resumed, the conversation goes back to the model as it was sent
	sent := req.Messages
	a.cfg.HistoryMessages = 1000
	if _, err := a.Turn(ctx, TurnRequest{Message: "and?"}); err != nil {
		t.Fatal(err)
	}
	resumed := p.last().Messages
	checkAnswered(t, resumed)
	if len(resumed) != len(sent)+2 {
		t.Errorf("resumed with %d messages, want %d", len(resumed), len(sent)+2)
	}
}

// TestToolCallIDsAndNamesNormalised: ids a model gives that the memory
// cannot keep (too long, empty) or that are taken are replaced before
// anything runs, in the call and its result alike; an over-long name goes
// to the broker only as invalidToolName, a tool nobody has (refused there,
// with a receipt); the turn is saved.
func TestToolCallIDsAndNamesNormalised(t *testing.T) {
	long := strings.Repeat("i", memory.MaxNameBytes+1)
	longName := strings.Repeat("n", memory.MaxNameBytes+1)
	p := &script{replies: []provider.ChatResponse{
		calls(call(long, "time"), call("", "time"), call("dup", "time"), call("dup", "time"), call("named", longName)),
		{Text: "done"},
		calls(call("dup", "time")), // a later turn reuses an id of the history
	}}
	inv := &invoker{}
	a, st, _ := newCallAgent(t, p, inv)
	ctx := context.Background()
	res, err := a.Turn(ctx, TurnRequest{Message: "go"})
	if err != nil {
		t.Fatal(err)
	}
	ran := inv.called()
	if len(ran) != 5 {
		t.Fatalf("%d calls reached the broker, want 5", len(ran))
	}
	// the over-long name reaches the broker only as a name no tool has,
	// which it refuses with a receipt
	if ran[4].Name != invalidToolName {
		t.Fatalf("the fifth call reached the broker as %q, want %q", ran[4].Name, invalidToolName)
	}
	ids := map[string]bool{}
	for i, r := range res.ToolCalls {
		if r.ID == "" || len(r.ID) > 64 || ids[r.ID] {
			t.Errorf("record %d has id %q", i, r.ID)
		}
		ids[r.ID] = true
		if i < len(ran) && ran[i].ID != r.ID {
			t.Errorf("call %d ran as %q, recorded as %q", i, ran[i].ID, r.ID)
		}
	}
	if res.ToolCalls[2].ID != "dup" {
		t.Errorf("the first use of an id was changed to %q", res.ToolCalls[2].ID)
	}
	if r := res.ToolCalls[4]; r.ID != "named" || r.Status != "invalid" || !strings.HasPrefix(r.Error, "error: unknown tool") {
		t.Errorf("the over-long name is recorded as %+v", r)
	}
	checkAnswered(t, p.last().Messages)

	if _, err := a.Turn(ctx, TurnRequest{Message: "again"}); err != nil {
		t.Fatal(err)
	}
	checkAnswered(t, p.last().Messages)

	_, msgs, err := st.Get(ctx, res.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	saved := msgs[1].ToolCalls
	if len(saved) != 5 || saved[4].Name != invalidToolName {
		t.Fatalf("calls saved as %+v", saved)
	}
	for i, c := range saved {
		if c.ID != res.ToolCalls[i].ID || msgs[2+i].ToolCallID != c.ID {
			t.Errorf("call %d saved as %q, its result as %q, recorded as %q", i, c.ID, msgs[2+i].ToolCallID, res.ToolCalls[i].ID)
		}
	}
}

func TestNormaliseCalls(t *testing.T) {
	tests := []struct {
		name        string
		call        provider.ToolCall
		seen        []string
		wantID      string
		wantName    string
		wantRefused bool
	}{
		{name: "kept", call: call("toolu_1", "time"), wantID: "toolu_1", wantName: "time"},
		{name: "empty id", call: call("", "time"), wantID: "call_t1_2_1", wantName: "time"},
		{name: "long id", call: call(strings.Repeat("x", memory.MaxNameBytes+1), "time"), wantID: "call_t1_2_1", wantName: "time"},
		{name: "id at the limit", call: call(strings.Repeat("x", memory.MaxNameBytes), "time"), wantID: strings.Repeat("x", memory.MaxNameBytes), wantName: "time"},
		{name: "id not UTF-8", call: call("a\xffb", "time"), wantID: "call_t1_2_1", wantName: "time"},
		{name: "id taken", call: call("a", "time"), seen: []string{"a"}, wantID: "call_t1_2_1", wantName: "time"},
		{name: "generated id taken", call: call("a", "time"), seen: []string{"a", "call_t1_2_1"}, wantID: "call_t1_2_1_", wantName: "time"},
		{name: "long name", call: call("a", strings.Repeat("é", memory.MaxNameBytes)), wantID: "a", wantName: invalidToolName, wantRefused: true},
		{name: "name not UTF-8", call: call("a", "ti\xffme"), wantID: "a", wantName: invalidToolName, wantRefused: true},
		{name: "no name", call: call("a", ""), wantID: "a", wantName: invalidToolName, wantRefused: true},
		{name: "id another provider refuses", call: call("functions.shell:0", "time"), wantID: "call_t1_2_1", wantName: "time"},
		{name: "id with a space", call: call("call 1", "time"), wantID: "call_t1_2_1", wantName: "time"},
		{name: "id of letters, digits, _ and -", call: call("call_A-9", "time"), wantID: "call_A-9", wantName: "time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, id := range tt.seen {
				seen[id] = true
			}
			out, refused := normaliseCalls([]provider.ToolCall{tt.call}, "t1", 1, seen)
			if out[0].ID != tt.wantID || out[0].Name != tt.wantName || (refused[0] != "") != tt.wantRefused {
				t.Errorf("got %q %q refused %q, want %q %q refused %v", out[0].ID, out[0].Name, refused[0], tt.wantID, tt.wantName, tt.wantRefused)
			}
			if !seen[out[0].ID] {
				t.Error("the id returned is not marked seen")
			}
			if len(refused[0]) > 200 {
				t.Errorf("refusal of %d bytes: %q", len(refused[0]), refused[0])
			}
		})
	}
}

// TestLongModelNameSaved: a model name of any length from the server is
// cut to what the memory keeps, so a round whose tools ran is saved.
func TestLongModelNameSaved(t *testing.T) {
	reply := calls(call("a", "time"))
	reply.Model = strings.Repeat("m", memory.MaxNameBytes+1)
	p := &script{replies: []provider.ChatResponse{reply}}
	a, st, _ := newCallAgent(t, p, &invoker{})
	res, err := a.Turn(context.Background(), TurnRequest{Message: "go"})
	if err != nil {
		t.Fatal(err)
	}
	_, msgs, err := st.Get(context.Background(), res.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	if m := msgs[1].Model; len(m) > memory.MaxNameBytes || !strings.HasPrefix(m, "mmm") {
		t.Errorf("model saved as %q", m)
	}
}

// FuzzNormaliseCalls: whatever ids and names a model sends, every call
// leaves with a unique id of at most memory.MaxNameBytes letters, digits, _
// and -, not taken before; a name the memory cannot keep or that is empty
// becomes invalidToolName with a refusal, and any other name is kept as it
// is, with none.
func FuzzNormaliseCalls(f *testing.F) {
	f.Add("toolu_1", "time", "toolu_1", "shell", "call_t1_2_1")
	f.Add("", "", "functions.shell:0", "ti\xffme", "")
	f.Add(strings.Repeat("x", memory.MaxNameBytes+1), strings.Repeat("é", 200), "a b", "file_read", "a b")
	f.Fuzz(func(t *testing.T, id1, name1, id2, name2, taken string) {
		seen := map[string]bool{taken: true}
		in := []provider.ToolCall{call(id1, name1), call(id2, name2)}
		out, refused := normaliseCalls(in, "t1", 1, seen)
		if len(out) != len(in) || len(refused) != len(in) {
			t.Fatalf("%d calls in, %d out, %d refusals", len(in), len(out), len(refused))
		}
		ids := map[string]bool{taken: true}
		for i, c := range out {
			if c.ID == "" || len(c.ID) > memory.MaxNameBytes || !portableID(c.ID) || ids[c.ID] {
				t.Fatalf("call %d: id %q (in %q) is empty, long, not portable or taken", i, c.ID, in[i].ID)
			}
			ids[c.ID] = true
			if !seen[c.ID] {
				t.Fatalf("call %d: id %q not marked seen", i, c.ID)
			}
			bad := in[i].Name == "" || len(in[i].Name) > memory.MaxNameBytes || !utf8.ValidString(in[i].Name)
			switch {
			case bad && (c.Name != invalidToolName || refused[i] == ""):
				t.Fatalf("call %d: name %q kept as %q, refusal %q", i, in[i].Name, c.Name, refused[i])
			case !bad && (c.Name != in[i].Name || refused[i] != ""):
				t.Fatalf("call %d: name %q became %q, refusal %q", i, in[i].Name, c.Name, refused[i])
			}
		}
	})
}
