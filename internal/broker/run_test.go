package broker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/toolkind"
)

// TestRunStepRecorded: an action taken with WithRunStep has the run and
// step ids in every one of its receipts (version 2 bodies), a relayed
// question (an SOP's approval step) too, and an action without them has
// neither.
func TestRunStepRecorded(t *testing.T) {
	r := newRig(t, "supervised", &fixedApprover{answer: Answer{Result: "approved", By: "alice"}})
	r.b.cfg.InProcess = map[toolkind.Kind]ToolFunc{"time": func(context.Context, map[string]any) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	}}
	ctx := WithRunStep(context.Background(), "run-1", "list")
	for _, a := range []struct {
		action gate.Action
		relay  bool
		want   string
	}{
		{gate.Action{Tool: "time", Args: map[string]any{}}, false, "decision outcome:ok"},
		{gate.Action{Tool: "sop_approval", Args: map[string]any{"prompt": "go on?"}}, true, "decision approval:approved outcome:ok"},
	} {
		invoke := r.b.Invoke
		if a.relay {
			invoke = func(ctx context.Context, act gate.Action, conv string) (*Outcome, error) {
				return r.b.Confirm(ctx, act, conv, gate.Reason{ID: "sop.approval_step", Msg: "go on?"})
			}
		}
		out, err := invoke(ctx, a.action, "")
		if err != nil || out.Status != StatusOK {
			t.Fatalf("%s: %v %+v", a.action.Tool, err, out)
		}
		bs := r.bodies(t, out.ActionID)
		if got := types(bs); got != a.want {
			t.Fatalf("%s: receipts %s, want %s", a.action.Tool, got, a.want)
		}
		if a.relay && (bs[0].Decision == nil || strings.Join(bs[0].Decision.Reasons, ",") != "sop.approval_step") {
			t.Fatalf("the question's decision receipt lacks its reason: %+v", bs[0].Decision)
		}
		for _, b := range bs {
			if b.Run != "run-1" || b.Step != "list" || b.V != 2 {
				t.Fatalf("%s receipt without its run and step: %+v", b.Type, b)
			}
		}
	}
	out, err := r.b.Invoke(context.Background(), gate.Action{Tool: "time", Args: map[string]any{}}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range r.bodies(t, out.ActionID) {
		if b.Run != "" || b.Step != "" {
			t.Fatalf("a run or step out of nowhere: %+v", b)
		}
	}
}
