// Package channel is what claw serve gives each of its channels (the
// SynthesisAgent bridge, PlanckClaw's FIFOs, Discord), and the only way a
// channel acts. A channel translates a wire format; it decides nothing and
// records nothing itself.
//
// # What a channel gets
//
// claw serve builds one [Env] per channel section of the config
// ([channels.NAME]) and hands it to the channel's constructor:
//
//   - Name: the channel's name; the broker writes it into every receipt.
//   - Broker: a broker of its own whose Channel is Name, whose Autonomy is
//     the section's autonomy (security.autonomy when absent), whose
//     ToolsAllow is the section's tools_allow (a tool outside it is
//     denied with rule channel.tool_not_allowed, receipted like any
//     denial) and whose Approver is the approvals queue restricted to the
//     section's approver_ids (none: what needs approval does not run).
//   - Tools: the catalog tools_allow lets through, to show a client.
//   - Queue and Approvers: the daemon's approvals queue, and who may
//     decide this channel's requests (a channel that takes answers itself,
//     like Discord's "yes CODE", decides through Queue.Decide in their
//     name).
//   - Chat: a turn of claw's own agent for this channel (nil when the
//     channel has none).
//   - Estop: whether the emergency stop is engaged (the broker refuses
//     every action while it is; a channel may say so sooner).
//   - Log: the daemon's logger.
//   - Deliver: sends a [Message] to a session of another channel that
//     takes them (a [Receiver], like the bridge).
//
// # How a channel acts
//
// [Env.Call] runs a tool call for a user: the user goes into the
// receipts (broker.WithUser) next to the channel's name, and the call
// takes the one path (gate, approval, sandbox, receipts). [Env.Permission]
// relays a client's question about a tool of its own to the approvers and
// records it (broker.Relay). [Env.Chat] runs a turn of claw's agent for a
// user, whose tool calls are receipted the same way. A denial reads
// [Denial]: "denied by policy: <rule ids>".
//
// A channel implements [Channel]: Run serves until its context ends.
package channel

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/toolkind"
)

// Channel is one channel claw serve runs.
type Channel interface {
	// Run serves until ctx ends, then returns nil. An error means the
	// channel could not start (or failed for good); claw serve stops.
	Run(ctx context.Context) error
}

// Message is a message for a session of a channel that has sessions (the
// bridge's inbound_message).
type Message struct {
	RequestID string         `json:"request_id"`
	Content   string         `json:"content"`
	Meta      map[string]any `json:"meta,omitempty"`
}

// Receiver is a channel that takes messages for its sessions.
type Receiver interface {
	Deliver(ctx context.Context, session string, m Message) error
}

// DeliverFunc sends m to a session of the channel named to; an error
// wrapping ErrNoSuchChannel means no running channel of that name takes
// messages.
type DeliverFunc func(ctx context.Context, to, session string, m Message) error

// ErrNoSuchChannel is returned by a DeliverFunc for a channel that is not
// running or takes no messages.
var ErrNoSuchChannel = errors.New("no such channel")

// ChatFunc runs one turn of claw's own agent for user in conversation
// and returns the reply. Its tool calls are receipted under the channel
// and user.
type ChatFunc func(ctx context.Context, user, conversation, text string) (string, error)

// Env is what claw serve gives a channel.
type Env struct {
	Name      string
	Broker    *broker.Broker
	Tools     []tool.Spec
	Autonomy  string
	Queue     *approvals.Queue
	Approvers []string
	Chat      ChatFunc
	Estop     func() bool
	Log       *slog.Logger
	// Deliver sends a message to a session of another channel (a
	// Discord message for a bridge session); nil when nothing takes
	// messages.
	Deliver DeliverFunc
}

// Call runs one tool call for user through the channel's broker. Every
// attempt leaves receipts naming the channel and the user, including a
// call to an unknown tool or with arguments that do not decode.
func (e *Env) Call(ctx context.Context, user, conversation, name string, args json.RawMessage) tool.Result {
	return e.Broker.Agent().Invoke(broker.WithUser(ctx, user), conversation, tool.Call{Name: name, Arguments: args})
}

// Permission is a client's question about a tool of its own.
type Permission struct {
	Tool      string
	Args      map[string]any
	Rationale string
}

// Permission asks the channel's approvers whether the client may run a
// tool of its own, and records the question and the answer. It reports
// allow only when an approver approved in time; a rejection, a timeout,
// nobody to ask, or an engaged emergency stop are a deny.
func (e *Env) Permission(ctx context.Context, user, conversation string, p Permission) (allow bool, o *broker.Outcome, err error) {
	args := map[string]any{"tool": p.Tool, "args": p.Args}
	if p.Rationale != "" {
		args["rationale"] = p.Rationale
	}
	out, err := e.Broker.Relay(broker.WithUser(ctx, user), gate.Action{Tool: toolkind.Kind("permission:" + p.Tool), Args: args}, conversation)
	if out == nil {
		return false, nil, err
	}
	return err == nil && out.Status == broker.StatusOK, out, err
}

// Denial is what a channel answers for a denied call: "denied by policy:
// <rule ids>" (comma separated), or "" when r is not a denial.
func Denial(r tool.Result) string {
	if r.Status != broker.StatusDenied {
		return ""
	}
	return "denied by policy: " + strings.Join(r.Rules, ", ")
}

// ClaudeTools is the catalog as the Anthropic Messages API takes it: a
// JSON array of {"name","description","input_schema"}.
func ClaudeTools(tools []tool.Spec) json.RawMessage {
	type t struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	out := make([]t, 0, len(tools))
	for _, s := range tools {
		out = append(out, t{string(s.Name), s.Description, s.Schema()})
	}
	b, _ := json.Marshal(out)
	return b
}
