package broker

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// delegating runs child, as a delegate tool would, with the delegation
// ask (its parent action filled in) in ctx.
func delegating(ask Delegation, child func(ctx context.Context)) ToolFunc {
	return func(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
		ask.ParentAction = ActionIDFrom(ctx)
		child(WithDelegation(ctx, ask))
		return json.RawMessage(`{}`), nil
	}
}

// childOutcome is the status, the decision receipt and every receipt of
// one action of a sub-agent; all of them must carry the parent action.
func childOutcome(t *testing.T, r *rig, ctx context.Context, a gate.Action, parent string) (string, receipts.Body) {
	t.Helper()
	out, err := r.b.Invoke(ctx, a, "")
	if err != nil {
		t.Fatalf("%s: %v", a.Tool, err)
	}
	bs := r.bodies(t, out.ActionID)
	for _, b := range bs {
		if b.ParentAction != parent || parent == "" || b.V != receipts.Version {
			t.Fatalf("%s: %s receipt without parent_action %q: %+v", a.Tool, b.Type, parent, b)
		}
	}
	return out.Status, bs[0]
}

// TestDelegationNeverWidens: a sub-agent asking for full autonomy under a
// supervised parent is decided at supervised; its tools are narrowed to
// the ones it was given; its own delegate call is denied (depth); and
// every receipt of its actions names the parent action.
func TestDelegationNeverWidens(t *testing.T) {
	r := newRig(t, "supervised", &fixedApprover{answer: Answer{Result: "approved", By: "alice"}})
	var parent string
	type seen struct {
		status string
		body   receipts.Body
	}
	got := map[string]seen{}
	r.b.cfg.InProcess = map[toolkind.Kind]ToolFunc{
		"time": func(context.Context, map[string]any) (json.RawMessage, error) { return json.RawMessage(`{}`), nil },
		"delegate": delegating(Delegation{Autonomy: "full", ToolsAllow: []string{"time", "delegate"}}, func(ctx context.Context) {
			parent = ActionIDFrom(ctx)
			if r.b.Autonomy(ctx) != "supervised" {
				t.Errorf("sub-agent autonomy %q, want supervised", r.b.Autonomy(ctx))
			}
			for _, a := range []gate.Action{
				{Tool: "time", Args: map[string]any{}},
				{Tool: "file_read", Args: map[string]any{"path": "a.txt"}},
				{Tool: "delegate", Args: map[string]any{"task": "deeper"}},
			} {
				s, b := childOutcome(t, r, ctx, a, parent)
				got[string(a.Tool)] = seen{s, b}
			}
		}),
	}
	out, err := r.b.Invoke(context.Background(), gate.Action{Tool: "delegate", Args: map[string]any{"task": "look", "autonomy": "full"}}, "")
	if err != nil || out.Status != StatusOK {
		t.Fatalf("delegate: %v %+v", err, out)
	}
	if parent != out.ActionID {
		t.Fatalf("the sub-agent saw parent %q, the delegate action is %q", parent, out.ActionID)
	}
	for _, b := range r.bodies(t, out.ActionID) {
		if b.ParentAction != "" {
			t.Fatalf("the delegate action is its own child: %+v", b)
		}
	}
	want := map[string]struct{ status, rule string }{
		"time":      {StatusOK, ""},
		"file_read": {StatusDenied, RuleToolNotAllowed},
		"delegate":  {StatusDenied, RuleDelegateDepth},
	}
	for tool, w := range want {
		g := got[tool]
		if g.status != w.status || g.body.Decision == nil || g.body.Decision.Autonomy != "supervised" ||
			(w.rule != "" && !slices.Contains(g.body.Decision.Reasons, w.rule)) {
			t.Errorf("%s: status %q decision %+v, want %s (%s) at supervised", tool, g.status, g.body.Decision, w.status, w.rule)
		}
	}
}

// TestDelegationNarrowerAutonomyDenies: a write the full-autonomy parent
// is allowed is denied to its readonly sub-agent.
func TestDelegationNarrowerAutonomyDenies(t *testing.T) {
	r := newRig(t, "full", nil)
	write := gate.Action{Tool: "file_write", Args: map[string]any{"path": "a.txt", "content": "x"}}
	d, err := r.b.cfg.Gate.Decide(context.Background(), write, gate.Context{Autonomy: "full", Workspace: r.ws, Cwd: r.ws})
	if err != nil || d.Decision != gate.Allow {
		t.Fatalf("the parent's write: %v %+v, want allow", err, d)
	}
	var status string
	var body receipts.Body
	r.b.cfg.InProcess = map[toolkind.Kind]ToolFunc{"delegate": delegating(Delegation{Autonomy: "readonly"}, func(ctx context.Context) {
		status, body = childOutcome(t, r, ctx, write, ActionIDFrom(ctx))
	})}
	out, err := r.b.Invoke(context.Background(), gate.Action{Tool: "delegate", Args: map[string]any{"task": "write", "autonomy": "readonly"}}, "")
	if err != nil || out.Status != StatusOK {
		t.Fatalf("delegate: %v %+v", err, out)
	}
	if status != StatusDenied || body.Decision.Autonomy != "readonly" || body.ParentAction != out.ActionID {
		t.Fatalf("the sub-agent's write: %s %+v, want denied at readonly under %s", status, body, out.ActionID)
	}
}

// TestNarrower: the narrower autonomy and tools of two, an unknown
// autonomy as readonly and nil as "no limit".
func TestNarrower(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"supervised", "full", "supervised"}, {"full", "readonly", "readonly"}, {"full", "", "full"},
		{"", "supervised", "supervised"}, {"full", "root", "readonly"}, {"readonly", "full", "readonly"},
	} {
		if got := narrowerAutonomy(c.a, c.b); got != c.want {
			t.Errorf("narrowerAutonomy(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
	if got := narrowerTools([]string{"a", "b"}, []string{"b", "c"}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("narrowerTools = %v, want [b]", got)
	}
	if got := narrowerTools(nil, []string{"c"}); !slices.Equal(got, []string{"c"}) {
		t.Errorf("narrowerTools(nil, [c]) = %v", got)
	}
	if got := narrowerTools([]string{"a"}, []string{"c"}); got == nil || len(got) != 0 {
		t.Errorf("disjoint lists give %v, want an empty, not nil, list", got)
	}
}

// TestDelegationEstop: the emergency stop reaches a sub-agent: its action
// in flight is stopped (receipted under the parent action), and so is the
// delegate call, whose context the sub-agent's turn runs in.
func TestDelegationEstop(t *testing.T) {
	r := newRig(t, "full", nil)
	var (
		cause  error
		status string
	)
	r.b.cfg.InProcess = map[toolkind.Kind]ToolFunc{
		// the sub-agent's long action: the stop is engaged while it runs
		"time": func(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
			if err := os.WriteFile(r.b.cfg.EstopFile, nil, 0o600); err != nil {
				return nil, err
			}
			select {
			case <-ctx.Done():
			case <-time.After(30 * time.Second):
			}
			return nil, ctx.Err()
		},
		"delegate": delegating(Delegation{}, func(ctx context.Context) {
			status, _ = childOutcome(t, r, ctx, gate.Action{Tool: "time", Args: map[string]any{}}, ActionIDFrom(ctx))
			cause = context.Cause(ctx)
		}),
	}
	out, err := r.b.Invoke(context.Background(), gate.Action{Tool: "delegate", Args: map[string]any{"task": "t"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if status != StatusEstop || !errors.Is(cause, ErrEstop) || out.Status != StatusEstop {
		t.Fatalf("the sub-agent's action %q, its context's end %v, the delegate call %q; want the estop in all", status, cause, out.Status)
	}
}

// TestNarrowAndToolsAllow: an external agent's config narrows its
// delegation without nesting it, and the broker reports the tools the
// channel and the delegation leave.
func TestNarrowAndToolsAllow(t *testing.T) {
	r := newRig(t, "full", nil)
	r.b.cfg.ToolsAllow = []string{"shell", "file_read", "file_write"}
	ctx := WithDelegation(context.Background(), Delegation{ParentAction: "p", Autonomy: "supervised", ToolsAllow: []string{"shell", "file_read", "time"}})
	d, _ := DelegationFrom(ctx)
	d = d.Narrow("readonly", []string{"file_read", "time"})
	if d.Autonomy != "readonly" || !slices.Equal(d.ToolsAllow, []string{"file_read", "time"}) || d.Depth() != 1 {
		t.Errorf("Narrow: %+v", d)
	}
	if wider := d.Narrow("full", nil); wider.Autonomy != "readonly" || !slices.Equal(wider.ToolsAllow, d.ToolsAllow) {
		t.Errorf("Narrow widened: %+v", wider)
	}
	ctx = context.WithValue(ctx, delegationKey{}, d)
	if got := r.b.ToolsAllow(ctx); !slices.Equal(got, []string{"file_read"}) {
		t.Errorf("ToolsAllow = %v, want [file_read]", got)
	}
	if got := r.b.ToolsAllow(context.Background()); !slices.Equal(got, r.b.cfg.ToolsAllow) {
		t.Errorf("ToolsAllow without a delegation = %v", got)
	}
}
