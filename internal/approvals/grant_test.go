package approvals

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
)

// TestDecideGrant: a request submitted with a proposal can be approved
// with the grant or for the conversation, and the broker's approver sees
// which; without a proposal only a one-time approval is possible.
func TestDecideGrant(t *testing.T) {
	q := NewQueue(time.Minute)
	id, _, err := q.Submit(pending("shell"))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Decide(id, "approve_grant", "alice", digestA); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a grant accepted where none was offered: %v", err)
	}

	prop := &broker.Proposal{Text: "tool=shell cmd=go:test args=any path=/ws", Words: "shell commands made only of `go test`"}
	for decision, want := range map[string]string{
		"approve":              broker.RememberOnce,
		"approve_grant":        broker.RememberGrant,
		"approve_conversation": broker.RememberConversation,
	} {
		t.Run(decision, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type res struct {
				a   broker.Answer
				err error
			}
			done := make(chan res, 1)
			go func() {
				a, err := q.Approve(ctx, broker.Request{Tool: "shell", Summary: "go test ./...", ActionSHA256: digestA,
					Decision: gate.Decision{Risk: "medium"}, Proposal: prop})
				done <- res{a, err}
			}()
			var p Pending
			for p.ID == "" {
				for _, x := range q.Pending() {
					if x.Proposal != nil {
						p = x
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
			if p.Proposal.Scope != prop.Text || p.Proposal.Description != prop.Words {
				t.Fatalf("pending proposal: %+v", p.Proposal)
			}
			if err := q.Decide(p.ID, decision, "alice", digestA); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil || r.a.Result != StatusApproved || r.a.Remember != want {
				t.Fatalf("answer %+v %v, want remember %q", r.a, r.err, want)
			}
		})
	}
}
