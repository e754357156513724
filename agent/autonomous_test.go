package agent

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/agent/tool"
)

func TestNextState(t *testing.T) {
	for _, c := range []struct {
		from                   State
		byUser, yielded, tools bool
		want                   State
	}{
		{from: Working, yielded: true, tools: true, want: Resting},
		{from: Engaged, byUser: true, yielded: true, want: Resting},
		{from: Resting, tools: true, want: Working},
		{from: Foraging, tools: true, want: Working},
		{from: Engaged, byUser: true, want: Engaged},
		{from: Engaged, want: Foraging},
		{from: Working, want: Foraging},
		{from: Foraging, want: Resting},
		{from: Resting, want: Resting},
	} {
		if got := Next(c.from, c.byUser, c.yielded, c.tools); got != c.want {
			t.Errorf("Next(%s, user %v, yielded %v, tools %v) = %s, want %s", c.from, c.byUser, c.yielded, c.tools, got, c.want)
		}
	}
}

// counting runs every call, counts them, and remembers the run id each
// came with.
type counting struct {
	n    atomic.Int32
	mu   sync.Mutex
	runs map[string]bool
}

func (c *counting) Invoke(ctx context.Context, _ string, call tool.Call) tool.Result {
	c.n.Add(1)
	c.mu.Lock()
	if c.runs == nil {
		c.runs = map[string]bool{}
	}
	c.runs[RunFrom(ctx)] = true
	c.mu.Unlock()
	return tool.Result{Content: `{"ok":true}`, Status: "ok", ActionID: "a_" + call.ID}
}

// autoAgent is an agent whose model is the mock with script, offering
// file_list and yield_to_user to inv.
func autoAgent(t testing.TB, script string, inv Invoker) *Agent {
	t.Helper()
	s, err := provider.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := New(Config{Provider: provider.NewMock("mock", s), Memory: st, Invoker: inv,
		Tools: []tool.Spec{mustLookup(t, "file_list"), tool.YieldToUser}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustLookup(t testing.TB, name string) tool.Spec {
	t.Helper()
	s, ok := tool.Lookup(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	return s
}

// fast ticks every millisecond in every state.
var fast = Intervals{Engaged: time.Millisecond, Working: time.Millisecond, Foraging: time.Millisecond, Resting: time.Millisecond}

const listing = `
turns:
  - step: 1
    tool_calls:
      - {name: file_list, arguments: {path: a}}
      - {name: file_list, arguments: {path: b}}
      - {name: file_list, arguments: {path: c}}
default:
  reply: listed
`

// Each bound stops the run, and no more than the bound is spent.
func TestAutonomousBounds(t *testing.T) {
	for _, c := range []struct {
		name      string
		script    string
		cfg       Autonomous
		wantStop  string
		wantTurns int
		wantCalls int32
	}{
		{name: "turns", script: listing, cfg: Autonomous{MaxTurns: 4}, wantStop: StopMaxTurns, wantTurns: 4, wantCalls: 12},
		// the second turn is given one call of its three
		{name: "tool calls", script: listing, cfg: Autonomous{MaxToolCalls: 4}, wantStop: StopMaxToolCalls, wantTurns: 2, wantCalls: 4},
		// the mock counts about a token per four bytes: the first turn
		// alone spends more than 10
		{name: "tokens", script: listing, cfg: Autonomous{MaxTokens: 10}, wantStop: StopTokens, wantTurns: 1, wantCalls: 3},
		// nobody can write (no User channel): the yield ends the run
		{name: "yielded", script: "turns:\n  - step: 1\n    tool_calls: [{name: yield_to_user, arguments: {}}]\ndefault:\n  reply: resting\n",
			wantStop: StopYielded, wantTurns: 1, wantCalls: 1},
		{name: "errors", script: "turns:\n  - error: server\n", cfg: Autonomous{MaxErrors: 3, Backoff: time.Millisecond}, wantStop: StopErrors, wantTurns: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := &counting{}
			a := autoAgent(t, c.script, inv)
			c.cfg.Intervals = fast
			res := a.RunAutonomous(context.Background(), c.cfg, RunRequest{Task: "list"})
			if res.Stop != c.wantStop || res.Turns != c.wantTurns || inv.n.Load() != c.wantCalls {
				t.Errorf("stop %q after %d turns and %d calls; want %q, %d, %d", res.Stop, res.Turns, inv.n.Load(), c.wantStop, c.wantTurns, c.wantCalls)
			}
			if c.wantCalls > 0 && (len(inv.runs) != 1 || !inv.runs[res.Run] || !strings.HasPrefix(res.Run, "run_")) {
				t.Errorf("the calls came with runs %v, not %q", inv.runs, res.Run)
			}
		})
	}
}

// blocking is a model that lists once per tick and then answers, but
// whose answer to a tick blocks until the turn is cancelled; a message of
// the person gets a reply at once. It records the system prompts.
type blocking struct {
	mu      sync.Mutex
	systems []string
	asked   chan struct{}
}

func (b *blocking) Name() string                        { return "blocking" }
func (b *blocking) Capabilities() provider.Capabilities { return provider.Capabilities{Tools: true} }
func (b *blocking) Chat(ctx context.Context, req provider.ChatRequest) (provider.ChatResponse, error) {
	b.mu.Lock()
	b.systems = append(b.systems, req.System)
	b.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == provider.RoleTool:
		return provider.ChatResponse{Text: "done"}, nil
	case strings.HasPrefix(last.Content, "[claw: autonomous turn 1 "):
		return provider.ChatResponse{ToolCalls: []provider.ToolCall{{ID: "c1", Name: "file_list", Arguments: []byte(`{"path":"."}`)}}}, nil
	case strings.HasPrefix(last.Content, "[claw: autonomous turn"):
		close(b.asked)
		<-ctx.Done()
		return provider.ChatResponse{}, ctx.Err()
	}
	return provider.ChatResponse{ToolCalls: []provider.ToolCall{{ID: "y1", Name: "yield_to_user", Arguments: []byte(`{"reason":"answered"}`)}}}, nil
}

// A message of the person interrupts a turn at once and is the next turn,
// Engaged; each state's guidance is in its turn's system prompt.
func TestAutonomousPreempt(t *testing.T) {
	p := &blocking{asked: make(chan struct{})}
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := New(Config{Provider: p, Memory: st, Invoker: &counting{}, Tools: append(toolSpecs(t, "file_list"), tool.YieldToUser)})
	if err != nil {
		t.Fatal(err)
	}
	user := make(chan string)
	var turns []RunTurn
	go func() {
		<-p.asked
		user <- "stop that and answer me"
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	estop := atomic.Bool{}
	res := a.RunAutonomous(ctx, Autonomous{Intervals: Intervals{Engaged: time.Millisecond, Working: time.Millisecond, Foraging: time.Millisecond, Resting: time.Hour},
		Estopped: estop.Load}, RunRequest{User: user, OnTurn: func(rt RunTurn) {
		turns = append(turns, rt)
		if rt.Next == Resting {
			estop.Store(true) // stops the run while it rests
		}
	}})
	if res.Stop != StopEstop || len(turns) != 3 {
		t.Fatalf("stop %q after %+v", res.Stop, turns)
	}
	// 1: foraging, lists → working; 2: working, interrupted → engaged; 3:
	// the person's message, yields → resting
	want := []struct {
		state, next State
		byUser      bool
	}{{Foraging, Working, false}, {Working, Engaged, false}, {Engaged, Resting, true}}
	for i, w := range want {
		if turns[i].State != w.state || turns[i].Next != w.next || turns[i].ByUser != w.byUser {
			t.Errorf("turn %d: %s → %s (by user %v), want %s → %s (%v)", i+1, turns[i].State, turns[i].Next, turns[i].ByUser, w.state, w.next, w.byUser)
		}
	}
	if turns[1].Err == nil {
		t.Error("the preempted turn was not interrupted")
	}
	if !turns[2].Yielded {
		t.Error("the yield was not seen")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range []State{Foraging, Foraging, Working, Engaged} {
		if !strings.Contains(p.systems[i], guidance[s]) {
			t.Errorf("model call %d lacks the %s guidance:\n%s", i+1, s, p.systems[i])
		}
	}
}
