package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawsec/claw/internal/estop"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

// Log is the receipt log as every package but the broker holds it. The
// broker is its one writer: actions are recorded by [Broker.Invoke],
// [Broker.CloseAll] and [Broker.Refuse], state changes by the methods below
// (the emergency stop, grants, a policy load, a key rotation). No other
// package imports the writing side (receipts/store); internal/deptest
// holds that.
type Log struct{ w *store.Log }

// LogOptions tune a Log (see receipts/store); the zero value gives the
// defaults.
type LogOptions = store.Options

// OpenLog opens (creating if needed) the receipt log in dir, signing new
// receipts with signer. A torn last line left by a crash is truncated and
// a recovery receipt records the hash of the removed bytes.
func OpenLog(dir string, signer *receipts.Signer, opts LogOptions) (*Log, error) {
	w, err := store.Open(dir, signer, opts)
	if err != nil {
		return nil, err
	}
	return &Log{w: w}, nil
}

// Dir returns the log directory.
func (l *Log) Dir() string { return l.w.Dir() }

// LogID returns the log id written into every receipt.
func (l *Log) LogID() string { return l.w.LogID() }

// Signer returns the key currently signing receipts.
func (l *Log) Signer() *receipts.Signer { return l.w.Signer() }

// Syncs returns how many times the log has fdatasync'ed since it was
// opened: once per commit.
func (l *Log) Syncs() uint64 { return l.w.Syncs() }

// Close writes a final checkpoint and closes the log.
func (l *Log) Close() error { return l.w.Close() }

// Checkpoint writes a signed checkpoint now if receipts were added since
// the last one.
func (l *Log) Checkpoint(ctx context.Context) (receipts.Entry, error) { return l.w.Checkpoint(ctx) }

// RotateKey hands the log over to next with a key_rotated receipt signed
// by the current key.
func (l *Log) RotateKey(ctx context.Context, next *receipts.Signer) (receipts.Entry, error) {
	return l.w.RotateKey(ctx, next)
}

// PolicyLoaded records the policy in force.
func (l *Log) PolicyLoaded(ctx context.Context, p receipts.Policy) (receipts.Entry, error) {
	return l.w.PolicyLoaded(ctx, p)
}

// AppendFixture writes b as given (the log fills v, log, seq, ts and
// prev). It is for the hidden `claw receipt __append` that tests and
// diagnostics build logs with; no action and no state change of claw's
// is recorded through it.
func (l *Log) AppendFixture(ctx context.Context, b receipts.Body) (receipts.Entry, error) {
	return l.w.Append(ctx, b)
}

// AddGrant adds g to s: its grant_added receipt first, and the grant
// only once that receipt is durable (no receipt, no grant).
func (l *Log) AddGrant(ctx context.Context, s *grant.Store, g grant.Grant) error {
	if _, err := l.w.GrantAdded(ctx, g.Channel, grant.Receipt(g)); err != nil {
		return fmt.Errorf("recording the grant: %w", err)
	}
	if err := s.Add(g); err != nil {
		return fmt.Errorf("the grant_added receipt is written but the grant was not stored: %w", err)
	}
	return nil
}

// RevokeGrant revokes grant id in s and records a grant_revoked receipt.
// The revocation comes first: it only takes permission away, so it must
// not wait for the log.
func (l *Log) RevokeGrant(ctx context.Context, s *grant.Store, id, by, channel string, now time.Time) (grant.Grant, error) {
	g, err := s.Revoke(id, now)
	if err != nil {
		return g, err
	}
	r := grant.Receipt(g)
	r.By, r.Channel = by, channel
	if _, err := l.w.GrantRevoked(ctx, channel, r); err != nil {
		return g, fmt.Errorf("grant %s is revoked, but its receipt could not be written: %w", id, err)
	}
	return g, nil
}

// decision, approval and outcome write the three receipts of an action;
// only the broker's own paths call them.
func (l *Log) decision(ctx context.Context, ref receipts.Ref, a receipts.Action, d receipts.Decision) (receipts.Entry, error) {
	return l.w.Decision(ctx, ref, a, d)
}

func (l *Log) approval(ctx context.Context, ref receipts.Ref, a receipts.Approval) (receipts.Entry, error) {
	return l.w.Approval(ctx, ref, a)
}

func (l *Log) outcome(ctx context.Context, ref receipts.Ref, o receipts.Outcome) (receipts.Entry, error) {
	return l.w.Outcome(ctx, ref, o)
}

// ended is an action that ended at its decision, nothing run between its
// decision and its outcome: a denial, a refusal, a handoff to another
// program.
type ended struct {
	ref      receipts.Ref
	action   receipts.Action
	decision receipts.Decision
	outcome  receipts.Outcome
}

// writeEnded writes the receipts of as in one commit: each decision, in
// order, then each outcome; it returns their entries in that order.
func (l *Log) writeEnded(ctx context.Context, as []ended) ([]receipts.Entry, error) {
	bs := make([]receipts.Body, 0, 2*len(as))
	for _, a := range as {
		bs = append(bs, store.DecisionBody(a.ref, a.action, a.decision))
	}
	for _, a := range as {
		bs = append(bs, store.OutcomeBody(a.ref, a.outcome))
	}
	return l.w.AppendAll(ctx, bs...)
}

// EngageEstop engages the emergency stop at file (see package estop) and
// records it: the stop takes effect first and the receipt follows, also
// when the stop was already engaged (already says so). An error wrapping
// [ErrNoReceipt] leaves the stop engaged without its receipt; one wrapping
// estop.ErrDetails leaves it engaged without the details in its file; any
// other means it is not engaged.
func (l *Log) EngageEstop(ctx context.Context, file, by, reason string) (already bool, err error) {
	already, err = estop.Engage(file, by, reason, time.Now())
	if err != nil && !errors.Is(err, estop.ErrDetails) {
		return false, err
	}
	if _, rerr := l.w.Estop(ctx, receipts.Estop{Active: true, By: by, Reason: reason}); rerr != nil {
		err = errors.Join(err, fmt.Errorf("%w: %v", ErrNoReceipt, rerr))
	}
	return already, err
}

// ClearEstop records the clearing of the emergency stop at file and then
// lifts it: no receipt, no clearing. A stop that is not engaged is left
// alone and not recorded (engaged is false).
func (l *Log) ClearEstop(ctx context.Context, file, by string) (engaged bool, err error) {
	if !estop.Engaged(file) {
		return false, nil
	}
	if _, err := l.w.Estop(ctx, receipts.Estop{Active: false, By: by}); err != nil {
		return true, fmt.Errorf("%w: %v", ErrNoReceipt, err)
	}
	return true, estop.Clear(file)
}
