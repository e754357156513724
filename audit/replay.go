package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/receipts"
)

// ReplayOptions say what to re-decide and under which policies.
type ReplayOptions struct {
	// Engine holds the candidate policy set (and the grants to apply).
	Engine *gate.Engine
	// Context is the context an action is re-decided in, built from what
	// its decision receipt recorded (autonomy, channel, conversation);
	// Workspace, Cwd and Home come from the candidate configuration.
	Context gate.Context
	// Since and Until bound the receipts' timestamps (zero: unbounded).
	Since, Until time.Time
}

// ReplayChange is one action whose decision differs under the candidate
// policies.
type ReplayChange struct {
	Seq         uint64   `json:"seq"`
	TS          string   `json:"ts"`
	ActionID    string   `json:"action_id"`
	Tool        string   `json:"tool"`
	Summary     string   `json:"summary"`
	Before      string   `json:"before"`
	After       string   `json:"after"`
	BeforeRules []string `json:"before_rules"`
	AfterRules  []string `json:"after_rules"`
}

// Key is the change as "before -> after".
func (c ReplayChange) Key() string { return c.Before + " -> " + c.After }

// Breaking reports whether an allow became a deny or a deny an allow.
func (c ReplayChange) Breaking() bool {
	return c.Before == gate.Allow && c.After == gate.Deny || c.Before == gate.Deny && c.After == gate.Allow
}

// ReplaySkip is a recorded decision that could not be re-decided, and why.
type ReplaySkip struct {
	Seq      uint64 `json:"seq"`
	ActionID string `json:"action_id"`
	Tool     string `json:"tool"`
	Summary  string `json:"summary"`
	Why      string `json:"why"`
}

// ReplayReport is what [Replay] found.
type ReplayReport struct {
	Decisions int            `json:"decisions"` // decision receipts in range
	Redecided int            `json:"redecided"`
	Unchanged int            `json:"unchanged"`
	Changes   []ReplayChange `json:"changes"`
	Counts    map[string]int `json:"counts"` // by "before -> after"
	Breaking  int            `json:"breaking"`
	Skipped   []ReplaySkip   `json:"skipped"`
	// Unreadable counts lines that did not parse (verify says more).
	Unreadable int `json:"unreadable"`
}

// Replay re-decides every action recorded in the receipt log dir under
// the candidate policies of opts, and reports each whose decision changes.
//
// An action is re-decided from its decision receipt: the canonical
// action's arguments (body version 2, secrets redacted), the autonomy,
// channel and conversation it was decided in, and whether the emergency
// stop was engaged (reason estop). Paths are canonicalised again against
// today's filesystem. An action that cannot be re-decided faithfully is
// listed in Skipped with the reason, never left out silently: a version 1
// receipt (no arguments kept), arguments too large to keep, or arguments
// from which a secret was redacted (the redacted form may decide
// differently from the original).
//
// Replay does not verify the log; run [Verify] for that.
func Replay(ctx context.Context, dir string, opts ReplayOptions) (*ReplayReport, error) {
	rep := &ReplayReport{Counts: map[string]int{}, Changes: []ReplayChange{}, Skipped: []ReplaySkip{}}
	err := receipts.Walk(ctx, dir, func(r receipts.Record) error {
		if r.Err != nil || r.Line == nil {
			rep.Unreadable++
			return nil
		}
		b := &r.Line.Decoded
		if b.Type != receipts.TypeDecision || b.Action == nil || b.Decision == nil {
			return nil
		}
		ts, err := b.Time()
		if err != nil || !opts.Since.IsZero() && ts.Before(opts.Since) || !opts.Until.IsZero() && ts.After(opts.Until) {
			return nil
		}
		rep.Decisions++
		skip := func(why string) {
			rep.Skipped = append(rep.Skipped, ReplaySkip{Seq: b.Seq, ActionID: b.ActionID, Tool: b.Action.Tool, Summary: b.Action.Summary, Why: why})
		}
		a, why := recordedAction(b)
		if why != "" {
			skip(why)
			return nil
		}
		c := opts.Context
		c.Autonomy, c.Channel, c.Conversation = b.Decision.Autonomy, b.Channel, b.Conversation
		c.Estop = slices.Contains(b.Decision.Reasons, "estop")
		d, derr := opts.Engine.Decide(ctx, a, c)
		if derr != nil {
			skip("the candidate policies could not decide: " + derr.Error())
			return nil
		}
		rep.Redecided++
		if d.Decision == b.Decision.Result {
			rep.Unchanged++
			return nil
		}
		ch := ReplayChange{Seq: b.Seq, TS: b.TS, ActionID: b.ActionID, Tool: string(a.Tool), Summary: b.Action.Summary,
			Before: b.Decision.Result, After: d.Decision, BeforeRules: b.Decision.Reasons, AfterRules: d.RuleIDs()}
		rep.Changes = append(rep.Changes, ch)
		rep.Counts[ch.Key()]++
		if ch.Breaking() {
			rep.Breaking++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to read receipt log %q: %w", dir, err)
	}
	return rep, nil
}

// recordedAction rebuilds the action a decision receipt recorded, or says
// why it cannot.
func recordedAction(b *receipts.Body) (gate.Action, string) {
	switch {
	case b.V < receipts.Version:
		return gate.Action{}, "recorded without its arguments (receipt version 1)"
	case b.Action.ArgsOmitted != "":
		return gate.Action{}, "arguments not kept (" + b.Action.ArgsOmitted + ")"
	case b.Action.ArgsRedacted:
		return gate.Action{}, "a secret was redacted from the arguments, so the recorded form may decide differently"
	case b.Action.Args == "":
		return gate.Action{}, "recorded without its arguments"
	}
	doc, _ := json.Marshal(struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}{b.Action.Tool, json.RawMessage(b.Action.Args)})
	a, err := gate.ParseAction(doc)
	if err != nil {
		return gate.Action{}, "recorded arguments do not parse: " + err.Error()
	}
	return a, ""
}

// WriteText prints the replay report for a person: every change with its
// rules, the counts by change, and what could not be re-decided.
func (r *ReplayReport) WriteText(w io.Writer) error {
	pf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	pf("replayed %d decisions: %d re-decided (%d unchanged, %d changed), %d could not be re-decided\n",
		r.Decisions, r.Redecided, r.Unchanged, len(r.Changes), len(r.Skipped))
	if len(r.Changes) > 0 {
		pf("changes:\n")
		for _, c := range r.Changes {
			pf("  seq %d  %s  %s  %s -> %s  [%s] -> [%s]\n", c.Seq, c.Tool, quoteSummary(c.Summary), c.Before, c.After,
				strings.Join(c.BeforeRules, ", "), strings.Join(c.AfterRules, ", "))
		}
		pf("counts:\n")
		keys := make([]string, 0, len(r.Counts))
		for k := range r.Counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			pf("  %s: %d\n", k, r.Counts[k])
		}
	}
	if len(r.Skipped) > 0 {
		pf("not re-decided:\n")
		for _, s := range r.Skipped {
			pf("  seq %d  %s  %s: %s\n", s.Seq, s.Tool, quoteSummary(s.Summary), s.Why)
		}
	}
	if r.Unreadable > 0 {
		pf("unreadable lines: %d (run 'claw audit verify')\n", r.Unreadable)
	}
	if r.Breaking > 0 {
		pf("BREAKING: %d actions changed between allow and deny\n", r.Breaking)
	} else {
		pf("no action changed between allow and deny\n")
	}
	return nil
}

// quoteSummary quotes a recorded summary for one line of text output,
// escaping control characters.
func quoteSummary(s string) string {
	const max = 80
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}
