// Package channeltest builds a channel's [channel.Env] for the tests of
// the channels: a real gate (the built-in policies), a real receipt log,
// a real broker and a real approvals queue, in a temporary directory. It
// does not import the testing package, so that no production code can
// pull it in by accident.
package channeltest

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/broker/brokertest"
	"github.com/clawsec/claw/internal/channel"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
	TempDir() string
}

// Options adjust the Env.
type Options struct {
	Autonomy   string   // supervised if empty
	ToolsAllow []string // nil: every tool
	Approvers  []string // who may approve; empty: nobody
	// ApprovalTimeout bounds a wait for a human (5 s if zero).
	ApprovalTimeout time.Duration
	// Approver, when set, is the broker's approver instead of the queue
	// (a channel that asks on its own wire, like Discord's codes).
	Approver broker.Approver
}

// Rig is an Env and where its state lives.
type Rig struct {
	Env       *channel.Env
	Receipts  string // the receipt log's directory
	Workspace string
	EstopFile string
}

// askWrites is the user policy every rig has: file_write asks.
const askWrites = `package claw.user.writes

ask contains {"id": "user.writes.ask", "severity": "medium", "msg": "writes need approval here"} if input.kind == "file_write"
`

// New builds the Env of channel name.
func New(t TB, name string, o Options) *Rig {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	home := filepath.Join(root, "home")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if o.Autonomy == "" {
		o.Autonomy = "supervised"
	}
	if o.ApprovalTimeout == 0 {
		o.ApprovalTimeout = 5 * time.Second
	}
	// The built-in policies let supervised write in the workspace without
	// asking; the channel tests need an action that asks, so this user
	// policy makes file_write ask.
	policies := filepath.Join(root, "policies")
	if err := os.MkdirAll(policies, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(policies, "ask_writes.rego"), []byte(askWrites), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := gate.New(context.Background(), gate.Options{Home: home, Timeout: 5 * time.Second, UserPolicyDir: policies,
		Policy: gate.Policy{WorkspaceOnly: true, AllowedCommands: []string{"ls", "echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "receipts")
	log := brokertest.NewLog(t, dir)
	q := approvals.NewQueue(o.ApprovalTimeout)
	var approver broker.Approver
	if len(o.Approvers) > 0 {
		approver = q.For(name, o.Approvers)
	}
	if o.Approver != nil {
		approver = o.Approver
	}
	estop := filepath.Join(root, "ESTOP")
	b := broker.New(broker.Config{Gate: eng, Log: log, Approver: approver, Autonomy: o.Autonomy, Workspace: ws, Home: home,
		Channel: name, EstopFile: estop, ApprovalTimeout: o.ApprovalTimeout, ToolsAllow: o.ToolsAllow,
		InProcess: map[toolkind.Kind]broker.ToolFunc{toolkind.Time: func(context.Context, map[string]any) (json.RawMessage, error) {
			return json.RawMessage(`{"utc":"2026-11-27T00:00:00Z"}`), nil
		}}})
	tools, err := tool.Select(o.ToolsAllow)
	if err != nil {
		t.Fatal(err)
	}
	env := &channel.Env{Name: name, Broker: b, Tools: tools, Autonomy: o.Autonomy, Queue: q, Approvers: o.Approvers,
		Estop: func() bool { _, err := os.Lstat(estop); return err == nil },
		Log:   slog.New(slog.DiscardHandler)}
	return &Rig{Env: env, Receipts: dir, Workspace: ws, EstopFile: estop}
}

// Bodies returns the bodies of every receipt in the log, in order.
func (r *Rig) Bodies(t TB) []receipts.Body {
	t.Helper()
	var out []receipts.Body
	err := receipts.Walk(context.Background(), r.Receipts, func(rec receipts.Record) error {
		if rec.Err != nil {
			return rec.Err
		}
		out = append(out, rec.Line.Decoded)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Action returns the receipts of one action, in order.
func (r *Rig) Action(t TB, actionID string) []receipts.Body {
	t.Helper()
	var out []receipts.Body
	for _, b := range r.Bodies(t) {
		if b.ActionID == actionID {
			out = append(out, b)
		}
	}
	return out
}

// ApproveNext waits (up to 10 s) for the next pending request and decides
// it as approver; it returns the error of the decision.
func ApproveNext(ctx context.Context, q *approvals.Queue, decision, approver string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if ps := q.Pending(); len(ps) > 0 {
			return q.Decide(ps[0].ID, decision, approver, ps[0].ActionSHA256)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
