package channel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/channeltest"
	"github.com/clawsec/claw/receipts"
)

func kinds(bs []receipts.Body) string {
	var s []string
	for _, b := range bs {
		x := string(b.Type) + "/" + b.Channel + "/" + b.User
		if b.Decision != nil {
			x += ":" + b.Decision.Result
		}
		if b.Approval != nil {
			x += ":" + b.Approval.Result + ":" + b.Approval.By
		}
		if b.Outcome != nil {
			x += ":" + b.Outcome.Status
		}
		s = append(s, x)
	}
	return strings.Join(s, " ")
}

// TestCallRecordsChannelAndUser: an allowed call, a call to a tool the
// channel's tools_allow leaves out, and a call the gate denies all leave
// receipts naming the channel and the user, and a denial names its rules.
func TestCallRecordsChannelAndUser(t *testing.T) {
	rig := channeltest.New(t, "bridge", channeltest.Options{ToolsAllow: []string{"time", "shell"}})
	env, ctx := rig.Env, context.Background()

	r := env.Call(ctx, "alice", "c1", "time", json.RawMessage(`{}`))
	if r.IsError || r.Status != broker.StatusOK || !strings.Contains(r.Content, "2026-11-27") {
		t.Fatalf("time = %+v", r)
	}
	if got := kinds(rig.Action(t, r.ActionID)); got != "decision/bridge/alice:allow outcome/bridge/alice:ok" {
		t.Fatalf("time receipts = %s", got)
	}

	r = env.Call(ctx, "bob", "c1", "file_list", json.RawMessage(`{"path":"."}`))
	if got := channel.Denial(r); got == "" || !strings.Contains(got, broker.RuleToolNotAllowed) || !strings.HasPrefix(got, "denied by policy: ") {
		t.Fatalf("file_list outside tools_allow = %+v, denial %q", r, got)
	}
	if got := kinds(rig.Action(t, r.ActionID)); got != "decision/bridge/bob:deny outcome/bridge/bob:denied" {
		t.Fatalf("file_list receipts = %s", got)
	}

	r = env.Call(ctx, "bob", "c1", "shell", json.RawMessage(`{"command":"rm -rf /"}`))
	if got := channel.Denial(r); got == "" || strings.Contains(got, broker.RuleToolNotAllowed) {
		t.Fatalf("rm -rf / = %+v, denial %q", r, got)
	}
}

// TestPermission: a client's question is answered by an approver the
// channel names, recorded with its answer; another approver is refused,
// and with nobody to ask the answer is deny.
func TestPermission(t *testing.T) {
	rig := channeltest.New(t, "bridge", channeltest.Options{Approvers: []string{"cli:alice"}})
	env, ctx := rig.Env, context.Background()
	p := channel.Permission{Tool: "Bash", Args: map[string]any{"command": "make test"}, Rationale: "run the tests"}

	done := make(chan error, 1)
	go func() {
		for len(env.Queue.Pending()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if p := env.Queue.Pending()[0]; p.Requester != "bridge:s1" || p.Tool != "permission:Bash" {
			done <- fmt.Errorf("pending request %+v", p)
			return
		}
		if err := channeltest.ApproveNext(ctx, env.Queue, "approve", "cli:mallory"); !errors.Is(err, approvals.ErrNotAllowed) {
			done <- errors.New("mallory could decide: " + errString(err))
			return
		}
		done <- channeltest.ApproveNext(ctx, env.Queue, "approve", "cli:alice")
	}()
	allow, out, err := env.Permission(ctx, "s1", "s1", p)
	if err != nil || !allow {
		t.Fatalf("permission = %v, %+v, %v", allow, out, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	bs := rig.Action(t, out.ActionID)
	if got := kinds(bs); got != "decision/bridge/s1:ask approval/bridge/s1:approved:cli:alice outcome/bridge/s1:ok" {
		t.Fatalf("receipts = %s", got)
	}
	if bs[0].Action.Tool != "permission:Bash" || bs[0].Decision.Reasons[0] != broker.RulePermissionRequest {
		t.Fatalf("decision = %+v %+v", bs[0].Action, bs[0].Decision)
	}

	go channeltest.ApproveNext(ctx, env.Queue, "reject", "cli:alice")
	if allow, out, err := env.Permission(ctx, "s1", "s1", p); allow || err != nil || out.Status != broker.StatusRejected {
		t.Fatalf("rejected permission = %v, %+v, %v", allow, out, err)
	}

	nobody := channeltest.New(t, "bridge", channeltest.Options{})
	if allow, out, _ := nobody.Env.Permission(ctx, "s1", "s1", p); allow || out.Status != broker.StatusNeedsApproval {
		t.Fatalf("nobody to ask = %v, %+v", allow, out)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
