package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/internal/toolkind"
)

// State is the state of an autonomous run.
type State int

// The states, from the most to the least active.
const (
	Engaged  State = iota // the person just wrote
	Working               // tool calls are happening
	Foraging              // no immediate task: look for something useful
	Resting               // idle: a periodic check
)

var stateNames = [...]string{"engaged", "working", "foraging", "resting"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("state(%d)", int(s))
	}
	return stateNames[s]
}

// Intervals are the waits before the next autonomous turn, by state.
type Intervals struct {
	Engaged, Working, Foraging, Resting time.Duration
}

// DefaultIntervals are poc-agent's.
var DefaultIntervals = Intervals{Engaged: 5 * time.Second, Working: 3 * time.Second, Foraging: 30 * time.Second, Resting: 300 * time.Second}

func (iv Intervals) of(s State) time.Duration {
	return [...]time.Duration{iv.Engaged, iv.Working, iv.Foraging, iv.Resting}[s]
}

// Next is the state after a turn taken in state s; byUser says the turn
// answered a message of the person.
func Next(s State, byUser, yielded, hadToolCalls bool) State {
	switch {
	case yielded:
		return Resting
	case hadToolCalls:
		return Working
	case byUser:
		return Engaged
	case s == Engaged, s == Working:
		return Foraging
	}
	return Resting
}

// guidance is each state's own prompt, added to the system prompt of the
// turn taken in it.
var guidance = [...]string{
	Engaged:  "The person has just written to you: their message is the last one. Answer it first; if they ask for work, start it.",
	Working:  "You are in the middle of a task. Take its next step now, with one tool call. When the task is done, or you need the person, call yield_to_user with the reason.",
	Foraging: "Nothing is pressing. If something useful is left within the task you were given (checking your earlier work, for one), do it; if not, call yield_to_user.",
	Resting:  "You are resting; this is a periodic check. If nothing needs doing, call yield_to_user at once.",
}

// Defaults of an autonomous run's bounds.
const (
	DefaultMaxTurns     = 20
	DefaultMaxToolCalls = 100
	DefaultMaxErrors    = 3
	DefaultBackoff      = time.Second
)

// Why a run stopped.
const (
	StopMaxTurns     = "max_turns"
	StopMaxToolCalls = "max_tool_calls"
	StopTokens       = "token_budget"
	StopErrors       = "errors"
	StopEstop        = "estop"
	StopCancelled    = "cancelled"
	// StopYielded: the model yielded and no message of the person can
	// come (RunRequest.User is nil or closed).
	StopYielded = "yielded"
)

// Autonomous configures an autonomous run. Zero values take the defaults;
// MaxTokens 0 is no token budget.
type Autonomous struct {
	Intervals    Intervals
	MaxTurns     int
	MaxToolCalls int
	MaxTokens    int
	MaxErrors    int
	Backoff      time.Duration
	// Estopped reports whether the emergency stop is engaged; nil: never.
	Estopped func() bool
}

// RunRequest starts an autonomous run.
type RunRequest struct {
	// Run is the run's id ("run_" and 16 hex digits); empty: a new one.
	Run             string
	Conversation    string
	NewConversation bool
	// Task is the person's first message: the first turn, Engaged. Empty
	// starts the run Foraging, on its first tick.
	Task string
	// User carries the person's later messages; each preempts the run.
	// nil or closed: no more.
	User <-chan string
	// OnTurn is told about each turn when it ends.
	OnTurn func(RunTurn)
	// OnTool is told what happened to each tool call, as it happens.
	OnTool func(ToolRecord)
}

// RunTurn is one turn of an autonomous run.
type RunTurn struct {
	N       int        // 1 for the first turn
	State   State      // the state the turn ran in
	Next    State      // the state it left the run in
	ByUser  bool       // the turn answers a message of the person
	Yielded bool       // the model called yield_to_user, and it was allowed
	Result  TurnResult // what the turn did
	Err     error      // why the turn failed, or was interrupted
}

// RunResult is the outcome of an autonomous run.
type RunResult struct {
	Run          string `json:"run"`
	Conversation string `json:"conversation"`
	Turns        int    `json:"turns"`
	ToolCalls    int    `json:"tool_calls"`
	Tokens       int    `json:"tokens"`
	State        string `json:"state"`
	Stop         string `json:"stop"`
}

type runKey struct{}

// WithRun returns ctx carrying the id of an autonomous run; the broker
// records it in the receipts of every action taken with that context.
func WithRun(ctx context.Context, run string) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// RunFrom is the run id WithRun put in ctx, or "".
func RunFrom(ctx context.Context) string {
	r, _ := ctx.Value(runKey{}).(string)
	return r
}

func newRunID() string {
	var b [8]byte
	rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}

func (c *Autonomous) defaults() {
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.MaxToolCalls <= 0 {
		c.MaxToolCalls = DefaultMaxToolCalls
	}
	if c.MaxErrors <= 0 {
		c.MaxErrors = DefaultMaxErrors
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.Intervals == (Intervals{}) {
		c.Intervals = DefaultIntervals
	}
	if c.Estopped == nil {
		c.Estopped = func() bool { return false }
	}
}

// estopPoll is how often a run checks the emergency stop while it waits
// or a turn runs.
const estopPoll = 100 * time.Millisecond

// RunAutonomous runs an autonomous run until one of its bounds stops it,
// and says why in RunResult.Stop. The agent must offer [tool.YieldToUser]
// among its tools.
//
// An autonomous run inverts the loop (the "default mode network" of
// poc-agent): acting is the default, and waiting for the person is a
// deliberate call to the yield_to_user tool. The run ticks on its own; on
// each tick it runs a turn whose message says which turn of the run it is
// and whose system prompt carries the guidance of the run's state. What
// the turn did picks the next state, and the state's interval is the wait
// before the next tick:
//
//	yield_to_user called (and allowed)  → Resting
//	any other tool call                 → Working
//	no tool call, answering the person  → Engaged (they may write again)
//	no tool call otherwise              → one step down: Engaged and Working
//	                                      → Foraging → Resting
//
// A message from the person preempts at once: a turn in progress is
// interrupted (its calls not yet run are not run), and the person's
// message is the next turn, in state Engaged. Every tool call goes to the
// Invoker as in any turn, with the run's id in its context ([RunFrom]), so
// the receipts name the run.
//
// A run is bounded: it stops before a turn past MaxTurns, once MaxToolCalls
// calls have been sent (a turn is given only what is left), once the
// turns' tokens reach MaxTokens (a turn that starts under the budget may
// end over it), after MaxErrors failed turns in a row (waiting Backoff,
// doubled each time, between them), when the emergency stop is engaged
// (Estopped, or a tool call the broker refused with status "estop"), and
// when its context ends. A run whose person cannot write (RunRequest.User
// nil or closed) ends when the model yields.
func (a *Agent) RunAutonomous(ctx context.Context, c Autonomous, r RunRequest) RunResult {
	c.defaults()
	x := &autoRun{a: a, c: c, r: r, res: RunResult{Run: r.Run, Conversation: r.Conversation},
		state: Engaged, msg: r.Task, byUser: true, user: r.User, newConv: r.NewConversation}
	if x.res.Run == "" {
		x.res.Run = newRunID()
	}
	ctx = WithRun(ctx, x.res.Run)
	x.log = a.log.With("run", x.res.Run)
	x.log.Info("autonomous run started", "event", "autonomous_started", "max_turns", c.MaxTurns,
		"max_tool_calls", c.MaxToolCalls, "max_tokens", c.MaxTokens)
	if x.msg == "" {
		x.state, x.byUser = Foraging, false
		if why := x.wait(ctx, c.Intervals.of(x.state)); why != "" {
			return x.stop(why)
		}
	}
	for {
		if why := x.step(ctx); why != "" {
			return x.stop(why)
		}
	}
}

// autoRun is an autonomous run under way: what its steps share.
type autoRun struct {
	a       *Agent
	c       Autonomous
	r       RunRequest
	res     RunResult
	log     *slog.Logger
	state   State
	msg     string // the next turn's message, the person's when byUser
	byUser  bool
	user    <-chan string // nil once closed
	newConv bool
	errs    int  // failed turns in a row
	yielded bool // the last turn yielded: nobody to wait for ends the run
}

// stop ends the run, for why.
func (x *autoRun) stop(why string) RunResult {
	x.res.State, x.res.Stop = x.state.String(), why
	x.log.Info("autonomous run stopped", "event", "autonomous_stopped", "reason", why, "turns", x.res.Turns,
		"tool_calls", x.res.ToolCalls, "tokens", x.res.Tokens)
	return x.res
}

// wait waits d for the next tick, or less for a message of the person
// (then in x.msg). It returns "" when the run goes on, else why it stops.
func (x *autoRun) wait(ctx context.Context, d time.Duration) string {
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(estopPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return StopCancelled
		case <-tick.C:
			if x.c.Estopped() {
				return StopEstop
			}
		case m, ok := <-x.user:
			if !ok {
				x.user = nil
				if x.yielded {
					return StopYielded
				}
				continue
			}
			x.msg, x.byUser = m, true
			return ""
		case <-t.C:
			x.msg, x.byUser = "", false
			return ""
		}
	}
}

// step is one tick of the run: a turn, the state it leads to, and the
// wait before the next (with backoff after a failed turn). It returns ""
// when the run goes on, else why it stops.
func (x *autoRun) step(ctx context.Context) string {
	c := &x.c
	if x.byUser && x.state != Engaged {
		x.log.Info("autonomous state", "event", "autonomous_state", "from", x.state.String(), "to", Engaged.String(), "cause", "user_message")
		x.state = Engaged
	}
	if why := c.bound(ctx, x.res); why != "" {
		return why
	}
	turn, had, preempted, estopped := x.turn(ctx)
	switch {
	case estopped:
		return StopEstop
	case preempted != nil:
		x.msg, x.byUser = *preempted, true
		return ""
	case ctx.Err() != nil:
		return StopCancelled
	}
	if turn.Next != x.state {
		x.log.Info("autonomous state", "event", "autonomous_state", "from", x.state.String(), "to", turn.Next.String(),
			"yielded", turn.Yielded, "had_tool_calls", had)
	}
	x.state, x.yielded = turn.Next, turn.Yielded
	if why := c.bound(ctx, x.res); why != "" {
		return why
	}
	if x.yielded && x.user == nil {
		return StopYielded
	}
	delay := c.Intervals.of(x.state)
	if turn.Err != nil {
		x.errs++
		if x.errs >= c.MaxErrors {
			return StopErrors
		}
		delay = c.Backoff << (x.errs - 1)
		x.log.Warn("autonomous turn failed; backing off", "event", "autonomous_backoff", "errors", x.errs, "wait", delay.String())
	} else {
		x.errs = 0
	}
	return x.wait(ctx, delay)
}

// turn runs the run's next turn and counts what it did: whether it made
// a tool call other than yield_to_user (had), the person's message that
// interrupted it (preempted), and whether the emergency stop did.
func (x *autoRun) turn(ctx context.Context) (turn RunTurn, had bool, preempted *string, estopped bool) {
	c, res := &x.c, &x.res
	res.Turns++
	if !x.byUser {
		x.msg = fmt.Sprintf("[claw: autonomous turn %d of %d, %s] Go on.", res.Turns, c.MaxTurns, x.state)
	}
	req := TurnRequest{Conversation: res.Conversation, NewConversation: x.newConv, Message: x.msg,
		OnTool: x.r.OnTool, MaxToolCalls: c.MaxToolCalls - res.ToolCalls,
		Guidance: fmt.Sprintf("## Autonomous run\nYou are working on your own: claw calls you again after each turn, up to %d turns; this is turn %d. Every tool call is still checked by the policy and receipted. Waiting for the person is a deliberate act: call yield_to_user.\n\n## Now (%s)\n%s",
			c.MaxTurns, res.Turns, x.state, guidance[x.state])}
	tr, preempted, estopped := x.a.autonomousTurn(ctx, req, &x.user, c.Estopped)
	turn = RunTurn{N: res.Turns, State: x.state, ByUser: x.byUser, Result: tr.res, Err: tr.err}
	if tr.res.Conversation != "" {
		res.Conversation, x.newConv = tr.res.Conversation, false
	}
	res.Tokens += tr.res.Tokens
	sent, had, yield, stopped := tally(tr.res.ToolCalls)
	res.ToolCalls += sent
	turn.Yielded, estopped = yield, estopped || stopped
	turn.Next = Next(x.state, x.byUser, turn.Yielded, had)
	if preempted != nil {
		turn.Next = Engaged
	}
	x.log.Info("autonomous turn", "event", "autonomous_turn", "turn", turn.N, "state", x.state.String(), "by_user", x.byUser,
		"tool_calls", len(tr.res.ToolCalls), "yielded", turn.Yielded, "tokens", tr.res.Tokens, "error", errText(tr.err))
	if x.r.OnTurn != nil {
		x.r.OnTurn(turn)
	}
	return turn, had, preempted, estopped
}

// tally reads a turn's tool calls: how many were sent to the Invoker,
// whether any but yield_to_user was (had), whether yield_to_user was
// allowed (yielded), and whether the emergency stop refused one.
func tally(calls []ToolRecord) (sent int, had, yielded, estopped bool) {
	for _, t := range calls {
		if t.Status == StatusNotRun {
			continue
		}
		sent++
		switch {
		case t.Status == "estop":
			estopped = true
		case toolkind.Kind(t.Name) == tool.YieldToUser.Name:
			yielded = yielded || t.Status == "ok"
			continue
		}
		had = true
	}
	return sent, had, yielded, estopped
}

// bound is why the run must stop before another turn, or "".
func (c *Autonomous) bound(ctx context.Context, res RunResult) string {
	switch {
	case ctx.Err() != nil:
		return StopCancelled
	case c.Estopped():
		return StopEstop
	case res.Turns >= c.MaxTurns:
		return StopMaxTurns
	case res.ToolCalls >= c.MaxToolCalls:
		return StopMaxToolCalls
	case c.MaxTokens > 0 && res.Tokens >= c.MaxTokens:
		return StopTokens
	}
	return ""
}

type turnOut struct {
	res TurnResult
	err error
}

// autonomousTurn runs one turn, interrupting it at once when a message of
// the person arrives on *user (returned as preempted) or the emergency
// stop is engaged.
func (a *Agent) autonomousTurn(ctx context.Context, req TurnRequest, user *<-chan string, estop func() bool) (out turnOut, preempted *string, estopped bool) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan turnOut, 1)
	go func() {
		res, err := a.Turn(tctx, req)
		done <- turnOut{res, err}
	}()
	tick := time.NewTicker(estopPoll)
	defer tick.Stop()
	for {
		select {
		case out = <-done:
			return out, preempted, estopped
		case <-tick.C:
			if !estopped && estop() {
				estopped = true
				cancel()
			}
		case m, ok := <-*user:
			if !ok {
				*user = nil
				continue
			}
			if preempted == nil {
				preempted = &m
				a.log.Info("autonomous turn preempted by the person", "event", "autonomous_preempted", "run", RunFrom(ctx))
				cancel()
			} else {
				// a second message before the turn returned: keep both
				joined := *preempted + "\n" + m
				preempted = &joined
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
