package grant

import (
	"context"
	"fmt"
	"time"

	"github.com/clawsec/claw/receipts"
)

// Receipt is the receipt form of g.
func Receipt(g Grant) receipts.Grant {
	return receipts.Grant{ID: g.ID, By: g.By, Channel: g.Channel, Expires: g.Expires.UTC().Format(time.RFC3339), Scope: Format(g.Scope)}
}

// AddRecorded adds g: its grant_added receipt first, and the grant only
// once that receipt is durable (no receipt, no grant).
func AddRecorded(ctx context.Context, l *receipts.Log, s *Store, g Grant) error {
	if _, err := l.GrantAdded(ctx, g.Channel, Receipt(g)); err != nil {
		return fmt.Errorf("recording the grant: %w", err)
	}
	if err := s.Add(g); err != nil {
		return fmt.Errorf("the grant_added receipt is written but the grant was not stored: %w", err)
	}
	return nil
}

// RevokeRecorded revokes grant id and records a grant_revoked receipt. The
// revocation comes first: it only takes permission away, so it must not
// wait for the log.
func RevokeRecorded(ctx context.Context, l *receipts.Log, s *Store, id, by, channel string, now time.Time) (Grant, error) {
	g, err := s.Revoke(id, now)
	if err != nil {
		return g, err
	}
	r := Receipt(g)
	r.By, r.Channel = by, channel
	if _, err := l.GrantRevoked(ctx, channel, r); err != nil {
		return g, fmt.Errorf("grant %s is revoked, but its receipt could not be written: %w", id, err)
	}
	return g, nil
}
