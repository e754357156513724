package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/receipts"
)

// StatusDelegated is the outcome status of an action claw decided but
// another program runs (see [Broker.Hand]): claw did not run it and does
// not know how it ended. It is not an executed status, so an audit
// neither counts it as run nor warns that the action has no outcome.
const StatusDelegated = "delegated"

// External is an action another program runs after claw's answer: a
// tool call of an agent that runs its own tools (Claude Code and Codex,
// through their hooks).
type External struct {
	Action       gate.Action
	Conversation string
	// Cwd is the canonical directory the action runs in;
	// Config.Workspace when empty.
	Cwd string
	// Summary is the receipt's summary (gate.Summary of Action when
	// empty). Config.Redact removes secrets from it.
	Summary string
	// Decide, when set, decides instead of the gate, told whether the
	// emergency stop is engaged: for a call that maps to no action claw
	// knows. degraded names the opt-ins the decision rests on (a tool
	// trusted by name), written into the decision receipt.
	Decide func(estop bool) (d gate.Decision, degraded []string)
	// ParentAction is the claw action that started the program (a
	// delegate call), named in the receipts; empty for none.
	ParentAction string
}

// Handoff is an external action decided by [Broker.Hand]; its decision
// and outcome receipts are written together by [Broker.CloseAll].
type Handoff struct {
	ActionID string
	Decision gate.Decision

	ref      receipts.Ref
	action   receipts.Action
	decision receipts.Decision
}

// Hand decides x with the gate (or x.Decide) in the broker's context and
// returns the handoff, which the caller closes with [Broker.CloseAll]
// once it knows what the other program is told. Nothing is asked,
// nothing runs and nothing is written here: the other program runs the
// action, outside claw's sandbox, and only after its answer, which must
// wait for CloseAll. A decision other than allow, ask, passphrase or deny
// is recorded as a deny. When the gate could not decide, Hand returns the
// handoff with its deny and the gate's error.
func (b *Broker) Hand(ctx context.Context, x External) (*Handoff, error) {
	c := b.cfg
	estop := b.estopEngaged()
	cwd := x.Cwd
	if cwd == "" {
		cwd = c.Workspace
	}
	var (
		d        gate.Decision
		degraded []string
		gerr     error
	)
	if x.Decide != nil {
		d, degraded = x.Decide(estop)
	} else {
		gctx := gate.Context{Autonomy: c.Autonomy, Workspace: c.Workspace, Cwd: cwd, Home: c.Home, Channel: c.Channel, Estop: estop, Conversation: x.Conversation}
		d, gerr = c.Gate.DecideInput(ctx, gate.BuildInput(x.Action, gctx))
	}
	switch d.Decision {
	case gate.Allow, gate.Ask, gate.Passphrase, gate.Deny:
	default:
		d.Decision = gate.Deny
	}
	if c.ToolsAllow != nil && !slices.Contains(c.ToolsAllow, string(x.Action.Tool)) {
		d = notAllowed(d, x.Action.Tool)
	}
	summary := x.Summary
	if summary == "" {
		summary = gate.Summary(x.Action)
	}
	argsJSON, _ := json.Marshal(x.Action.Args)
	h := &Handoff{ActionID: receipts.NewActionID(), Decision: d}
	h.ref = receipts.Ref{ActionID: h.ActionID, Conversation: x.Conversation, Channel: c.Channel, ParentAction: x.ParentAction}
	h.action = receipts.Action{Tool: string(x.Action.Tool), ArgsSHA256: receipts.Digest(argsJSON), ActionSHA256: actionDigest(x.Action, d), Summary: c.Redact(summary)}
	h.decision = receipts.Decision{Result: d.Decision, Risk: d.Risk, Reasons: d.RuleIDs(), Autonomy: c.Autonomy,
		PolicyDigest: d.PolicyDigest, Degraded: degraded, Grant: d.Grant}
	if gerr != nil {
		return h, fmt.Errorf("the gate could not decide: %w", gerr)
	}
	return h, nil
}

// CloseAll writes the receipts of hs, the actions of one call of the
// other program, in one commit (one write, one fdatasync): the decision
// receipt of each, in order, then the outcome of each: "denied" when its
// decision was a deny (naming the rules), or when allowed is false (with
// why); otherwise [StatusDelegated], handed back to the channel's
// program. Nothing runs between a decision and its outcome: the program
// runs the actions only after claw's answer, which waits for CloseAll.
// An error wraps [ErrNoReceipt]: the receipts are not durable, and the
// call must be blocked.
func (b *Broker) CloseAll(ctx context.Context, hs []*Handoff, allowed bool, why string) error {
	as := make([]ended, len(hs))
	for i, h := range hs {
		o := receipts.Outcome{Status: StatusDelegated, Error: "handed back to " + h.ref.Channel + ", which runs it outside claw's sandbox"}
		switch {
		case h.Decision.Decision == gate.Deny:
			o = receipts.Outcome{Status: StatusDenied, Error: "denied: " + strings.Join(h.Decision.RuleIDs(), ", ")}
		case !allowed:
			o = receipts.Outcome{Status: StatusDenied, Error: b.cfg.Redact(why)}
		}
		as[i] = ended{ref: h.ref, action: h.action, decision: h.decision, outcome: o}
	}
	if _, err := b.cfg.Log.writeEnded(ctx, as); err != nil {
		return fmt.Errorf("%w: %v", ErrNoReceipt, err)
	}
	return nil
}

// Refusal is a call refused before it reaches the gate: input that could
// not be decoded (a hook's), a tool disabled because its definition
// changed since it was pinned (the MCP proxy's).
type Refusal struct {
	Tool         string // the tool the receipt names
	Args         []byte // the raw call, recorded as its digest only
	Summary      string // Config.Redact removes secrets from it
	Conversation string
	Rule         string // the reason id
	Msg          string // why, in the outcome receipt
	ParentAction string // the claw action that started the caller, if any
}

// Refuse records r as a denied action, a decision receipt (deny, risk
// high, reason r.Rule) and an outcome receipt (denied, r.Msg) in one
// commit, and returns its outcome. An error wraps [ErrNoReceipt]: the
// refusal stands, but its receipts could not be written.
func (b *Broker) Refuse(ctx context.Context, r Refusal) (*Outcome, error) {
	c := b.cfg
	if r.Rule == "" {
		return nil, errors.New("a refusal needs a rule id")
	}
	d := gate.Decision{Decision: gate.Deny, Risk: "high", PolicyDigest: c.Gate.Digest(),
		Reasons: []gate.Reason{{ID: r.Rule, Severity: "high", Msg: r.Msg}}}
	out := &Outcome{ActionID: receipts.NewActionID(), Status: StatusDenied, Decision: d, Err: errors.New(r.Msg)}
	ref := receipts.Ref{ActionID: out.ActionID, Conversation: r.Conversation, Channel: c.Channel, ParentAction: r.ParentAction}
	ra := receipts.Action{Tool: r.Tool, ArgsSHA256: receipts.Digest(r.Args), Summary: c.Redact(r.Summary)}
	rd := receipts.Decision{Result: gate.Deny, Risk: d.Risk, Reasons: d.RuleIDs(), Autonomy: c.Autonomy, PolicyDigest: d.PolicyDigest}
	o := receipts.Outcome{Status: StatusDenied, Error: c.Redact(r.Msg)}
	if _, err := c.Log.writeEnded(ctx, []ended{{ref: ref, action: ra, decision: rd, outcome: o}}); err != nil {
		return out, fmt.Errorf("%w: %v", ErrNoReceipt, err)
	}
	return out, nil
}
