package broker

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/receipts"
)

// grantBodies returns the grant_added and grant_revoked receipts.
func (r *rig) grantBodies(t *testing.T) []receipts.Body {
	t.Helper()
	var out []receipts.Body
	receipts.Walk(context.Background(), r.dir, func(rec receipts.Record) error {
		if rec.Line != nil && rec.Line.Decoded.Grant != nil {
			out = append(out, rec.Line.Decoded)
		}
		return nil
	})
	return out
}

// TestApprovalGrant: an approver who accepts the proposed grant is asked
// once for the family (recursive deletes in the workspace, which ask at
// supervised); the grant is recorded (grant_added, then the
// decision receipts name it), it covers only its family, and once revoked
// the family asks again.
func TestApprovalGrant(t *testing.T) {
	requireSandbox(t)
	ctx := context.Background()
	ap := &fixedApprover{answer: Answer{Result: "approved", By: "alice", Remember: RememberGrant}}
	var store *grant.Store
	r := newRigWith(t, "supervised", nil, func(c *Config) {
		c.Approver = ap
		store = grant.Open(filepath.Join(filepath.Dir(c.EstopFile), "grants.json"))
		c.Grants = store
	})
	r.approve = ap

	out, err := r.b.Invoke(ctx, sh("rm -rf a"), "c1")
	if err != nil || out.Status != StatusOK {
		t.Fatalf("first: %v %+v", err, out)
	}
	if len(ap.asked) != 1 || ap.asked[0].Proposal == nil {
		t.Fatalf("asked %d times, proposal %+v", len(ap.asked), ap.asked)
	}
	p := ap.asked[0].Proposal
	if p.Text != "tool=shell cmd=rm args=any path="+r.ws+" autonomy=supervised" || !strings.Contains(p.Words, "`rm`") {
		t.Fatalf("proposal: %q / %q", p.Text, p.Words)
	}
	gb := r.grantBodies(t)
	if len(gb) != 1 || gb[0].Type != receipts.TypeGrantAdded || gb[0].Grant.By != "alice" || gb[0].Grant.Scope != p.Text || gb[0].V != receipts.Version {
		t.Fatalf("grant receipts: %+v", gb)
	}
	gs, _ := store.Load()
	if len(gs) != 1 || gs[0].ID != gb[0].Grant.ID || gs[0].Expires.Sub(time.Now()) > grant.DefaultExpiry.Default {
		t.Fatalf("stored grants: %+v", gs)
	}

	// the same family runs without asking; its decision names the grant
	out, err = r.b.Invoke(ctx, sh("rm -rf b"), "c2")
	if err != nil || out.Status != StatusOK || len(ap.asked) != 1 || out.Decision.Grant != gs[0].ID {
		t.Fatalf("second: %v %+v, asked %d", err, out, len(ap.asked))
	}
	bs := r.bodies(t, out.ActionID)
	if bs[0].Decision.Grant != gs[0].ID || !slices.Contains(bs[0].Decision.Reasons, "grant.applied") || bs[0].Decision.Result != "allow" {
		t.Fatalf("decision receipt: %+v", bs[0].Decision)
	}
	// another program asks
	ap.answer.Remember = RememberOnce
	if out, _ = r.b.Invoke(ctx, sh("find . -name nothing -delete"), "c2"); len(ap.asked) != 2 || out.Decision.Grant != "" {
		t.Fatalf("find -delete was not asked about: %+v", out)
	}
	// a denial stays a denial
	if out, _ = r.b.Invoke(ctx, sh("echo x > /etc/passwd"), "c2"); out.Status != StatusDenied {
		t.Fatalf("write to /etc: %+v", out)
	}

	// revoked: asks again (the broker sees the file change)
	if _, err := r.log.RevokeGrant(ctx, store, gs[0].ID, "bob", "cli", time.Now()); err != nil {
		t.Fatal(err)
	}
	if out, _ = r.b.Invoke(ctx, sh("rm -rf c"), "c2"); len(ap.asked) != 3 || out.Decision.Grant != "" {
		t.Fatalf("revoked grant still applies: %+v", out.Decision)
	}
	if gb = r.grantBodies(t); len(gb) != 2 || gb[1].Type != receipts.TypeGrantRevoked || gb[1].Grant.By != "bob" {
		t.Fatalf("revocation receipt: %+v", gb)
	}
}

// TestConversationGrant: "this conversation" covers the family in that
// conversation only.
func TestConversationGrant(t *testing.T) {
	requireSandbox(t)
	ctx := context.Background()
	ap := &fixedApprover{answer: Answer{Result: "approved", By: "alice", Remember: RememberConversation}}
	r := newRigWith(t, "supervised", nil, func(c *Config) {
		c.Approver = ap
		c.Grants = grant.Open(filepath.Join(filepath.Dir(c.EstopFile), "grants.json"))
	})
	r.b.Invoke(ctx, sh("rm -rf one"), "c1")
	if out, _ := r.b.Invoke(ctx, sh("rm -rf two"), "c1"); len(ap.asked) != 1 || out.Status != StatusOK {
		t.Fatalf("same conversation asked again: %d", len(ap.asked))
	}
	if r.b.Invoke(ctx, sh("rm -rf three"), "c2"); len(ap.asked) != 2 {
		t.Fatalf("other conversation was not asked")
	}
}
