package broker

import (
	"context"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/grant"
)

// Proposal is the grant an approver is offered for an action: the
// narrowest useful scope the broker derives from it (grant.Propose), in
// the scope syntax and in words.
type Proposal struct {
	Scope grant.Scope
	Text  string // grant.Format: what `claw grant add` takes
	Words string // grant.Describe: what a person reads before accepting
}

// loadGrants gives the gate the store's grants when the file changed. A
// store that cannot be read applies no grants (fail closed: actions ask)
// and is logged.
func (b *Broker) loadGrants() {
	s := b.cfg.Grants
	if s == nil {
		return
	}
	gs, changed, err := s.LoadIfChanged()
	if err != nil {
		b.cfg.Logger.Warn("grants not applied: the grant store cannot be read", "event", "grants_unreadable", "error", err)
		b.cfg.Gate.SetGrants(nil)
		return
	}
	if changed {
		b.cfg.Gate.SetGrants(grant.Active(gs, b.now()))
	}
}

// propose derives the grant offered for an ask, or nil.
func (b *Broker) propose(in *gate.Input) *Proposal {
	if b.cfg.Grants == nil {
		return nil
	}
	sc, ok := grant.Propose(in)
	if !ok {
		return nil
	}
	return &Proposal{Scope: sc, Text: grant.Format(sc), Words: grant.Describe(sc)}
}

// remember stores the grant an approver accepted along with an approval
// (Answer.Remember), recorded by a grant_added receipt first. A grant that
// cannot be recorded or stored is logged: the approval of this action
// stands, and the next one asks again.
func (b *Broker) remember(ctx context.Context, req Request, ans Answer, conversation string) {
	if req.Proposal == nil || b.cfg.Grants == nil {
		return
	}
	sc := req.Proposal.Scope
	switch ans.Remember {
	case RememberGrant:
	case RememberConversation:
		if conversation == "" {
			return
		}
		sc.Conversation = conversation
	default:
		return
	}
	now := b.now()
	exp, err := b.cfg.GrantExpiry.For(now, 0)
	if err != nil {
		b.cfg.Logger.Warn("grant not stored", "event", "grant_failed", "error", err)
		return
	}
	g := grant.Grant{ID: grant.NewID(), By: ans.By, Channel: b.cfg.Channel, Created: now.UTC().Truncate(time.Second), Expires: exp, Scope: sc}
	if err := b.cfg.Log.AddGrant(context.WithoutCancel(ctx), b.cfg.Grants, g); err != nil {
		b.cfg.Logger.Warn("grant not stored", "event", "grant_failed", "action_id", req.ActionID, "error", err)
		return
	}
	b.cfg.Logger.Info("grant added", "event", "grant_added", "action_id", req.ActionID, "grant", g.ID, "by", b.cfg.Redact(ans.By))
}
