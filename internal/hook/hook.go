package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/redact"
)

// Format is the agent whose hook protocol is spoken. It is also the
// channel recorded in receipts.
type Format string

// The agents claw can guard.
const (
	ClaudeCode Format = "claude-code"
	Codex      Format = "codex"
)

// DefaultDeadline bounds one hook run, from start to answer. It must stay
// well under the agent's own hook timeout: a hook the agent kills is a
// hook that failed open.
const DefaultDeadline = 5 * time.Second

// Exit codes of a hook run. Both agents treat exit 2 as "block"; any other
// non-zero status would let the tool run, so the hook never uses one.
const (
	ExitAnswered = 0
	ExitBlock    = 2
)

// Rule ids the hook itself decides with, in addition to the gate's.
const (
	ReasonUnknownTool  = "hook.unknown_tool"
	ReasonInvalidInput = "hook.invalid_input"
	ReasonDeadline     = "hook.deadline"
	ReasonCannotAsk    = "hook.cannot_ask"
	ReasonPassphrase   = "hook.passphrase_as_ask"
	ReasonTrustedTool  = "hook.trusted_tool"
	// ReasonToolNotAllowed is the broker's rule for a tool outside
	// tools_allow.
	ReasonToolNotAllowed = broker.RuleToolNotAllowed
)

// OutcomeDelegated is the outcome status of an action the hook let the
// agent run (or ask about) itself (see [broker.StatusDelegated]).
const OutcomeDelegated = broker.StatusDelegated

// Guard is what a decision needs: the real gate, the receipt log and the
// context the gate judges in. Decisions and receipts go through the
// broker; the hook only translates the agent's wire format.
type Guard struct {
	Gate      *gate.Engine
	Log       *broker.Log
	Autonomy  string
	Workspace string // canonical
	Home      string // the user's home, for ~
	EstopFile string
	// Trusted names agent tools that have no claw equivalent and that the
	// user chose to allow (claw hook --trust-tool): bookkeeping tools like
	// TodoWrite. They are allowed with rule hook.trusted_tool, the opt-in
	// is written into the receipt, and the emergency stop still denies
	// them. Tools that map to claw actions are always judged by the gate.
	Trusted map[string]bool
	// Redact removes secrets from text that goes into receipts
	// (redact.String when nil). Answers and errors always go through
	// redact.String.
	Redact func(string) string
	// ParentAction, when set, is the claw action that started the agent
	// (a delegate call): every receipt names it.
	ParentAction string
	// ToolsAllow, when not nil, lists the only claw tools the agent's
	// calls may map to; any other is denied (rule
	// channel.tool_not_allowed).
	ToolsAllow []string
}

// Verdict is the combined decision for one event.
type Verdict struct {
	// Decision is claw's strictest decision over the event's actions:
	// allow, ask, passphrase or deny.
	Decision string
	// Answer is what the agent is told: allow, ask or deny.
	Answer  string
	Risk    string
	Reasons []gate.Reason
	// ActionIDs are the receipts' action ids, one per action.
	ActionIDs []string
}

var rank = map[string]int{gate.Allow: 0, gate.Ask: 1, gate.Passphrase: 2, gate.Deny: 3}
var riskRank = map[string]int{"low": 0, "medium": 1, "high": 2, "critical": 3}

// Decide judges ev through the broker ([broker.Broker.Hand]): each
// action is decided by the gate; then the answer is worked out, and
// every action's decision receipt and an outcome receipt that says what
// the agent was told ("denied", or [OutcomeDelegated] when the agent may
// run it or ask about it) are written in one commit
// ([broker.Broker.CloseAll]). All of it is durable before Decide
// returns. An error means no verdict: the caller must block.
func (g *Guard) Decide(ctx context.Context, f Format, ev *Event) (Verdict, error) {
	return g.DecideWithin(ctx, ctx, f, ev, nil)
}

// DecideWithin is Decide with the decision bounded by ctx and its
// receipts by rctx (which ends later), so that a decision cut short by
// ctx is still recorded as blocked. claim, when not nil, is called once
// the answer is known and before it is recorded: false means the caller
// has already told the agent "blocked" (its deadline passed), and the
// receipts then say so instead of the answer nobody will see.
func (g *Guard) DecideWithin(ctx, rctx context.Context, f Format, ev *Event, claim func() bool) (Verdict, error) {
	b := broker.New(broker.Config{Gate: g.Gate, Log: g.Log, Autonomy: g.Autonomy, Workspace: g.Workspace, Home: g.Home,
		Channel: string(f), EstopFile: g.EstopFile, Redact: g.redact(), ToolsAllow: g.ToolsAllow})
	cwd := g.Workspace
	if ev.Cwd != "" {
		cwd = canonical(ev.Cwd)
	}
	calls := Map(ev)
	if len(calls) == 0 {
		return Verdict{}, errors.New("the tool call maps to no action")
	}
	var done []*broker.Handoff
	v := Verdict{Decision: gate.Allow, Risk: "low"}
	for _, c := range calls {
		x := broker.External{Action: c.Action, Conversation: clip(ev.SessionID, 128), Cwd: cwd, Summary: summary(ev.ToolName, c.Action),
			ParentAction: g.ParentAction}
		if c.Unknown {
			x.Decide = func(estop bool) (gate.Decision, []string) { return g.unknown(ev.ToolName, estop) }
		}
		h, err := b.Hand(ctx, x)
		done = append(done, h)
		if err != nil {
			// Recorded as a deny; the run blocks with the reason.
			return Verdict{}, errors.Join(err, b.CloseAll(rctx, done, false, "blocked: "+err.Error()))
		}
		d := h.Decision
		v.ActionIDs = append(v.ActionIDs, h.ActionID)
		if rank[d.Decision] > rank[v.Decision] {
			v.Decision = d.Decision
		}
		if riskRank[d.Risk] > riskRank[v.Risk] {
			v.Risk = d.Risk
		}
		v.Reasons = append(v.Reasons, d.Reasons...)
	}
	n := len(v.Reasons)
	v.Answer = answer(f, ev, &v)
	why := "denied with the rest of the tool call"
	if len(v.Reasons) > n {
		why = "denied: " + v.Reasons[n].ID
	}
	if claim != nil && !claim() {
		err := errors.New("no decision within the deadline")
		return Verdict{}, errors.Join(err, b.CloseAll(rctx, done, false, "blocked: "+err.Error()))
	}
	if err := b.CloseAll(rctx, done, v.Answer != gate.Deny, why); err != nil {
		return Verdict{}, err
	}
	return v, nil
}

// answer maps claw's decision to what the agent can do with it.
func answer(f Format, ev *Event, v *Verdict) string {
	switch v.Decision {
	case gate.Allow:
		return gate.Allow
	case gate.Passphrase, gate.Ask:
		msg := "claw needs a human to approve this action"
		if v.Decision == gate.Passphrase {
			msg = "claw needs the passphrase for this action; the agent can only ask for approval"
		}
		if f == Codex {
			v.Reasons = append(v.Reasons, gate.Reason{ID: ReasonCannotAsk, Severity: v.Risk, Msg: msg + ", and a Codex hook cannot ask"})
			return gate.Deny
		}
		if ev.PermissionMode == "bypassPermissions" || ev.PermissionMode == "dontAsk" {
			v.Reasons = append(v.Reasons, gate.Reason{ID: ReasonCannotAsk, Severity: v.Risk, Msg: msg + ", and permission mode " + ev.PermissionMode + " does not ask"})
			return gate.Deny
		}
		if v.Decision == gate.Passphrase {
			v.Reasons = append(v.Reasons, gate.Reason{ID: ReasonPassphrase, Severity: v.Risk, Msg: msg})
		}
		return gate.Ask
	}
	return gate.Deny
}

// unknown decides a tool claw has no equivalent for: never allowed, but
// for a tool the user trusts by name, an opt-in it returns as degraded.
func (g *Guard) unknown(name string, estop bool) (gate.Decision, []string) {
	d := gate.Decision{Decision: gate.Ask, Risk: "medium", PolicyDigest: g.Gate.Digest()}
	msg := fmt.Sprintf("claw does not know the tool %q", clip(name, 64))
	switch {
	case estop:
		d.Decision, d.Risk = gate.Deny, "critical"
		d.Reasons = append(d.Reasons, gate.Reason{ID: "estop", Severity: "critical", Msg: "the emergency stop is engaged"})
	case g.Trusted[name]:
		d.Decision, d.Risk = gate.Allow, "low"
		d.Reasons = append(d.Reasons, gate.Reason{ID: ReasonTrustedTool, Severity: "low", Msg: fmt.Sprintf("%q is trusted by the hook's --trust-tool", clip(name, 64))})
		return d, []string{"hook.trust_tool=" + clip(name, 64)}
	case g.Autonomy == "readonly":
		d.Decision = gate.Deny
		msg += "; readonly autonomy denies it"
	default:
		msg += "; a human must approve it"
	}
	d.Reasons = append(d.Reasons, gate.Reason{ID: ReasonUnknownTool, Severity: "medium", Msg: msg})
	return d, nil
}

// RecordLate writes a deny receipt for a call whose deadline passed
// before it was decided (the guard took that long to open), so that the
// block the agent was given leaves a trace.
func (g *Guard) RecordLate(ctx context.Context, f Format, raw []byte, ev *Event) error {
	b := broker.New(broker.Config{Gate: g.Gate, Log: g.Log, Autonomy: g.Autonomy, Channel: string(f), Redact: g.redact()})
	_, err := b.Refuse(ctx, broker.Refusal{Tool: "hook", Args: raw, Rule: ReasonDeadline, Msg: "blocked: no decision within the deadline", ParentAction: g.ParentAction,
		Conversation: clip(ev.SessionID, 128), Summary: fmt.Sprintf("%s: not decided within the deadline", clip(ev.ToolName, 64))})
	return err
}

// RecordInvalid writes a deny receipt for input that could not be decoded,
// so that a refused hook call leaves a trace too. The input itself is
// only summarised by its size and digest.
func (g *Guard) RecordInvalid(ctx context.Context, f Format, raw []byte, why error) error {
	b := broker.New(broker.Config{Gate: g.Gate, Log: g.Log, Autonomy: g.Autonomy, Channel: string(f), Redact: g.redact()})
	_, err := b.Refuse(ctx, broker.Refusal{Tool: "hook", Args: raw, Rule: ReasonInvalidInput, Msg: "denied: " + ReasonInvalidInput, ParentAction: g.ParentAction,
		Summary: fmt.Sprintf("invalid hook input (%d bytes): %s", len(raw), clip(why.Error(), 200))})
	return err
}

func (g *Guard) redact() func(string) string {
	if g.Redact != nil {
		return g.Redact
	}
	return redact.String
}

// summary is one line for the receipt: the agent's tool and what it acts on.
func summary(tool string, a gate.Action) string {
	return clip(clip(tool, 64)+": "+gate.Summary(a), 512)
}

// canonical resolves symlinks in an absolute directory when it exists.
func canonical(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// Runner is one hook invocation: read the event, decide within the
// deadline, answer in the agent's format. Nothing it does fails open.
type Runner struct {
	Format   Format
	Deadline time.Duration // DefaultDeadline when zero
	// Open loads the guard (config, gate, receipt log). It runs inside
	// the deadline; close is called when the run ends.
	Open func(ctx context.Context) (g *Guard, close func(), err error)
	// Go starts the decision on another goroutine, so that the deadline
	// is kept however long it takes; nil is a go statement. (claw serve
	// starts it on a goroutine whose stack has already grown.)
	Go func(func())

	// fault, when set, is called between the decision's stages ("open",
	// "decide") with the decision's context, so tests can inject a panic,
	// a delay or an error.
	fault func(ctx context.Context, stage string) error
}

type result struct {
	v   Verdict
	err error
}

// Run handles one hook call and returns the process exit status: 0 with
// an answer on stdout, or 2 (block) with the reason on stderr. The answer
// comes within the deadline. The decision must come within the deadline
// less a reserve (recordReserve); a call not decided by then is blocked,
// and the reserve is for writing the receipt that says so.
func (r *Runner) Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	d := r.Deadline
	if d <= 0 {
		d = DefaultDeadline
	}
	hard, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	soft, cancelSoft := context.WithTimeout(hard, d-recordReserve(d))
	defer cancelSoft()
	// The answer is claimed once: by the decision when it has one, or
	// here when the decision's time is up; the receipts say the answer
	// that was claimed.
	var claimed atomic.Int32 // 0 open, 1 the decision's, 2 blocked here
	claim := func() bool { return claimed.CompareAndSwap(0, 1) || claimed.Load() == 1 }
	ch := make(chan result, 1)
	start := r.Go
	if start == nil {
		start = func(f func()) { go f() }
	}
	start(func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res = result{err: fmt.Errorf("internal error: %v", p)}
				if os.Getenv("CLAW_HOOK_DEBUG") != "" {
					fmt.Fprintf(stderr, "%s\n", debug.Stack())
				}
			}
			ch <- res
		}()
		res.v, res.err = r.decide(soft, hard, stdin, claim)
	})
	res := r.wait(ctx, soft, hard, ch, &claimed, d)
	if res.err != nil {
		fmt.Fprintf(stderr, "claw: blocked: %s\n", oneLine(redact.String(res.err.Error())))
		return ExitBlock
	}
	out, err := render(r.Format, res.v)
	if err != nil {
		fmt.Fprintf(stderr, "claw: blocked: %s\n", err)
		return ExitBlock
	}
	if len(out) > 0 {
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "claw: blocked: failed to write the answer: %v\n", err)
			return ExitBlock
		}
	}
	return ExitAnswered
}

// wait returns the decision's result, or a block once its time is up. A
// block claimed here still waits, until the deadline, for the decision to
// record it; a decision that claimed its answer first is waited for until
// the deadline too (only its receipts are left to write).
func (r *Runner) wait(ctx, soft, hard context.Context, ch chan result, claimed *atomic.Int32, d time.Duration) result {
	select {
	case res := <-ch:
		return res
	case <-soft.Done():
	}
	late := result{err: fmt.Errorf("no decision within %s", d)}
	blocked := claimed.CompareAndSwap(0, 2)
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return result{err: fmt.Errorf("interrupted before a decision: %w", ctx.Err())}
	}
	if blocked {
		select {
		case <-ch: // the block is recorded, or could not be
		case <-hard.Done():
		}
		return late
	}
	select {
	case res := <-ch:
		return res
	case <-hard.Done():
		return late
	}
}

// recordReserve is the part of a hook's deadline kept for recording a
// block when the decision has not come: a tenth, at most half a second.
func recordReserve(d time.Duration) time.Duration {
	return min(d/10, 500*time.Millisecond)
}

// decide decodes the event and decides it within ctx, with its receipts
// within rctx (see Guard.DecideWithin); claim is the answer's claim.
func (r *Runner) decide(ctx, rctx context.Context, stdin io.Reader, claim func() bool) (Verdict, error) {
	raw, rerr := ReadInput(stdin)
	var ev *Event
	if rerr == nil {
		ev, rerr = Decode(raw)
	}
	if err := r.inject(ctx, "open"); err != nil {
		return Verdict{}, err
	}
	if r.Open == nil {
		return Verdict{}, errors.New("hook has no guard")
	}
	// The guard opens within the whole deadline: a call whose decision
	// time runs out while it opens is still recorded.
	g, closeGuard, err := r.Open(rctx)
	if err != nil {
		if rerr != nil {
			return Verdict{}, rerr
		}
		return Verdict{}, err
	}
	if closeGuard != nil {
		defer closeGuard()
	}
	if rerr != nil {
		if errors.Is(rerr, ErrInput) {
			if err := g.RecordInvalid(rctx, r.Format, raw, rerr); err != nil {
				return Verdict{}, errors.Join(rerr, err)
			}
		}
		return Verdict{}, rerr
	}
	if err := r.inject(ctx, "decide"); err != nil {
		return Verdict{}, err
	}
	if ctx.Err() != nil {
		err := fmt.Errorf("no decision within the deadline: %w", ctx.Err())
		return Verdict{}, errors.Join(err, g.RecordLate(rctx, r.Format, raw, ev))
	}
	// Once claimed, the verdict stands even if the decision's time ends
	// while it is recorded: the receipts say what the agent is told.
	return g.DecideWithin(ctx, rctx, r.Format, ev, claim)
}

func (r *Runner) inject(ctx context.Context, stage string) error {
	if r.fault == nil {
		return nil
	}
	return r.fault(ctx, stage)
}

// claudeOutput is Claude Code's PreToolUse answer (and Codex's deny).
type claudeOutput struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// render writes the verdict in the agent's format. Codex is told only
// about denials: it does not reliably honour allow or ask from a hook, so
// an allow is an empty answer, and an ask was already turned into a deny.
func render(f Format, v Verdict) ([]byte, error) {
	switch v.Answer {
	case gate.Allow, gate.Ask, gate.Deny:
	default:
		return nil, fmt.Errorf("no answer for decision %q", v.Decision)
	}
	if f == Codex && v.Answer == gate.Allow {
		return nil, nil
	}
	var o claudeOutput
	o.HookSpecificOutput.HookEventName = "PreToolUse"
	o.HookSpecificOutput.PermissionDecision = v.Answer
	o.HookSpecificOutput.PermissionDecisionReason = reasonText(v)
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// maxReason bounds the reason text shown to the agent.
const maxReason = 2000

// reasonText names the decision, the risk and each rule with its message,
// secrets redacted.
func reasonText(v Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "claw: %s (risk %s)", v.Decision, v.Risk)
	seen := map[string]bool{}
	for _, r := range v.Reasons {
		k := r.ID + "\x00" + r.Msg
		if seen[k] {
			continue
		}
		seen[k] = true
		fmt.Fprintf(&b, "; %s: %s", r.ID, r.Msg)
	}
	return clip(oneLine(redact.String(b.String())), maxReason)
}

// oneLine replaces control characters so a reason stays one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return ' '
		}
		return r
	}, s)
}

// CheckAnswer reports whether out (standard output), with exit status
// code, is an answer a Runner of format f could have given: exit 0 with a
// rendered decision (or nothing, a Codex allow), or exit 2 with nothing. It is how an answer decided
// elsewhere (by claw serve) is checked before it is passed on.
func CheckAnswer(f Format, code int, out string) error {
	switch code {
	case ExitBlock:
		if out != "" {
			return errors.New("a block with an answer")
		}
		return nil
	case ExitAnswered:
	default:
		return fmt.Errorf("exit status %d is not an answer", code)
	}
	if f == Codex && out == "" {
		return nil
	}
	var o claudeOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		return errors.New("not an answer of the agent's format")
	}
	// Only the bytes render writes: no key spelt otherwise, no field
	// more, no second line.
	if b, err := json.Marshal(o); err != nil || string(b)+"\n" != out {
		return errors.New("not an answer as claw writes it")
	}
	h := o.HookSpecificOutput
	switch {
	case h.HookEventName != "PreToolUse":
		return fmt.Errorf("answer for event %q", h.HookEventName)
	case f == Codex && h.PermissionDecision != gate.Deny:
		return fmt.Errorf("codex answer %q: only denials are printed", h.PermissionDecision)
	case h.PermissionDecision != gate.Allow && h.PermissionDecision != gate.Ask && h.PermissionDecision != gate.Deny:
		return fmt.Errorf("answer %q", h.PermissionDecision)
	}
	return nil
}
