// Package broker is the single path every action takes:
//
//	gate.Decide → decision receipt (durable) → approval → executor.Run → outcome receipt
//
// Nothing runs unless its decision receipt is on disk first: an allowed
// action's sandbox is readied while the receipt is being written (the
// child started, or a worker started ahead taken, checked and handed
// the request; see executor.RunAfter), and the action runs only once
// the receipt is durable. A deny, a rejected or timed-out approval, an
// engaged emergency stop, a sandbox that cannot be applied, or a failure
// to write a receipt all mean the action does not run, and the receipts
// say why.
//
// # Use
//
//	b := broker.New(broker.Config{Gate: eng, Log: log, Approver: tty, Workspace: ws, ...})
//	out, err := b.Invoke(ctx, gate.Action{Tool: "shell", Args: map[string]any{"command": "ls"}}, "")
//
// Invoke returns an [Outcome] for every attempt; its Status says what
// happened. err is non-nil only when the broker itself failed (a receipt
// could not be written, the sandbox is unavailable); the action did not
// run then either.
//
// # The one recorder
//
// The broker writes every receipt of the log; no other package imports
// the writer (receipts/store), which [OpenLog] wraps as a [Log]. Its
// decision, approval and outcome writes are the broker's own; the state
// changes other entries record are methods of [Log] (EngageEstop,
// ClearEstop, AddGrant, RevokeGrant, PolicyLoaded, RotateKey,
// Checkpoint). An action another program runs after claw's answer (a
// hook's: Claude Code, Codex, an external agent of the delegate tool) is
// decided by [Broker.Hand] and recorded, its decision and outcome in one
// commit, by [Broker.CloseAll]; a call refused before the gate (input
// that does not decode, a disabled MCP tool) by [Broker.Refuse]. Every decision's action_sha256 is the
// one receipts/doc.go defines.
//
// # Grants
//
// With Config.Grants set, the broker gives the gate the store's active
// grants before each decision whenever the file changed, and offers an
// approver the narrowest useful grant for an ask ([Request].Proposal, in
// the grant syntax and in words). An [Answer] with Remember
// [RememberGrant] or [RememberConversation] stores that grant (scoped to
// the conversation for the latter), its grant_added receipt first. The
// decision receipt keeps the redacted canonical action (for `claw gate
// replay`) and the id of the grant that allowed it.
//
// # Guards
//
// Every wait for a human is bounded by Config.ApprovalTimeout; no answer
// in time is an approval receipt with result "timeout", never "rejected".
//
// A "passphrase" decision asks Config.Passphrase and checks the answer
// against Config.PassphraseHash (argon2id, see [HashPassphrase] and
// [VerifyPassphrase]; the derived keys are compared in constant time).
// The approval receipt says "approved" or "rejected" by "passphrase".
// Config.MaxFailures wrong answers in a row lock the gate for
// Config.Lockout; the count lives in Config.StateFile, so a restart does
// not reset it. No hash, a malformed hash, a locked gate or an unreadable
// state deny the action with the reasons passphrase.unset,
// passphrase.invalid_hash, passphrase.locked and
// passphrase.state_unreadable. The passphrase itself never reaches a
// receipt, a log or an error.
//
// While an action is in flight (from its decision receipt to its outcome
// receipt) it is registered with the emergency stop: when
// Config.EstopFile appears (inotify on its directory, a 100 ms poll as a
// backstop) its context is cancelled with [ErrEstop]; the executor kills
// its process tree, a wait for a human ends, and the outcome is "estop".
package broker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/idlegc"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// Statuses of an Outcome.
const (
	StatusOK            = "ok"       // ran, exit 0 (or the tool succeeded)
	StatusFailed        = "failed"   // ran, non-zero exit or tool error
	StatusTimeout       = "timeout"  // ran, killed at its deadline
	StatusKilled        = "killed"   // ran, killed by a signal
	StatusDenied        = "denied"   // the gate denied it
	StatusRejected      = "rejected" // a human said no
	StatusApprovalTO    = "approval_timeout"
	StatusNeedsApproval = "needs_approval" // ask or passphrase, and nobody could be asked
	StatusEstop         = "estop"          // the emergency stop is engaged
	StatusUnavailable   = "unavailable"    // the sandbox cannot be applied on this kernel
	StatusSetupFailed   = "setup_failed"   // the sandbox failed to start; nothing ran
	StatusNotFound      = "not_found"      // the program does not exist
	StatusError         = "error"          // the broker failed (e.g. a receipt could not be written)
)

// Answer is a human's reply to an approval request.
type Answer struct {
	Result string // approved, rejected, timeout
	By     string // who answered, e.g. "cli:tty" or a user name
	// Remember widens an approval beyond this one action: "" or
	// RememberOnce for this action only, RememberConversation for the
	// proposed scope within this conversation, RememberGrant for the
	// proposed scope (Request.Proposal) until the grant expires.
	Remember string
}

// Remember values of an Answer.
const (
	RememberOnce         = "once"
	RememberConversation = "conversation"
	RememberGrant        = "grant"
)

// Request is what an Approver is shown.
type Request struct {
	ActionID string
	Tool     toolkind.Kind
	Summary  string // sanitised, secrets redacted
	// Args is the action's arguments for a person to read: compact JSON
	// with sorted keys, secrets redacted by Config.Redact as in Summary
	// (and the values of arguments named like a secret, such as an
	// Authorization header, replaced), each string cut at MaxArgString
	// and the whole at most MaxArgs bytes. It is not escaped for a
	// terminal: an approver that shows it must escape it. It is for the
	// eye only: the action runs with its arguments whole, and
	// ActionSHA256 binds the approval to those.
	Args         json.RawMessage
	Decision     gate.Decision
	ActionSHA256 string // the approval binds to this digest
	// Proposal is the grant an approver may accept instead of a one-time
	// approval (nil: no grant can cover this action, or grants are off).
	Proposal *Proposal
}

// Approver asks a human. It must return an Answer with Result "timeout"
// (not an error) when nobody answered in time.
type Approver interface {
	Approve(ctx context.Context, r Request) (Answer, error)
}

// Sandbox holds the executor settings that do not come from the decision.
type Sandbox struct {
	MinLandlockABI int
	RunAs          string
	Timeout        time.Duration
	// ToolTimeouts overrides Timeout for the tools it names (the agent's
	// shell, http and other tool timeouts).
	ToolTimeouts map[string]time.Duration
	MaxOutput    int64
	Limits       executor.Limits
	HTTPPorts    []uint16
	Degraded     bool // explicit, loud opt-in; recorded in every receipt
	// Path is the PATH of shell actions (absolute directories, in
	// order), and PathRead the directories granted read-only for it
	// (the toolchains on it); empty Path keeps the executor's default.
	// File and http tools get neither.
	Path, PathRead []string
}

// Config wires a Broker.
type Config struct {
	Gate     *gate.Engine
	Log      *Log     // required: no receipts, no actions
	Approver Approver // nil: asks are answered "needs approval"
	Sandbox  Sandbox

	Autonomy  string
	Workspace string // canonical
	Home      string // the user's home, for ~
	Channel   string
	// EstopFile is checked before every action; when it exists the
	// action is blocked. While actions are in flight a watcher (inotify
	// on its directory, with a 100 ms poll as a backstop) cancels them
	// all when the file appears; the executor kills their process trees
	// and their outcome receipts say "estop".
	EstopFile string
	// ApprovalTimeout bounds every wait for a human (an approval or a
	// passphrase); 0 means DefaultApprovalTimeout. No answer in time is
	// recorded as an approval with result "timeout", never as a rejection.
	ApprovalTimeout time.Duration

	// Passphrase asks for the passphrase when the gate decides
	// "passphrase"; nil: such actions need a human and do not run.
	Passphrase PassphraseAsker
	// PassphraseHash is the argon2id PHC hash the answer is checked
	// against; empty: passphrase actions are denied (reason
	// passphrase.unset).
	PassphraseHash string
	// MaxFailures wrong passphrases in a row lock the passphrase gate for
	// Lockout (defaults DefaultMaxFailures and DefaultLockout). While it
	// is locked every passphrase action is denied (passphrase.locked).
	MaxFailures int
	Lockout     time.Duration
	// StateFile keeps the failure count and lockout across restarts
	// (mode 0600); empty keeps them in memory only.
	StateFile string
	// Now is the clock of the lockout; nil is time.Now.
	Now func() time.Time
	// OnDecision, when set, is told how long each gate decision took
	// (the daemon's decision latency histogram).
	OnDecision func(time.Duration)
	// Logger receives the receipt_written, tool_approved, tool_denied and
	// estop_triggered events; nil discards them. What an action did is in the receipts;
	// the log is for operators.
	Logger *slog.Logger
	// Redact removes secrets from text that goes into receipts.
	Redact func(string) string
	// InProcess runs the tools that need no sandbox child, by tool name:
	// time, memory_search (the memory database belongs to the broker's
	// side, not to the model's), and "tool" for an external (MCP) tool
	// whose call is forwarded by the caller. They take the same path as
	// every other action: gate, decision receipt, approval, outcome
	// receipt. A tool with neither a runner here nor an executor is an
	// error, and does not run.
	InProcess map[toolkind.Kind]ToolFunc
	// ToolsAllow, when not nil, lists the only tools the channel may
	// use: any other is denied (rule channel.tool_not_allowed) whatever
	// the gate decided, with its receipts like any denial.
	ToolsAllow []string

	// Grants is the grant store; nil: no grants apply and approvers are
	// offered none. The broker reloads it when the file changes, so a
	// grant added or revoked by another process applies at the next
	// action.
	Grants *grant.Store
	// GrantExpiry bounds the grants approvers accept (zero: the defaults).
	GrantExpiry grant.Expiry

	// Plugins resolves the plugin tools "plugin" actions call; nil: every
	// plugin call is denied (plugin.unavailable).
	Plugins PluginResolver

	// DelegateHosts names the hosts an external agent a "delegate"
	// action names may reach, for the gate to judge; nil: none.
	DelegateHosts DelegateHosts
}

// ToolFunc runs one in-process tool. Its result is the tool's JSON
// payload; an error is a tool failure (recorded, and given back to the
// model), not a broker failure.
type ToolFunc func(ctx context.Context, args map[string]any) (json.RawMessage, error)

// Outcome is what happened to one action.
type Outcome struct {
	ActionID string
	Status   string
	Decision gate.Decision
	Approval *Answer
	Result   *executor.Result // nil unless the action ran (or tried to)
	Err      error            // why it did not run, when it did not
}

// DefaultApprovalTimeout bounds a wait for a human when
// Config.ApprovalTimeout is 0.
const DefaultApprovalTimeout = 120 * time.Second

// Broker implements the one path.
type Broker struct {
	cfg      Config
	running  running
	state    stateGuard
	memState passphraseState // when Config.StateFile is empty
}

// New returns a Broker. It panics on a nil Gate or Log: those are wiring
// bugs, not conditions to run without.
func New(cfg Config) *Broker {
	if cfg.Gate == nil || cfg.Log == nil {
		panic("broker: Gate and Log are required")
	}
	if cfg.Redact == nil {
		cfg.Redact = Redact
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = DefaultApprovalTimeout
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = DefaultMaxFailures
	}
	if cfg.Lockout <= 0 {
		cfg.Lockout = DefaultLockout
	}
	return &Broker{cfg: cfg}
}

// ErrNoReceipt means a receipt could not be made durable; the action did
// not run.
var ErrNoReceipt = errors.New("receipt could not be written")

// Invoke takes one action through the path.
func (b *Broker) Invoke(ctx context.Context, a gate.Action, conversation string) (*Outcome, error) {
	return b.invoke(ctx, a, conversation, nil)
}

// Relay takes a question about an action claw does not run (a bridge
// client's permission request for one of its own tools) through the
// approval part of the path: a decision receipt "ask" with the rule
// channel.permission_request (or "deny" with estop while the emergency
// stop is engaged), the approver's answer in an approval receipt, and an
// outcome receipt: ok once approved (the answer is the client's to act
// on), denied otherwise. The gate is not asked: the action is not
// claw's, and claw's sandbox will not hold it. Outcome.Status says what
// to answer: StatusOK is allow, anything else deny.
func (b *Broker) Relay(ctx context.Context, a gate.Action, conversation string) (*Outcome, error) {
	return b.invoke(ctx, a, conversation, &permissionRequest)
}

// Confirm is [Broker.Relay] for a question claw itself asks a person
// rather than a channel's client (an SOP's approval step: go on?), with
// reason as the decision's reason instead of channel.permission_request.
func (b *Broker) Confirm(ctx context.Context, a gate.Action, conversation string, reason gate.Reason) (*Outcome, error) {
	return b.invoke(ctx, a, conversation, &reason)
}

// permissionRequest is the reason of a relayed question.
var permissionRequest = gate.Reason{ID: RulePermissionRequest, Severity: "medium", Msg: "a channel's client asks to run a tool of its own"}

// RulePermissionRequest is the rule id of a relayed question (see
// [Broker.Relay]); RuleToolNotAllowed denies a tool outside
// Config.ToolsAllow.
const (
	RulePermissionRequest = "channel.permission_request"
	RuleToolNotAllowed    = "channel.tool_not_allowed"
)

// relayDecision is the decision behind a relayed question.
func (b *Broker) relayDecision(estop bool, reason gate.Reason) gate.Decision {
	d := gate.Decision{Decision: gate.Ask, Risk: "unknown", PolicyDigest: b.cfg.Gate.Digest(),
		Reasons: []gate.Reason{reason}}
	if estop {
		d.Decision = gate.Deny
		d.Reasons = append(d.Reasons, gate.Reason{ID: "estop", Severity: "critical", Msg: "the emergency stop is engaged"})
	}
	return d
}

// notAllowed turns d into a denial of a tool the channel does not allow.
func notAllowed(d gate.Decision, tool toolkind.Kind) gate.Decision {
	d.Decision = gate.Deny
	d.Reasons = append(append([]gate.Reason(nil), d.Reasons...), gate.Reason{ID: RuleToolNotAllowed, Severity: "high",
		Msg: fmt.Sprintf("tool %q is not in this channel's tools_allow", tool)})
	return d
}

// invoke takes a through the path, one phase after another: decide,
// record (the decision receipt), approve, run and close (the outcome
// receipt); a deny, or an ask with nobody to ask, ends at the decision,
// recorded with its outcome in one commit. A relayed question (relay, its reason, not nil) skips the gate
// and the executor.
func (b *Broker) invoke(ctx context.Context, a gate.Action, conversation string, relay *gate.Reason) (*Outcome, error) {
	// The garbage of an action is collected once the process is idle
	// again (an agent waiting for its model), not in the next decision.
	idlegc.Begin()
	defer idlegc.End()
	x := invocation{b: b, c: &b.cfg, a: a, conversation: conversation, relay: relay}
	x.decide(ctx)
	if status, msg, ok := x.endsAtDecision(); ok {
		// Nothing is asked and nothing runs: the decision and its
		// outcome go in one commit.
		return x.out, x.recordEnded(ctx, status, msg)
	}
	if x.readyAhead() {
		return x.runAhead(ctx)
	}
	if err := x.record(ctx); err != nil {
		return x.out, err
	}
	// From here on the action is in flight: the emergency stop cancels it.
	ctx, done := b.track(ctx)
	defer done()
	if ok, err := x.approve(ctx); !ok {
		return x.out, err
	}
	r, err := x.run(ctx)
	if err != nil {
		x.out.Err = err
		return x.out, x.end(ctx, StatusError, err.Error())
	}
	return x.close(ctx, r)
}

// invocation is one action on its way through the path: what its phases
// share. c is the broker's Config, or a copy narrowed by a delegation.
type invocation struct {
	b            *Broker
	c            *Config
	a            gate.Action
	conversation string
	relay        *gate.Reason
	ref          receipts.Ref
	in           *gate.Input
	plugin       PluginCall
	estop        bool // the emergency stop was engaged when the gate looked
	argsJSON     []byte
	summary      string // redacted, as in the decision receipt
	actionSHA    string // what an approval binds to
	out          *Outcome
}

// decide is the first phase: who asks (the receipt's reference, a
// delegation's narrowing) and what the gate decides, narrowed to the
// channel's tools and the delegation depth; a relayed question is an ask
// without the gate. A gate error stays in the Outcome beside its decision
// (a deny), which is recorded like any other.
func (x *invocation) decide(ctx context.Context) {
	b, a, conversation, relay := x.b, x.a, x.conversation, x.relay
	id := receipts.NewActionID()
	x.ref = receipts.Ref{ActionID: id, Conversation: conversation, Channel: b.cfg.Channel, User: b.cfg.Redact(userLabel(UserFrom(ctx))),
		AutonomousRun: userLabel(agent.RunFrom(ctx))}
	if run, step := RunStepFrom(ctx); run != "" || step != "" {
		x.ref.Run, x.ref.Step = userLabel(run), userLabel(step)
	}
	del, delegated := DelegationFrom(ctx)
	if delegated {
		narrowed := b.cfg
		narrowed.Autonomy = narrowerAutonomy(narrowed.Autonomy, del.Autonomy)
		narrowed.ToolsAllow = narrowerTools(narrowed.ToolsAllow, del.ToolsAllow)
		x.c = &narrowed
		x.ref.ParentAction = userLabel(del.ParentAction)
	}
	c := x.c
	x.estop = b.estopEngaged() // anything there, or a stat that fails: engaged
	b.loadGrants()
	gctx := gate.Context{Autonomy: c.Autonomy, Workspace: c.Workspace, Cwd: c.Workspace, Home: c.Home, Channel: c.Channel, Estop: x.estop, Conversation: conversation}
	x.in = gate.BuildInput(a, gctx)
	if relay != nil {
		x.out = &Outcome{ActionID: id, Decision: b.relayDecision(x.estop, *relay)}
		return
	}
	if x.in.Kind == toolkind.Plugin {
		x.plugin = b.resolvePlugin(a, x.in)
	}
	if x.in.Kind == toolkind.Delegate {
		ResolveDelegate(c.DelegateHosts, a, x.in)
	}
	decideStart := time.Now()
	d, err := c.Gate.DecideInput(ctx, x.in)
	if c.OnDecision != nil {
		c.OnDecision(time.Since(decideStart))
	}
	if c.ToolsAllow != nil && !slices.Contains(c.ToolsAllow, string(a.Tool)) {
		d = notAllowed(d, a.Tool)
	}
	if delegated && x.in.Kind == toolkind.Delegate && del.depth >= MaxDelegationDepth {
		d = delegationDenial(d, del.depth)
	}
	x.out = &Outcome{ActionID: id, Decision: d, Err: err}
}

// record is the second phase: the decision receipt, made durable before
// anything else happens. When it cannot be written the action goes no
// further.
func (x *invocation) record(ctx context.Context) error {
	ra, rd := x.decisionReceipt()
	ent, err := x.c.Log.decision(ctx, x.ref, ra, rd)
	if err != nil {
		x.out.Status, x.out.Err = StatusError, fmt.Errorf("%w: %v", ErrNoReceipt, err)
		return x.out.Err
	}
	x.logDecision(ent)
	return nil
}

// endsAtDecision reports whether the action ends at its decision, with
// nothing asked and nothing run, and with which status and message: a
// deny, or an ask with nobody to ask.
func (x *invocation) endsAtDecision() (status, msg string, ok bool) {
	d := x.out.Decision
	switch {
	case d.Decision == gate.Deny && x.estop:
		return StatusEstop, "emergency stop is engaged", true
	case d.Decision == gate.Deny:
		return StatusDenied, "denied: " + strings.Join(d.RuleIDs(), ", "), true
	case d.Decision == gate.Ask && x.c.Approver == nil:
		x.out.Err = errors.New("this action needs approval and nobody could be asked")
		return StatusNeedsApproval, x.out.Err.Error(), true
	}
	return "", "", false
}

// recordEnded records an action that ends at its decision (see
// endsAtDecision), with nothing asked and nothing run: its decision
// receipt and its outcome receipt with status and msg, in one commit.
// When they cannot be written the outcome is an error, as when record
// fails.
func (x *invocation) recordEnded(ctx context.Context, status, msg string) error {
	ra, rd := x.decisionReceipt()
	ro := receipts.Outcome{Status: receiptStatus(status), Error: x.c.Redact(msg)}
	es, err := x.c.Log.writeEnded(ctx, []ended{{ref: x.ref, action: ra, decision: rd, outcome: ro}})
	if err != nil {
		x.out.Status, x.out.Err = StatusError, fmt.Errorf("%w: %v", ErrNoReceipt, err)
		return x.out.Err
	}
	x.out.Status = status
	x.logDecision(es[0])
	x.b.logReceipt(x.out.ActionID, "outcome", es[1], slog.String("status", status))
	return nil
}

// decisionReceipt is what the decision receipt records.
func (x *invocation) decisionReceipt() (receipts.Action, receipts.Decision) {
	c, a, d := x.c, x.a, x.out.Decision
	x.argsJSON, _ = json.Marshal(a.Args)
	x.actionSHA = actionDigest(a, d)
	x.summary = c.Redact(gate.Summary(a))
	var degraded []string
	if c.Sandbox.Degraded {
		degraded = []string{"sandbox.unsafe_degraded"}
	}
	ra := receipts.Action{
		Tool:         string(a.Tool),
		ArgsSHA256:   receipts.Digest(x.argsJSON),
		ActionSHA256: x.actionSHA,
		Summary:      x.summary,
	}
	ra.Args, ra.ArgsRedacted, ra.ArgsOmitted = recordedArgs(a.Tool, x.argsJSON, c.Redact)
	rd := receipts.Decision{
		Result:       d.Decision,
		Risk:         d.Risk,
		Reasons:      d.RuleIDs(),
		Autonomy:     c.Autonomy,
		PolicyDigest: d.PolicyDigest,
		Degraded:     degraded,
		Grant:        d.Grant,
	}
	return ra, rd
}

func (x *invocation) logDecision(ent receipts.Entry) {
	d := x.out.Decision
	x.b.logReceipt(x.out.ActionID, "decision", ent, slog.String("tool", string(x.a.Tool)), slog.String("decision", d.Decision), slog.String("risk", d.Risk))
}

// approve is the third phase: a deny ends the action, an ask goes to the
// approver and a passphrase decision to the passphrase gate, each answer
// recorded before anything runs; an emergency stop engaged meanwhile ends
// it too. It reports whether the action may run. When it may not, the
// action is closed already, and err is non-nil only when a receipt could
// not be written.
func (x *invocation) approve(ctx context.Context) (bool, error) {
	d := x.out.Decision
	switch d.Decision {
	case gate.Passphrase:
		if ok, err := x.askPassphrase(ctx); !ok {
			return false, err
		}
	case gate.Ask:
		if ok, err := x.askApprover(ctx); !ok {
			return false, err
		}
	case gate.Allow:
	default:
		return false, x.end(ctx, StatusDenied, "unknown decision "+d.Decision)
	}
	// A human may have taken a while: the stop may have been engaged since
	// the gate looked.
	if estopped(ctx) || x.b.estopEngaged() {
		return false, x.end(ctx, StatusEstop, "emergency stop is engaged")
	}
	return true, nil
}

// request is what an approver (or the passphrase asker) is shown.
func (x *invocation) request() Request {
	d := x.out.Decision
	req := Request{ActionID: x.out.ActionID, Tool: x.a.Tool, Summary: x.summary, Decision: d, ActionSHA256: x.actionSHA}
	if d.Decision == gate.Ask || d.Decision == gate.Passphrase {
		req.Args = shownArgs(x.argsJSON, x.c.Redact)
	}
	if d.Decision == gate.Ask && x.relay == nil { // a relayed question is never granted ahead
		req.Proposal = x.b.propose(x.in)
	}
	return req
}

// askPassphrase is the approval of a passphrase decision; like approve,
// it reports whether the action may run.
func (x *invocation) askPassphrase(ctx context.Context) (bool, error) {
	g := x.b.passphraseGate(ctx, x.request())
	switch {
	case estopped(ctx):
		return false, x.end(ctx, StatusEstop, ErrEstop.Error())
	case g.deny != "":
		return false, x.deny(ctx, g.deny, g.msg)
	case g.answer == nil:
		x.out.Err = errors.New(g.msg)
		return false, x.end(ctx, StatusNeedsApproval, g.msg)
	}
	if err := x.recordApproval(ctx, *g.answer); err != nil {
		return false, err
	}
	switch g.answer.Result {
	case "approved":
		return true, nil
	case "timeout":
		x.out.Err = errors.New(g.msg)
		return false, x.end(ctx, StatusApprovalTO, g.msg)
	}
	x.out.Err = errors.New(g.msg)
	return false, x.end(ctx, StatusRejected, g.msg)
}

// askApprover is the approval of an ask, bounded by
// Config.ApprovalTimeout; like approve, it reports whether the action may
// run. An approval may store a grant (Answer.Remember).
func (x *invocation) askApprover(ctx context.Context) (bool, error) {
	c := x.c // an ask with no approver ended at its decision (endsAtDecision)
	req := x.request()
	actx, cancel := context.WithTimeout(ctx, c.ApprovalTimeout)
	ans, err := c.Approver.Approve(actx, req)
	expired := errors.Is(actx.Err(), context.DeadlineExceeded)
	cancel()
	if estopped(ctx) {
		return false, x.end(ctx, StatusEstop, ErrEstop.Error())
	}
	switch {
	case expired:
		// no answer in time, or one that came too late: a timeout,
		// never a rejection
		by := ans.By
		if by == "" || err != nil {
			by = "none"
		}
		ans = Answer{Result: "timeout", By: by}
	case err != nil:
		ans = Answer{Result: "timeout", By: "none"}
		x.out.Err = err
	case ans.Result != "approved" && ans.Result != "rejected" && ans.Result != "timeout":
		ans.Result = "rejected" // an answer that is not a yes is a no
	}
	if err := x.recordApproval(ctx, ans); err != nil {
		return false, err
	}
	switch ans.Result {
	case "approved":
		x.b.remember(ctx, req, ans, x.conversation)
		return true, nil
	case "timeout":
		return false, x.end(ctx, StatusApprovalTO, "approval timed out")
	}
	return false, x.end(ctx, StatusRejected, "rejected by "+ans.By)
}

// recordApproval writes the approval receipt of ans.
func (x *invocation) recordApproval(ctx context.Context, ans Answer) error {
	c, id := x.c, x.out.ActionID
	x.out.Approval = &ans
	ent, err := c.Log.approval(context.WithoutCancel(ctx), x.ref, receipts.Approval{By: ans.By, Channel: c.Channel, Result: ans.Result, ActionSHA256: x.actionSHA})
	if err != nil {
		x.out.Status, x.out.Err = StatusError, fmt.Errorf("%w: %v", ErrNoReceipt, err)
		return x.out.Err
	}
	ev := "tool_denied"
	if ans.Result == "approved" {
		ev = "tool_approved"
	}
	c.Logger.Info("tool "+strings.TrimPrefix(ev, "tool_"), "event", ev, "action_id", id, "tool", x.a.Tool, "result", ans.Result, "by", c.Redact(ans.By))
	x.b.logReceipt(id, "approval", ent)
	return nil
}

// ran is what the run phase hands the close phase.
type ran struct {
	spec  executor.Spec
	res   executor.Result
	err   error
	start time.Time
}

// run is the fourth phase: the action runs in process (a relayed
// question's answer, an in-process tool) or in the sandbox. An error is
// a sandbox spec that could not be built: nothing ran.
func (x *invocation) run(ctx context.Context) (ran, error) {
	c, a := x.c, x.a
	r := ran{start: time.Now()}
	if x.relay != nil {
		r.res = runInProcess(ctx, relayed, nil)
		return r, nil
	}
	if fn, ok := c.InProcess[a.Tool]; ok {
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if t := c.Sandbox.timeoutFor(a.Tool); t > 0 {
			tctx, cancel = context.WithTimeout(ctx, t)
		}
		r.res = runInProcess(context.WithValue(tctx, actionKey{}, x.out.ActionID), fn, a.Args)
		cancel()
		return r, nil
	}
	spec, err := x.sandboxSpec()
	if err != nil {
		return r, err
	}
	return x.execute(ctx, spec, nil), nil
}

// sandboxSpec is the executor's Spec of an action that runs in the
// sandbox: a plugin's, or a built-in tool's.
func (x *invocation) sandboxSpec() (executor.Spec, error) {
	if x.in.Kind == toolkind.Plugin {
		return x.b.pluginSpec(x.a, x.in, x.out.Decision, x.plugin)
	}
	return x.b.spec(x.a, x.in, x.out.Decision)
}

// execute runs spec in the sandbox, its child given the action once
// ready allows it (see executor.RunAfter).
func (x *invocation) execute(ctx context.Context, spec executor.Spec, ready func() error) ran {
	r := ran{spec: spec, start: time.Now()}
	r.res, r.err = executor.RunAfter(ctx, spec, ready)
	if r.err == nil && x.in.Kind == toolkind.Plugin {
		pluginResult(&r.res)
	}
	return r
}

// readyAhead reports whether the action's sandbox is readied while its
// decision receipt is written (see runAhead): an allowed action, asked of
// nobody, that runs in the sandbox. A plugin's is not: its spec checks
// that the plugin is still the one the gate judged, which stays right
// before it runs.
func (x *invocation) readyAhead() bool {
	_, inProcess := x.c.InProcess[x.a.Tool]
	return x.relay == nil && x.out.Decision.Decision == gate.Allow && !inProcess && x.in.Kind != toolkind.Plugin
}

// errNotCleared is what holds back an action's child when its decision
// receipt could not be written or approve ended it.
var errNotCleared = errors.New("the action was not cleared to run")

// runAhead takes an allowed action in the sandbox through record,
// approve, run and close, with its sandbox readied meanwhile: while the
// decision receipt is being made durable the executor starts the child,
// or takes a worker started ahead and checks that it fits, and it gives
// the child the action only once the receipt is durable and approve has
// let it run. A receipt that cannot be written, or an emergency stop,
// ends the action as in invoke, before anything ran; a spec that cannot
// be built, once the receipt is durable, as in run.
func (x *invocation) runAhead(ctx context.Context) (*Outcome, error) {
	recorded := make(chan error, 1)
	go func(ctx context.Context) { recorded <- x.record(ctx) }(ctx)
	// From here on the action is in flight: the emergency stop cancels it.
	ctx, done := x.b.track(ctx)
	defer done()
	var (
		once           sync.Once
		asked, cleared bool
		err            error
		start          time.Time
	)
	ready := func() error {
		asked = true
		once.Do(func() {
			if err = <-recorded; err == nil {
				cleared, err = x.approve(ctx)
			}
			start = time.Now()
		})
		if !cleared {
			return errNotCleared
		}
		return nil
	}
	spec, serr := x.sandboxSpec()
	if serr != nil {
		if ready() != nil {
			return x.out, err
		}
		x.out.Err = serr
		return x.out, x.end(ctx, StatusError, serr.Error())
	}
	r := x.execute(ctx, spec, ready)
	if asked { // the action's time runs from when it was let run
		r.start = start
	}
	if ready() != nil {
		return x.out, err
	}
	return x.close(ctx, r)
}

// close is the last phase: the outcome's status and its receipt, from
// what ran. err is non-nil when the broker failed: the sandbox was
// unavailable or the action could not start, or the receipt could not be
// written.
func (x *invocation) close(ctx context.Context, r ran) (*Outcome, error) {
	out, ms := x.out, time.Since(r.start).Milliseconds()
	out.Result = &r.res
	status, err := runStatus(ctx, r.res, r.err)
	out.Status = status
	if err != nil {
		out.Err = err
	}
	ro := receipts.Outcome{Status: receiptStatus(out.Status), MS: ms, Sandbox: outcomeSandbox(r.spec, r.res)}
	if out.Err == nil || out.Status == StatusNotFound || out.Status == StatusEstop {
		exit := r.res.ExitCode
		ro.Exit = &exit
		ro.OutputSHA256 = r.res.OutputSHA256
	}
	if out.Err != nil {
		ro.Error = x.c.Redact(out.Err.Error())
	} else if r.res.Tool != nil && r.res.Tool.Error != "" {
		ro.Error = x.c.Redact(r.res.Tool.Error)
	}
	ro.Egress = egressReceipt(r.res.Egress, x.c.Redact)
	if err := x.writeOutcome(ctx, ro); err != nil {
		return out, err
	}
	if out.Status == StatusUnavailable || out.Status == StatusError {
		return out, out.Err
	}
	return out, nil
}

// runStatus is the status of an action that ran (or tried to), and why
// it failed to run when it did.
func runStatus(ctx context.Context, res executor.Result, err error) (string, error) {
	var setup *executor.SetupError
	switch {
	case estopped(ctx):
		return StatusEstop, ErrEstop
	case errors.Is(err, executor.ErrUnavailable):
		return StatusUnavailable, err
	case errors.As(err, &setup):
		return StatusSetupFailed, err
	case errors.Is(err, executor.ErrNotFound):
		return StatusNotFound, err
	case err != nil:
		return StatusError, err
	case res.TimedOut:
		return StatusTimeout, nil
	case res.Signal != "":
		return StatusKilled, nil
	case res.Tool != nil && res.Tool.Error != "":
		return StatusFailed, nil
	case res.ExitCode != 0:
		return StatusFailed, nil
	}
	return StatusOK, nil
}

// outcomeSandbox is the outcome receipt's record of the sandbox an action
// ran in; nil when it ran in none.
func outcomeSandbox(spec executor.Spec, res executor.Result) *receipts.Sandbox {
	if res.Sandbox.LandlockABI <= 0 && !res.Sandbox.Seccomp {
		return nil
	}
	s := &receipts.Sandbox{LandlockABI: res.Sandbox.LandlockABI, Seccomp: res.Sandbox.Seccomp, Net: spec.Net.On() || spec.Net.Egress != nil}
	if res.Sandbox.Degraded {
		s.Degraded = append([]string{"degraded"}, res.Sandbox.Warnings...)
	}
	return s
}

// end closes an action that does not run: its outcome receipt with
// status and msg.
func (x *invocation) end(ctx context.Context, status, msg string) error {
	x.out.Status = status
	return x.writeOutcome(ctx, receipts.Outcome{Status: receiptStatus(status), Error: x.c.Redact(msg)})
}

// deny ends an action the broker itself denies (reason id, a reason the
// gate did not give).
func (x *invocation) deny(ctx context.Context, id, msg string) error {
	x.out.Decision.Reasons = append(append([]gate.Reason(nil), x.out.Decision.Reasons...), gate.Reason{ID: id, Severity: "high", Msg: msg})
	x.out.Err = errors.New(msg)
	return x.end(ctx, StatusDenied, id+": "+msg)
}

// writeOutcome makes the outcome receipt ro durable. A receipt that
// cannot be written joins out.Err.
func (x *invocation) writeOutcome(ctx context.Context, ro receipts.Outcome) error {
	ent, err := x.c.Log.outcome(context.WithoutCancel(ctx), x.ref, ro)
	if err != nil {
		x.out.Err = errors.Join(x.out.Err, fmt.Errorf("%w: %v", ErrNoReceipt, err))
		return x.out.Err
	}
	x.b.logReceipt(x.out.ActionID, "outcome", ent, slog.String("status", x.out.Status))
	return nil
}

// estopped reports whether ctx, an action in flight, was cancelled by
// the emergency stop.
func estopped(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrEstop) }

// relayed is what a relayed question "runs": nothing but the answer.
func relayed(context.Context, map[string]any) (json.RawMessage, error) {
	return json.RawMessage(`{"behavior":"allow"}`), nil
}

// maxInProcessPayload bounds what an in-process tool may return.
const maxInProcessPayload = 1 << 20

// runInProcess runs an in-process tool and shapes its result like an
// in-sandbox tool's, with the same output digests.
func runInProcess(ctx context.Context, fn ToolFunc, args map[string]any) (res executor.Result) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			res.Tool = &executor.ToolResult{Error: fmt.Sprintf("tool failed: %v", p)}
		}
		res.Duration = time.Since(start)
		out := res.Stdout
		if res.Tool != nil && res.Tool.Payload != nil {
			out = res.Tool.Payload
		}
		so := sha256.Sum256(out)
		se := sha256.Sum256(nil)
		res.StdoutSHA256, res.StderrSHA256 = hex.EncodeToString(so[:]), hex.EncodeToString(se[:])
		both := sha256.Sum256(append(so[:], se[:]...))
		res.OutputSHA256 = hex.EncodeToString(both[:])
		res.StdoutBytes = int64(len(out))
	}()
	payload, err := fn(ctx, args)
	switch {
	case err != nil:
		return executor.Result{ExitCode: 1, Tool: &executor.ToolResult{Error: err.Error()}}
	case len(payload) > maxInProcessPayload:
		return executor.Result{ExitCode: 1, Tool: &executor.ToolResult{Error: fmt.Sprintf("tool result larger than %d bytes", maxInProcessPayload)}}
	case !json.Valid(payload):
		return executor.Result{ExitCode: 1, Tool: &executor.ToolResult{Error: "tool result is not JSON"}}
	}
	return executor.Result{Tool: &executor.ToolResult{Payload: payload}}
}

// receiptStatus maps broker statuses to the receipt vocabulary
// (ok|failed|denied|timeout|killed|estop).
func receiptStatus(s string) string {
	switch s {
	case StatusOK, StatusFailed, StatusDenied, StatusTimeout, StatusKilled, StatusEstop:
		return s
	case StatusRejected, StatusApprovalTO, StatusNeedsApproval:
		return StatusDenied
	}
	return StatusFailed
}

// logReceipt logs that a receipt is durable.
func (b *Broker) logReceipt(actionID, typ string, e receipts.Entry, attrs ...slog.Attr) {
	args := []any{"event", "receipt_written", "action_id", actionID, "type", typ, "seq", e.Seq}
	for _, a := range attrs {
		args = append(args, a)
	}
	b.cfg.Logger.Info("receipt written", args...)
}

// timeoutFor is the wall timeout of a tool.
func (s Sandbox) timeoutFor(tool toolkind.Kind) time.Duration {
	if d, ok := s.ToolTimeouts[string(tool)]; ok && d > 0 {
		return d
	}
	return s.Timeout
}

// geteuid is os.Geteuid; tests replace it to build specs as root and as
// another user.
var geteuid = os.Geteuid

// spec builds the executor's Spec from the decision's sandbox plan.
func (b *Broker) spec(a gate.Action, in *gate.Input, d gate.Decision) (executor.Spec, error) {
	s := b.cfg.Sandbox
	spec := b.baseSpec(a.Tool, in, d)
	switch a.Tool {
	case toolkind.Shell:
		cmd, _ := a.Args["command"].(string)
		spec.Tool = executor.ToolShell
		spec.Argv = []string{"bash", "-c", cmd}
		if len(s.Path) > 0 {
			spec.Env = []string{"PATH=" + strings.Join(s.Path, ":")}
			spec.Read = slices.Concat(spec.Read, s.PathRead)
		}
		if len(d.Sandbox.Network.Hosts) > 0 {
			spec.Net.Egress = b.egressGrant(d)
		}
		return spec, nil
	case toolkind.FileRead, toolkind.FileList, toolkind.FileWrite, toolkind.EditFile:
		if len(in.Paths) != 1 {
			return spec, errors.New("file action without one canonical path")
		}
		args := map[string]any{}
		for k, v := range a.Args {
			args[k] = v
		}
		args["path"] = in.Paths[0] // the canonical path the gate judged
		raw, err := json.Marshal(args)
		if err != nil {
			return spec, err
		}
		spec.Tool, spec.Args = a.Tool, raw
		return spec, nil
	case toolkind.HTTP:
		// the tool checks the URL and every redirect against the list
		// the gate judged the URL with; nothing the model wrote widens it
		raw, err := executor.HTTPArgs(a.Args, configList(b.cfg.Gate, "allowed_domains"))
		if err != nil {
			return spec, err
		}
		spec.Tool, spec.Args = executor.ToolHTTP, raw
		spec.Net = executor.Net{Ports: httpPorts(s.HTTPPorts, in)}
		return spec, nil
	}
	return spec, fmt.Errorf("tool %q has no executor", a.Tool)
}

// baseSpec is the part of a Spec every sandboxed tool shares: the
// decision's sandbox plan and the configured limits.
func (b *Broker) baseSpec(tool toolkind.Kind, in *gate.Input, d gate.Decision) executor.Spec {
	s := b.cfg.Sandbox
	spec := executor.Spec{
		Cwd:            in.Context.Cwd,
		Read:           d.Sandbox.Read,
		Write:          d.Sandbox.Write,
		Protect:        d.Sandbox.Protect,
		Timeout:        s.timeoutFor(tool),
		MaxOutput:      s.MaxOutput,
		Limits:         s.Limits,
		MinLandlockABI: s.MinLandlockABI,
		Degraded:       s.Degraded,
	}
	if geteuid() == 0 {
		// run_as is for a claw that runs as root; any other claw's actions
		// keep its own uid (the executor cannot switch it)
		spec.RunAs = s.RunAs
	}
	return spec
}

// configList is a list of the gate's config (allowed_domains,
// allow_private_cidrs), as its policies see it; nil when it cannot be
// read, which the executor refuses.
func configList(g *gate.Engine, key string) []string {
	claw, _ := g.Data()["claw"].(map[string]any)
	cfg, _ := claw["config"].(map[string]any)
	list, _ := cfg[key].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		d, ok := v.(string)
		if !ok {
			return nil
		}
		out = append(out, d)
	}
	return out
}

func httpPorts(cfg []uint16, in *gate.Input) []uint16 {
	if len(cfg) == 0 {
		cfg = []uint16{80, 443}
	}
	return cfg
}

// actionDigest binds an approval to the exact action: tool, arguments and
// the sandbox plan it will run with.
func actionDigest(a gate.Action, d gate.Decision) string {
	b, _ := json.Marshal(struct {
		Tool    toolkind.Kind    `json:"tool"`
		Args    map[string]any   `json:"args"`
		Sandbox gate.SandboxPlan `json:"sandbox"`
	}{a.Tool, a.Args, d.Sandbox})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
