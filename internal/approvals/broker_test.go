package approvals

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/broker/brokertest"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// TestBrokerThroughQueue takes an action that asks through the real gate
// and broker; a second client lists it, with its arguments and without
// the key planted in them, approves it over the unix socket, and the
// receipts record who approved which digest.
func TestBrokerThroughQueue(t *testing.T) {
	root := t.TempDir()
	eng, err := gate.New(context.Background(), gate.Options{Home: filepath.Join(root, "home"), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "receipts")
	log := brokertest.NewLog(t, dir)
	q := NewQueue(time.Minute)
	planted := "sk-ant-api03-" + strings.Repeat("PLANTED0123", 9)
	ran := false
	b := broker.New(broker.Config{Gate: eng, Log: log, Approver: q, Autonomy: "supervised", Workspace: root,
		Home: filepath.Join(root, "home"), Channel: "serve",
		InProcess: map[toolkind.Kind]broker.ToolFunc{"tool": func(context.Context, map[string]any) (json.RawMessage, error) {
			ran = true
			return json.RawMessage(`{"ok":true}`), nil
		}}})

	approver, err := NewClient("unix:"+newUnixServer(t, q), testToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			ps, err := approver.Pending(ctx)
			if err == nil && len(ps) > 0 {
				if args := string(ps[0].Args); !strings.Contains(args, `"args":{"q":"find [REDACTED]"}`) || strings.Contains(args, planted) {
					t.Errorf("pending args = %s", args)
				}
				if _, err := approver.Decide(ctx, ps[0].ID, "approve", "alice", ps[0].ActionSHA256); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	out, err := b.Invoke(ctx, gate.Action{Tool: "tool", Args: map[string]any{"server": "s", "name": "n", "args": map[string]any{"q": "find " + planted}}}, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if out.Decision.Decision != gate.Ask || out.Status != broker.StatusOK || !ran {
		t.Fatalf("outcome = %+v (ran %v)", out, ran)
	}
	var approval *receipts.Approval
	var digest string
	err = receipts.Walk(ctx, dir, func(rec receipts.Record) error {
		if rec.Err != nil {
			return rec.Err
		}
		bd := rec.Line.Decoded
		if bd.ActionID != out.ActionID {
			return nil
		}
		if bd.Action != nil {
			digest = bd.Action.ActionSHA256
		}
		if bd.Approval != nil {
			approval = bd.Approval
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if approval == nil || approval.By != "alice" || approval.Result != "approved" || approval.ActionSHA256 != digest || digest == "" {
		t.Fatalf("approval receipt = %+v, decision digest %q", approval, digest)
	}
}
