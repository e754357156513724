package broker

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/estop"
	"github.com/clawsec/claw/receipts"
)

// allOf returns the receipts of the rig's log of type typ that belong
// to no action.
func (r *rig) allOf(t *testing.T, typ receipts.Type) []receipts.Body {
	t.Helper()
	var out []receipts.Body
	for _, b := range r.bodies(t, "") {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

// A handed-off action is decided by the gate, recorded with the same
// action_sha256 an approval of a run action binds to (tool, arguments and
// the sandbox plan), and closed as delegated or denied; nothing runs.
func TestHand(t *testing.T) {
	r := newRig(t, "supervised", nil)
	ctx := context.Background()
	target := filepath.Join(r.ws, "made-by-hand")
	a := gate.Action{Tool: "shell", Args: map[string]any{"command": "touch " + target}}
	h, err := r.b.Hand(ctx, External{Action: a, Conversation: "s1", Summary: "Bash: touch"})
	if err != nil {
		t.Fatal(err)
	}
	if bs := r.bodies(t, h.ActionID); len(bs) != 0 {
		t.Fatalf("Hand wrote %s; the receipts wait for CloseAll", types(bs))
	}
	if err := r.b.CloseAll(ctx, []*Handoff{h}, true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a handed-off action ran: %v", err)
	}
	bs := r.bodies(t, h.ActionID)
	if got := types(bs); got != "decision outcome:delegated" {
		t.Fatalf("receipts %s, want decision outcome:delegated", got)
	}
	d := bs[0]
	if d.Action.ActionSHA256 != actionDigest(a, h.Decision) || len(h.Decision.Sandbox.Write) == 0 {
		t.Errorf("action_sha256 %s, want the broker's digest over tool, args and sandbox plan %s", d.Action.ActionSHA256, actionDigest(a, h.Decision))
	}
	if d.Decision.Result != h.Decision.Decision || d.Conversation != "s1" || d.Channel != "test" || d.Action.Summary != "Bash: touch" {
		t.Errorf("decision receipt %+v %+v, want the gate's decision in conversation s1 on channel test", d.Decision, d.Action)
	}

	// A deny is closed as denied, naming its rules, whatever the answer.
	h, err = r.b.Hand(ctx, External{Action: gate.Action{Tool: "shell", Args: map[string]any{"command": "rm -rf /"}}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Decision.Decision != gate.Deny {
		t.Fatalf("rm -rf / decided %s", h.Decision.Decision)
	}
	if err := r.b.CloseAll(ctx, []*Handoff{h}, true, ""); err != nil {
		t.Fatal(err)
	}
	bs = r.bodies(t, h.ActionID)
	if types(bs) != "decision outcome:denied" || !strings.HasPrefix(bs[1].Outcome.Error, "denied: ") {
		t.Fatalf("receipts %s (%+v), want a denied outcome naming the rules", types(bs), bs[len(bs)-1].Outcome)
	}
}

// A caller's own decision replaces the gate's, knows about the emergency
// stop, and its opt-ins are written into the decision receipt; a
// decision that is none of the four is recorded as a deny.
func TestHandDecidedByCaller(t *testing.T) {
	r := newRig(t, "supervised", nil)
	ctx := context.Background()
	if err := os.WriteFile(r.b.cfg.EstopFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var sawEstop bool
	h, err := r.b.Hand(ctx, External{Action: gate.Action{Tool: "TodoWrite"}, Decide: func(estop bool) (gate.Decision, []string) {
		sawEstop = estop
		return gate.Decision{Decision: "maybe", Risk: "low"}, []string{"hook.trust_tool=TodoWrite"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !sawEstop || h.Decision.Decision != gate.Deny {
		t.Fatalf("estop seen %v, decision %q; want the stop seen and an unknown decision recorded as deny", sawEstop, h.Decision.Decision)
	}
	if err := r.b.CloseAll(ctx, []*Handoff{h}, true, ""); err != nil {
		t.Fatal(err)
	}
	bs := r.bodies(t, h.ActionID)
	if types(bs) != "decision outcome:denied" || bs[0].Decision.Result != gate.Deny || strings.Join(bs[0].Decision.Degraded, ",") != "hook.trust_tool=TodoWrite" {
		t.Fatalf("receipts %s, decision %+v; want a deny with the opt-in recorded", types(bs), bs[0].Decision)
	}
}

// CloseAll writes the receipts of one call's handoffs in one commit, in
// the order they were written one by one before: every decision, then
// every outcome (allowed false: denied with the reason given).
func TestCloseAllOneCommit(t *testing.T) {
	r := newRig(t, "supervised", nil)
	ctx := context.Background()
	var hs []*Handoff
	for _, cmd := range []string{"ls", "cat notes.txt", "rm -rf /"} {
		h, err := r.b.Hand(ctx, External{Action: gate.Action{Tool: "shell", Args: map[string]any{"command": cmd}}, Conversation: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	before := r.log.Syncs()
	if err := r.b.CloseAll(ctx, hs, false, "denied with the rest of the tool call"); err != nil {
		t.Fatal(err)
	}
	if n := r.log.Syncs() - before; n != 1 {
		t.Fatalf("%d fdatasyncs for the receipts of one call, want 1", n)
	}
	var got []string
	var seqs []uint64
	err := receipts.Walk(ctx, r.dir, func(rec receipts.Record) error {
		if rec.Err != nil {
			return rec.Err
		}
		b := rec.Line.Decoded
		for i, h := range hs {
			if b.ActionID == h.ActionID {
				s := fmt.Sprintf("%s:%d", b.Type, i)
				if b.Outcome != nil {
					s += ":" + b.Outcome.Status + ":" + b.Outcome.Error
				}
				got = append(got, s)
				seqs = append(seqs, b.Seq)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"decision:0", "decision:1", "decision:2",
		"outcome:0:denied:denied with the rest of the tool call", "outcome:1:denied:denied with the rest of the tool call",
		"outcome:2:denied:denied: " + strings.Join(hs[2].Decision.RuleIDs(), ", ")}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Fatalf("receipts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range seqs {
		if seqs[i] != seqs[0]+uint64(i) {
			t.Fatalf("seqs %v are not consecutive", seqs)
		}
	}
	rep, err := audit.Verify(ctx, r.dir, audit.Options{Keys: []crypto.PublicKey{r.log.Signer().PublicKey()}})
	if err != nil || !rep.Verified {
		t.Fatalf("the log does not verify: %v %+v", err, rep)
	}
}

// Without durable receipts the call has no answer: CloseAll fails with
// ErrNoReceipt.
func TestCloseAllNoReceipt(t *testing.T) {
	r := newRig(t, "supervised", nil)
	h, err := r.b.Hand(context.Background(), External{Action: gate.Action{Tool: "shell", Args: map[string]any{"command": "ls"}}})
	if err != nil {
		t.Fatal(err)
	}
	r.log.Close()
	if err := r.b.CloseAll(context.Background(), []*Handoff{h}, true, ""); !errors.Is(err, ErrNoReceipt) {
		t.Fatalf("CloseAll on a closed log = %v, want ErrNoReceipt", err)
	}
}

// An action denied, or asked about with nobody to ask, ends at its
// decision: the decision and the outcome receipts in one commit, the
// emergency stop's as well.
func TestDenyOneCommit(t *testing.T) {
	r := newRig(t, "supervised", nil)
	ctx := context.Background()
	for _, tt := range []struct {
		name, cmd, want, receipt string
		estop                    bool
	}{
		{name: "deny", cmd: "rm -rf /", want: StatusDenied, receipt: StatusDenied},
		{name: "ask, nobody to ask", cmd: "rm -rf gone", want: StatusNeedsApproval, receipt: StatusDenied},
		{name: "estop", cmd: "rm -rf /", want: StatusEstop, receipt: StatusEstop, estop: true},
	} {
		if tt.estop {
			if err := os.WriteFile(r.b.cfg.EstopFile, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		before := r.log.Syncs()
		out, err := r.b.Invoke(ctx, sh(tt.cmd), "c1")
		if err != nil || out.Status != tt.want {
			t.Fatalf("%s: Invoke = %+v, %v; want status %s", tt.name, out, err, tt.want)
		}
		if n := r.log.Syncs() - before; n != 1 {
			t.Errorf("%s: %d fdatasyncs, want 1", tt.name, n)
		}
		if got := types(r.bodies(t, out.ActionID)); got != "decision outcome:"+tt.receipt {
			t.Errorf("%s: receipts %s, want decision outcome:%s", tt.name, got, tt.receipt)
		}
	}
	r.log.Close()
	out, err := r.b.Invoke(ctx, sh("rm -rf /"), "c1")
	if !errors.Is(err, ErrNoReceipt) || out.Status != StatusError {
		t.Fatalf("a deny on a closed log = %+v, %v; want status error and ErrNoReceipt", out, err)
	}
}

func TestRefuse(t *testing.T) {
	r := newRig(t, "supervised", nil)
	ctx := context.Background()
	before := r.log.Syncs()
	out, err := r.b.Refuse(ctx, Refusal{Tool: "tool", Args: []byte(`{"x":1}`), Summary: "tool up echo (disabled)",
		Conversation: "c1", Rule: "mcp.pin_changed", Msg: "tool definition changed since it was pinned"})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.log.Syncs() - before; n != 1 {
		t.Errorf("%d fdatasyncs for a refusal, want 1", n)
	}
	if out.Status != StatusDenied || out.ActionID == "" {
		t.Fatalf("outcome %+v, want denied with an action id", out)
	}
	bs := r.bodies(t, out.ActionID)
	if types(bs) != "decision outcome:denied" {
		t.Fatalf("receipts %s, want decision outcome:denied", types(bs))
	}
	d := bs[0]
	if d.Decision.Result != gate.Deny || strings.Join(d.Decision.Reasons, ",") != "mcp.pin_changed" ||
		d.Action.ArgsSHA256 != receipts.Digest([]byte(`{"x":1}`)) || d.Conversation != "c1" {
		t.Errorf("decision receipt %+v %+v", d.Decision, d.Action)
	}
	if bs[1].Outcome.Error != "tool definition changed since it was pinned" {
		t.Errorf("outcome error %q", bs[1].Outcome.Error)
	}
	if _, err := r.b.Refuse(ctx, Refusal{Tool: "tool"}); err == nil {
		t.Error("a refusal without a rule was recorded")
	}
	r.log.Close()
	if _, err := r.b.Refuse(ctx, Refusal{Tool: "tool", Rule: "x"}); !errors.Is(err, ErrNoReceipt) {
		t.Errorf("Refuse on a closed log = %v, want ErrNoReceipt", err)
	}
}

// Engaging makes the stop first and records it; clearing records first
// and lifts the stop only once that is durable.
func TestEstopThroughTheLog(t *testing.T) {
	r := newRig(t, "supervised", nil)
	ctx := context.Background()
	file := r.b.cfg.EstopFile
	already, err := r.log.EngageEstop(ctx, file, "cli:alice", "looping")
	if err != nil || already {
		t.Fatalf("EngageEstop = %v, %v", already, err)
	}
	if st := estop.Read(file); !st.Engaged || st.By != "cli:alice" || st.Reason != "looping" {
		t.Fatalf("ESTOP file says %+v", st)
	}
	if already, err := r.log.EngageEstop(ctx, file, "serve:http", ""); err != nil || !already {
		t.Fatalf("second EngageEstop = %v, %v; want already engaged, recorded again", already, err)
	}
	engaged, err := r.log.ClearEstop(ctx, file, "cli:alice")
	if err != nil || !engaged || estop.Engaged(file) {
		t.Fatalf("ClearEstop = %v, %v; stop engaged after: %v", engaged, err, estop.Engaged(file))
	}
	if engaged, err := r.log.ClearEstop(ctx, file, "cli:alice"); err != nil || engaged {
		t.Fatalf("clearing a cleared stop = %v, %v; want nothing done", engaged, err)
	}
	var got []string
	for _, b := range r.allOf(t, receipts.TypeEstop) {
		s := "off:" + b.Estop.By
		if b.Estop.Active {
			s = "on:" + b.Estop.By
		}
		got = append(got, s)
	}
	if want := "on:cli:alice,on:serve:http,off:cli:alice"; strings.Join(got, ",") != want {
		t.Fatalf("estop receipts %s, want %s", strings.Join(got, ","), want)
	}

	// No receipt, no clearing; but an engage without its receipt still stops.
	r.log.Close()
	if _, err := r.log.EngageEstop(ctx, file, "cli", ""); !errors.Is(err, ErrNoReceipt) || !estop.Engaged(file) {
		t.Fatalf("EngageEstop on a closed log = %v, engaged %v; want ErrNoReceipt and the stop engaged", err, estop.Engaged(file))
	}
	if _, err := r.log.ClearEstop(ctx, file, "cli"); !errors.Is(err, ErrNoReceipt) || !estop.Engaged(file) {
		t.Fatalf("ClearEstop on a closed log = %v, engaged %v; want ErrNoReceipt and the stop still engaged", err, estop.Engaged(file))
	}
}
