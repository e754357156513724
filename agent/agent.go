// Package agent is claw's agent loop: it takes a person's message, talks to
// a model, and sends every tool call the model proposes to an [Invoker] —
// the broker, which decides it with the gate, records receipts, asks for
// approval and runs it in the sandbox. The agent itself never runs a
// process or touches the file system for a tool; a test holds that rule.
//
// # One turn
//
//	receive → create or resume the conversation → load its recent history
//	→ build the system prompt (soul, summary of older turns, policy, tool
//	instructions) → call the model with the active tools' schemas
//	→ text only: persist it and reply
//	→ tool calls: for each, Invoker.Invoke; persist the call and its result
//	→ send the results back → repeat until the model answers in text or
//	  MaxToolRounds rounds of tools have run → persist → reply
//
// A denied, rejected or failed call goes back to the model as a tool error
// carrying the reason, so it can adapt; nothing is dropped. Arguments that
// do not match the tool's schema still reach the Invoker (which records
// the attempt and denies it) and come back as a tool error.
//
// A call the agent does not run gets a tool error too, with status
// [StatusNotRun] and no receipt: the calls left when the turn is
// interrupted ("not run: the turn was interrupted"), and those beyond the
// first [memory.MaxToolCalls] of one reply (a reply with more is kept as
// several assistant messages, each followed by its results). Before any
// call runs, an id that is empty, over [memory.MaxNameBytes] or already
// used is replaced by call_TURN_ROUND_INDEX, in the call and its result
// alike, and a name over that limit is refused as an unknown tool, so
// saving a round never fails after its tools ran. Every call the model is
// sent has its result: history loaded for a turn gives a call saved
// without one (by a crash, or by an older claw) a "not run" error, and
// leaves out a result that answers no call.
//
// Models sometimes write a tool call as text instead of a structured call
// (<tool_call>{…}</tool_call>, a ```json block, or a bare JSON object naming
// an active tool). When a reply has no structured calls, such text is
// recovered into calls (see [RecoverToolCalls]).
//
// # Memory and compaction
//
// Every message is persisted in the memory store with the id of its turn
// (the person's message, the tool calls and their results, the answer), a
// tool result with its error flag, status and action id, so a resumed
// conversation goes back to the model as it was. When the messages not yet
// covered by the conversation's summary exceed HistoryBudget bytes, the
// older ones are summarised by the model into the conversation's summary,
// which the system prompt carries from then on; the full log stays in the
// store. A restarted REPL resumes the channel's latest conversation.
//
// Each request carries the metadata a router provider picks its member by:
// the purpose ("chat", or "summary" for compaction) and the channel.
//
// # Autonomous runs
//
// [Agent.RunAutonomous] takes turn after turn on its own, in the states
// [Engaged], [Working], [Foraging] and [Resting], until the model calls
// [tool.YieldToUser] or a bound stops it; a message of the person
// preempts it at once. Its tool calls carry the run's id ([RunFrom]).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/internal/textesc"
)

// Invoker carries out one tool call: the broker.
type Invoker interface {
	Invoke(ctx context.Context, conversation string, call tool.Call) tool.Result
}

// Defaults of the guardrails.
const (
	DefaultMaxToolRounds    = 5
	DefaultMaxResponseBytes = 1 << 20
	DefaultHistoryMessages  = 40
	DefaultHistoryBudget    = 32 << 10
)

// Config wires an Agent.
type Config struct {
	Provider provider.Provider // required
	Memory   *memory.Store     // required
	Invoker  Invoker           // required
	// Tools are the active tools; nil means none (the model only talks).
	Tools   []tool.Spec
	Channel string // "cli", "serve", …
	Model   string // overrides the provider's model when set
	// Soul is the identity text at the top of the system prompt.
	Soul string
	// Policy is a short account of the autonomy level and the workspace
	// boundary, told to the model so it does not waste calls.
	Policy string

	MaxToolRounds    int
	MaxResponseBytes int
	HistoryMessages  int
	HistoryBudget    int

	Log *slog.Logger
}

// DefaultSoul is the identity used when no soul.md exists.
const DefaultSoul = `You are claw, a careful assistant working in the user's workspace.
Every tool call you make is checked by a security policy, may need the user's approval, and runs in a sandbox.
When a call is denied, do not try to get around the denial: explain what you wanted to do and why, and suggest what the user could do.`

// Agent runs turns. It is safe for concurrent use by several
// conversations; turns of one conversation must not overlap (the caller
// serialises them).
type Agent struct {
	cfg Config
	log *slog.Logger
}

// New checks cfg and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Provider == nil || cfg.Memory == nil || cfg.Invoker == nil {
		return nil, errors.New("agent: Provider, Memory and Invoker are required")
	}
	if cfg.Channel == "" {
		cfg.Channel = "cli"
	}
	if cfg.MaxToolRounds <= 0 {
		cfg.MaxToolRounds = DefaultMaxToolRounds
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.HistoryMessages <= 0 {
		cfg.HistoryMessages = DefaultHistoryMessages
	}
	if cfg.HistoryBudget <= 0 {
		cfg.HistoryBudget = DefaultHistoryBudget
	}
	if strings.TrimSpace(cfg.Soul) == "" {
		cfg.Soul = DefaultSoul
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Agent{cfg: cfg, log: log}, nil
}

// Tools returns the active tools.
func (a *Agent) Tools() []tool.Spec { return append([]tool.Spec(nil), a.cfg.Tools...) }

// TurnRequest is one message from a person.
type TurnRequest struct {
	// Conversation is the id (or a unique prefix) to continue; empty
	// continues the channel's latest conversation, or starts one.
	Conversation    string
	NewConversation bool
	Message         string
	// OnDelta receives the model's text as it streams, when the provider
	// streams; the reply is returned whole either way.
	OnDelta func(text string)
	// OnStatus is told what the turn is doing: "thinking" while the model
	// works, "tool NAME" while a tool call is with the broker, "" when
	// neither (a channel's spinner follows it).
	OnStatus func(status string)
	// OnTool is told what happened to each tool call, as it happens.
	OnTool func(ToolRecord)
	// Guidance is added to the system prompt for this turn only (an
	// autonomous run's state guidance).
	Guidance string
	// MaxToolCalls, when positive, is how many tool calls the turn may
	// send to the Invoker; the rest are not run (an autonomous run's
	// remaining budget).
	MaxToolCalls int
}

// ToolRecord is what happened to one tool call of a turn.
type ToolRecord struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
	ActionID string `json:"action_id,omitempty"`
	// Output is the start of what the model was given back.
	Output string `json:"output,omitempty"`
}

// maxRecordOutput bounds ToolRecord.Output.
const maxRecordOutput = 2048

// TurnResult is the outcome of a turn.
type TurnResult struct {
	Conversation string `json:"conversation"`
	// Started is set when the turn started the conversation.
	Started   bool         `json:"-"`
	Reply     string       `json:"reply"`
	ToolCalls []ToolRecord `json:"tool_calls"`
	Rounds    int          `json:"rounds"`
	Provider  string       `json:"provider,omitempty"`
	Model     string       `json:"model,omitempty"`
	// Tokens is the input and output tokens of the turn's model calls,
	// as the provider reported them.
	Tokens int `json:"-"`
}

// ErrEmptyMessage is returned for a message with nothing in it.
var ErrEmptyMessage = errors.New("empty message")

// MaxMessageBytes bounds a person's message.
const MaxMessageBytes = 256 << 10

// Turn runs one turn of a conversation: begin (the person's message
// saved, the history loaded), then rounds of ask (the model) and act (its
// tool calls through the Invoker), until the model answers in text.
func (a *Agent) Turn(ctx context.Context, r TurnRequest) (TurnResult, error) {
	msg, err := checkMessage(r.Message)
	if err != nil {
		return TurnResult{}, err
	}
	t := &turnState{a: a, r: r}
	defer t.status("")
	if err := t.begin(ctx, msg); err != nil {
		return t.res, err
	}
	for round := 0; ; round++ {
		if done, err := t.round(ctx, round); done || err != nil {
			return t.res, err
		}
	}
}

// checkMessage is a person's message, trimmed, or why it cannot be sent.
func checkMessage(m string) (string, error) {
	msg := strings.TrimSpace(m)
	if msg == "" {
		return "", ErrEmptyMessage
	}
	if len(msg) > MaxMessageBytes {
		return "", fmt.Errorf("message of %d bytes is larger than the %d allowed", len(msg), MaxMessageBytes)
	}
	if !utf8.ValidString(msg) {
		return "", errors.New("message is not UTF-8")
	}
	return msg, nil
}

// turnState is one turn under way: what its rounds share.
type turnState struct {
	a       *Agent
	r       TurnRequest
	res     TurnResult
	conv    memory.Conversation
	id      string // the turn id every message of the turn carries
	history []provider.Message
	schemas []provider.ToolSchema
	active  map[string]bool // the active tools by name
	seen    map[string]bool // the call ids the model sees, which a new call must not reuse
	system  string
	sent    int // calls sent to the Invoker, for r.MaxToolCalls
}

// status tells the channel what the turn is doing (TurnRequest.OnStatus).
func (t *turnState) status(s string) {
	if t.r.OnStatus != nil {
		t.r.OnStatus(s)
	}
}

// begin saves the person's message and loads what the model is sent with
// it: the history, the tools' schemas and the system prompt.
func (t *turnState) begin(ctx context.Context, msg string) error {
	a := t.a
	conv, started, err := a.conversation(ctx, t.r)
	if err != nil {
		return err
	}
	t.conv = conv
	t.res.Conversation, t.res.Started = conv.ID, started
	// Every message of this receive→reply cycle carries its turn id.
	t.id = memory.NewTurnID()
	if _, err := a.cfg.Memory.Append(ctx, conv.ID, memory.Message{Role: memory.RoleUser, Content: msg, TurnID: t.id}); err != nil {
		return fmt.Errorf("saving the message: %w", err)
	}
	a.log.Info("message persisted", "event", "memory_persisted", "conversation", conv.ID, "role", "user")

	t.history, err = a.history(ctx, &t.conv, t.status)
	if err != nil {
		return err
	}
	t.schemas = make([]provider.ToolSchema, 0, len(a.cfg.Tools))
	t.active = map[string]bool{}
	for _, s := range a.cfg.Tools {
		t.schemas = append(t.schemas, provider.ToolSchema{Name: string(s.Name), Description: s.Description, Parameters: s.Schema()})
		t.active[string(s.Name)] = true
	}
	t.seen = map[string]bool{}
	for _, m := range t.history {
		for _, c := range m.ToolCalls {
			t.seen[c.ID] = true
		}
	}
	t.system = a.systemPrompt(t.conv.Summary)
	if t.r.Guidance != "" {
		t.system += "\n" + t.r.Guidance + "\n"
	}
	return nil
}

// round is one round of a turn: the model is asked, and either answers
// (done) or proposes tool calls, which are run and saved with their
// results.
func (t *turnState) round(ctx context.Context, round int) (done bool, err error) {
	last := round >= t.a.cfg.MaxToolRounds
	resp, err := t.ask(ctx, last)
	if err != nil {
		return true, err
	}
	text, calls, meta := t.reply(resp, last)
	if len(calls) == 0 {
		return true, t.answer(ctx, resp, text, meta, round)
	}
	if err := t.act(ctx, round, resp, text, meta, calls); err != nil {
		return true, err
	}
	t.res.Rounds = round + 1
	return false, ctx.Err()
}

// ask sends the conversation to the model. The last round, out of tool
// rounds, asks for an answer without tools.
func (t *turnState) ask(ctx context.Context, last bool) (provider.ChatResponse, error) {
	a := t.a
	req := provider.ChatRequest{System: t.system, Messages: t.history, Tools: t.schemas, Model: a.cfg.Model,
		Metadata: a.routeHints(provider.PurposeChat)}
	if last {
		// Out of tool rounds: ask for an answer with what it has.
		req.Tools = nil
		req.Messages = append(append([]provider.Message(nil), t.history...), provider.Message{Role: provider.RoleUser,
			Content: fmt.Sprintf("[claw] The limit of %d tool rounds for this message is reached. Answer now with what you have; no more tool calls.", a.cfg.MaxToolRounds)})
	}
	if t.r.OnDelta != nil && a.cfg.Provider.Capabilities().Streaming {
		req.Stream, req.OnDelta = true, t.r.OnDelta
	}
	t.status("thinking")
	resp, err := a.cfg.Provider.Chat(ctx, req)
	t.status("")
	if err != nil {
		a.log.Warn("provider error", "event", "provider_error", "provider", a.cfg.Provider.Name(), "error", err.Error())
		return resp, fmt.Errorf("model %s: %w", a.cfg.Provider.Name(), err)
	}
	t.res.Provider, t.res.Model = resp.Provider, resp.Model
	if u := resp.Usage; u != nil {
		t.res.Tokens += u.InputTokens + u.OutputTokens
	}
	return resp, nil
}

// reply is the model's text and tool calls, with calls written as text
// recovered when it made no structured ones; none in the last round.
func (t *turnState) reply(resp provider.ChatResponse, last bool) (string, []provider.ToolCall, map[string]string) {
	text := clipText(resp.Text, t.a.cfg.MaxResponseBytes)
	calls := resp.ToolCalls
	meta := replyMetadata(resp)
	if len(calls) == 0 && !last {
		var recovered []provider.ToolCall
		recovered, text = RecoverToolCalls(text, t.active)
		if len(recovered) > 0 {
			t.a.log.Info("recovered tool calls written as text", "event", "tool_calls_recovered", "conversation", t.conv.ID, "count", len(recovered))
			calls = recovered
			meta["tool_calls_recovered"] = strconv.Itoa(len(recovered))
		}
	}
	if last {
		calls = nil
	}
	return text, calls, meta
}

// answer saves the model's answer, which ends the turn.
func (t *turnState) answer(ctx context.Context, resp provider.ChatResponse, text string, meta map[string]string, round int) error {
	if _, err := t.a.cfg.Memory.Append(ctx, t.conv.ID, memory.Message{Role: memory.RoleAssistant, Content: text, TurnID: t.id,
		Provider: keepName(resp.Provider), Model: keepName(resp.Model), Metadata: meta}); err != nil {
		return fmt.Errorf("saving the reply: %w", err)
	}
	t.a.log.Info("reply persisted", "event", "memory_persisted", "conversation", t.conv.ID, "role", "assistant")
	t.res.Reply, t.res.Rounds = text, round
	return nil
}

// act runs the model's tool calls and saves them with their results. Before
// anything runs, every call gets an id the memory can keep and no other
// call has, and a name it can keep.
func (t *turnState) act(ctx context.Context, round int, resp provider.ChatResponse, text string, meta map[string]string, calls []provider.ToolCall) error {
	a := t.a
	calls, refused := normaliseCalls(calls, t.id, round, t.seen)
	if over := len(calls) - memory.MaxToolCalls; over > 0 {
		a.log.Warn("tool calls beyond the limit not run", "event", "tool_denied", "conversation", t.conv.ID,
			"count", over, "limit", memory.MaxToolCalls)
	}
	var stored []memory.Message
	for i, c := range calls {
		if i%memory.MaxToolCalls == 0 {
			// One message holds at most MaxToolCalls calls: a longer
			// reply is kept as several, each followed by its results.
			part := calls[i:min(i+memory.MaxToolCalls, len(calls))]
			m := memory.Message{Role: memory.RoleAssistant, ToolCalls: memCalls(part), TurnID: t.id,
				Provider: keepName(resp.Provider), Model: keepName(resp.Model)}
			if i == 0 {
				m.Content, m.Metadata = text, meta
			}
			t.history = append(t.history, provider.Message{Role: provider.RoleAssistant, Content: m.Content, ToolCalls: part})
			stored = append(stored, m)
		}
		out := t.call(ctx, i, c, refused[i])
		t.record(i, c, out)
		t.history = append(t.history, provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, Content: out.Content, IsError: out.IsError})
		stored = append(stored, memory.Message{Role: memory.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: out.Content,
			IsError: out.IsError, TurnID: t.id, Metadata: resultMetadata(out)})
	}
	if _, err := a.cfg.Memory.Append(context.WithoutCancel(ctx), t.conv.ID, stored...); err != nil {
		return fmt.Errorf("saving tool calls: %w", err)
	}
	a.log.Info("tool calls persisted", "event", "memory_persisted", "conversation", t.conv.ID, "messages", len(stored))
	return nil
}

// call sends the i-th call of a reply to the Invoker, or says why it was
// not run. A refused name (refused, why) and a tool not offered here
// still reach the Invoker, so the attempt leaves a receipt.
func (t *turnState) call(ctx context.Context, i int, c provider.ToolCall, refused string) tool.Result {
	a, conv := t.a, t.conv.ID
	switch {
	case i >= memory.MaxToolCalls:
		return notRun(fmt.Sprintf("more than %d tool calls in one reply", memory.MaxToolCalls))
	case ctx.Err() != nil:
		return notRun(interrupted)
	case t.r.MaxToolCalls > 0 && t.sent >= t.r.MaxToolCalls:
		return notRun("the run's budget of tool calls is spent")
	}
	t.sent++
	a.log.Info("tool requested", "event", "tool_requested", "conversation", conv, "tool", c.Name, "call", c.ID)
	switch {
	case refused != "":
		// A name no tool has: the broker refuses it (tool.unknown)
		// and the attempt leaves a receipt, as for a tool not offered.
		out := a.cfg.Invoker.Invoke(ctx, conv, tool.Call{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(`{}`)})
		out.IsError, out.Status = true, "invalid"
		out.Content = refused + "; the tools are: " + strings.Join(activeNames(a.cfg.Tools), ", ")
		return out
	case t.active[c.Name]:
		t.status("tool " + c.Name)
		out := a.cfg.Invoker.Invoke(ctx, conv, tool.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		t.status("")
		return out
	}
	t.status("tool " + c.Name)
	// Not offered here: the attempt still goes to the broker,
	// with arguments it refuses, so it leaves a receipt.
	out := a.cfg.Invoker.Invoke(ctx, conv, tool.Call{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(`{"not_offered_on_this_channel":true}`)})
	t.status("")
	out.IsError, out.Status = true, "invalid"
	out.Content = fmt.Sprintf("error: the tool %q is not offered on this channel; the tools are: %s", c.Name, strings.Join(activeNames(a.cfg.Tools), ", "))
	return out
}

// record adds what happened to the i-th call to the turn's result, tells
// TurnRequest.OnTool and logs it.
func (t *turnState) record(i int, c provider.ToolCall, out tool.Result) {
	rec := ToolRecord{ID: c.ID, Name: c.Name, Status: out.Status, ActionID: out.ActionID}
	if out.IsError {
		rec.Error = firstLine(out.Content)
	}
	rec.Output = clipText(out.Content, maxRecordOutput)
	t.res.ToolCalls = append(t.res.ToolCalls, rec)
	if t.r.OnTool != nil {
		t.r.OnTool(rec)
	}
	if i < memory.MaxToolCalls {
		// the calls over the limit were logged above, at once
		t.a.logOutcome(t.conv.ID, c.Name, out)
	}
}

// interrupted is why the calls after an interruption were not run.
const interrupted = "the turn was interrupted"

// StatusNotRun is the status of a tool call the agent did not run: the
// turn was interrupted before it, or the reply held more calls than one
// reply may. It never reached the broker, so it has no receipt.
const StatusNotRun = "not_run"

// notRun is the tool error of a call that was not run, and why.
func notRun(why string) tool.Result {
	return tool.Result{IsError: true, Status: StatusNotRun, Content: "error: not run: " + why}
}

// invalidToolName stands in for a tool name the memory cannot keep.
const invalidToolName = "invalid_tool_name"

// normaliseCalls makes calls safe to run and to keep, before any runs. A
// call id that is empty, longer than [memory.MaxNameBytes], not UTF-8, or
// already used (in this reply or in the history, listed in seen) is
// replaced by call_TURN_ROUND_INDEX; the replacement is the id of the call
// and of its result alike. A name the memory cannot keep is replaced by
// invalidToolName, and refused[i] is the tool error that call gets instead
// of running. seen is updated with the ids returned.
func normaliseCalls(calls []provider.ToolCall, turn string, round int, seen map[string]bool) (out []provider.ToolCall, refused []string) {
	out = make([]provider.ToolCall, len(calls))
	refused = make([]string, len(calls))
	for i, c := range calls {
		if c.ID == "" || len(c.ID) > memory.MaxNameBytes || !portableID(c.ID) || seen[c.ID] {
			c.ID = fmt.Sprintf("call_%s_%d_%d", turn, round+1, i+1)
			for seen[c.ID] {
				c.ID += "_"
			}
		}
		seen[c.ID] = true
		switch {
		case c.Name == "":
			refused[i] = "error: unknown tool: the call names no tool"
			c.Name = invalidToolName
		case len(c.Name) > memory.MaxNameBytes || !utf8.ValidString(c.Name):
			refused[i] = fmt.Sprintf("error: unknown tool: a name of %d bytes starting %q (at most %d bytes of UTF-8)",
				len(c.Name), prefix(strings.ToValidUTF8(c.Name, "\uFFFD"), 32), memory.MaxNameBytes)
			c.Name = invalidToolName
		}
		out[i] = c
	}
	return out, refused
}

// portableID reports whether id is made of letters, digits, _ and - only,
// the ids every provider accepts (Anthropic refuses others, such as the
// "functions.shell:0" some OpenAI-compatible servers send), so that a
// conversation can go on with another provider.
func portableID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (a *Agent) logOutcome(conv, name string, out tool.Result) {
	ev := "tool_completed"
	switch {
	case out.Status == "denied" || out.Status == "rejected" || out.Status == "estop" || out.Status == "invalid" || out.Status == "needs_approval" || out.Status == "approval_timeout":
		ev = "tool_denied"
	case out.IsError:
		ev = "tool_failed"
	}
	a.log.Info("tool "+strings.TrimPrefix(ev, "tool_"), "event", ev, "conversation", conv, "tool", name, "status", out.Status, "action_id", out.ActionID)
}

// conversation resolves which conversation the turn belongs to, and
// whether the turn started it.
func (a *Agent) conversation(ctx context.Context, r TurnRequest) (memory.Conversation, bool, error) {
	st := a.cfg.Memory
	if !r.NewConversation {
		if r.Conversation != "" {
			c, _, err := st.Get(ctx, r.Conversation)
			return c, false, err
		}
		c, err := st.Latest(ctx, a.cfg.Channel)
		if err == nil {
			return c, false, nil
		}
		if !errors.Is(err, memory.ErrNotFound) {
			return c, false, err
		}
	}
	c, err := st.NewConversation(ctx, a.cfg.Channel)
	if err != nil {
		return c, false, err
	}
	a.log.Info("conversation started", "event", "conversation_started", "conversation", c.ID, "channel", a.cfg.Channel)
	return c, true, nil
}

// history loads the messages the model sees, compacting older ones into
// the conversation's summary when they exceed the budget.
func (a *Agent) history(ctx context.Context, conv *memory.Conversation, status func(string)) ([]provider.Message, error) {
	msgs, err := a.cfg.Memory.Recent(ctx, conv.ID, memory.MaxRecent)
	if err != nil {
		return nil, fmt.Errorf("loading history: %w", err)
	}
	var fresh []memory.Message
	for _, m := range msgs {
		if m.ID > conv.SummaryThrough {
			fresh = append(fresh, m)
		}
	}
	size := 0
	for _, m := range fresh {
		size += len(m.Content)
		for _, c := range m.ToolCalls {
			size += len(c.Arguments)
		}
	}
	if size > a.cfg.HistoryBudget || len(fresh) > a.cfg.HistoryMessages {
		// Keep the newest half of the budget (and of the message count)
		// verbatim; summarise the rest.
		keep, kept := 0, 0
		cut := len(fresh)
		for i := len(fresh) - 1; i >= 0; i-- {
			n := len(fresh[i].Content)
			if (kept+n > a.cfg.HistoryBudget/2 || keep >= a.cfg.HistoryMessages/2) && i < len(fresh)-1 {
				break
			}
			kept += n
			keep++
			cut = i
		}
		// Never start the kept part with a tool result.
		for cut < len(fresh) && fresh[cut].Role == memory.RoleTool {
			cut++
		}
		if cut > 0 && cut < len(fresh) {
			status("thinking")
			summary, err := a.summarise(ctx, conv.Summary, fresh[:cut])
			status("")
			if err != nil {
				// A failed summary costs context, not the turn.
				a.log.Warn("compaction failed", "event", "compaction_failed", "conversation", conv.ID, "error", err.Error())
			} else if err := a.cfg.Memory.SetSummary(ctx, conv.ID, summary, fresh[cut-1].ID); err == nil {
				conv.Summary, conv.SummaryThrough = summary, fresh[cut-1].ID
				fresh = fresh[cut:]
				a.log.Info("conversation compacted", "event", "memory_compacted", "conversation", conv.ID, "through", conv.SummaryThrough)
			}
		}
	}
	if len(fresh) > a.cfg.HistoryMessages {
		fresh = fresh[len(fresh)-a.cfg.HistoryMessages:]
		for len(fresh) > 0 && fresh[0].Role == memory.RoleTool {
			fresh = fresh[1:]
		}
	}
	out := make([]provider.Message, 0, len(fresh))
	for _, m := range fresh {
		pm := provider.Message{Role: provider.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, IsError: m.IsError}
		for _, c := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out = append(out, pm)
	}
	out, added, dropped := answerEveryCall(out)
	if added+dropped > 0 {
		a.log.Warn("history repaired for the model", "event", "history_repaired", "conversation", conv.ID,
			"unanswered_calls", added, "results_without_call", dropped)
	}
	return out, nil
}

// answerEveryCall returns msgs as every provider accepts them: each
// assistant message's tool calls are followed by exactly one result per
// call, in the order of the calls. A call with no result (kept by a turn
// that crashed, or by an older claw that saved nothing for the calls an
// interruption stopped) gets a tool error saying it was not run; a result
// that answers no call of the assistant message just before it, or answers
// one twice, is left out. The memory is not changed. It returns how many
// results it added and how many it left out.
func answerEveryCall(msgs []provider.Message) (out []provider.Message, added, dropped int) {
	out = make([]provider.Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		i++
		if m.Role == provider.RoleTool {
			dropped++ // answers no call
			continue
		}
		out = append(out, m)
		if m.Role != provider.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		results := map[string]provider.Message{}
		for ; i < len(msgs) && msgs[i].Role == provider.RoleTool; i++ {
			id := msgs[i].ToolCallID
			if _, dup := results[id]; dup || !hasCall(m.ToolCalls, id) {
				dropped++
				continue
			}
			results[id] = msgs[i]
		}
		for _, c := range m.ToolCalls {
			r, ok := results[c.ID]
			if !ok {
				r = provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, IsError: true, Content: notRun(interrupted).Content}
				added++
			}
			out = append(out, r)
		}
	}
	return out, added, dropped
}

func hasCall(calls []provider.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// summarise asks the model for a summary of msgs, continuing prev.
func (a *Agent) summarise(ctx context.Context, prev string, msgs []memory.Message) (string, error) {
	var b strings.Builder
	if prev != "" {
		b.WriteString("Summary so far:\n" + prev + "\n\nLater messages:\n")
	}
	for _, m := range msgs {
		c := textesc.Cut(m.Content, 4096+len(" …"), " …")
		switch m.Role {
		case memory.RoleTool:
			kind := "result"
			if m.IsError {
				kind = "error"
			}
			fmt.Fprintf(&b, "[tool %s %s] %s\n", m.ToolName, kind, c)
		default:
			fmt.Fprintf(&b, "[%s] %s\n", m.Role, c)
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "[%s called %s] %s\n", m.Role, tc.Name, tc.Arguments)
			}
		}
	}
	resp, err := a.cfg.Provider.Chat(ctx, provider.ChatRequest{
		System:   "You compress conversations. Write a short factual summary of the conversation below: what the user wants, decisions made, facts learned, files touched, and what was denied and why. No preamble.",
		Messages: []provider.Message{{Role: provider.RoleUser, Content: b.String()}},
		Model:    a.cfg.Model,
		Metadata: a.routeHints(provider.PurposeSummary),
	})
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(resp.Text)
	if s == "" {
		return "", errors.New("the model returned an empty summary")
	}
	return clipText(s, memory.MaxSummaryBytes-64), nil
}

func (a *Agent) systemPrompt(summary string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(a.cfg.Soul))
	if a.cfg.Policy != "" {
		b.WriteString("\n\n## Policy\n" + a.cfg.Policy)
	}
	if len(a.cfg.Tools) > 0 {
		b.WriteString("\n\n## Tools\nCall tools with structured tool calls only. Paths are relative to the workspace unless absolute. A tool result that starts with \"error:\" is a failure or a denial; read its reason before trying anything else.\n")
		for _, t := range a.cfg.Tools {
			fmt.Fprintf(&b, "- %s: %s\n", t.Name, t.Description)
		}
	}
	if summary != "" {
		b.WriteString("\n## Earlier in this conversation\n" + summary + "\n")
	}
	return b.String()
}

// routeHints is the metadata of a request for purpose: what a router
// provider picks its member by.
func (a *Agent) routeHints(purpose string) map[string]string {
	return map[string]string{provider.PurposeKey: purpose, provider.ChannelKey: a.cfg.Channel}
}

// maxMetaValue bounds a metadata value taken from a provider's answer.
const maxMetaValue = 256

// replyMetadata is what the memory keeps about an answer besides its text.
func replyMetadata(resp provider.ChatResponse) map[string]string {
	meta := map[string]string{}
	if resp.FinishReason != "" {
		// the provider's word, any length: clipped so that the memory
		// never refuses the turn over it
		meta["finish_reason"] = clipText(string(resp.FinishReason), maxMetaValue)
	}
	if u := resp.Usage; u != nil {
		meta["input_tokens"] = strconv.Itoa(u.InputTokens)
		meta["output_tokens"] = strconv.Itoa(u.OutputTokens)
	}
	return meta
}

// resultMetadata is what the memory keeps about a tool result besides its
// content: the broker's status and the receipts' action id.
func resultMetadata(out tool.Result) map[string]string {
	meta := map[string]string{}
	if out.Status != "" {
		meta["status"] = out.Status
	}
	if out.ActionID != "" {
		meta["action_id"] = out.ActionID
	}
	return meta
}

func activeNames(tools []tool.Spec) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = string(t.Name)
	}
	return out
}

func memCalls(calls []provider.ToolCall) []memory.ToolCall {
	out := make([]memory.ToolCall, len(calls))
	for i, c := range calls {
		args := c.Arguments
		if len(args) > memory.MaxArgumentsBytes {
			args = []byte(`"[arguments too large to store]"`)
		}
		out[i] = memory.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}
	}
	return out
}

// clipText cuts s to at most n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	return textesc.Cut(s, n, "\n[claw: reply truncated]")
}

// keepName is s as the memory keeps a name the provider gave (its name,
// the model's): UTF-8, and cut to [memory.MaxNameBytes], so that the
// memory never refuses a turn over it.
func keepName(s string) string {
	return prefix(strings.ToValidUTF8(s, "\uFFFD"), memory.MaxNameBytes-len("…"))
}

// prefix cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func prefix(s string, n int) string { return textesc.Cut(s, n+len("…"), "…") }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return textesc.Cut(s, 300+len("…"), "…")
}
