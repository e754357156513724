package grant

import (
	"time"

	"github.com/clawsec/claw/receipts"
)

// Receipt is the receipt form of g.
func Receipt(g Grant) receipts.Grant {
	return receipts.Grant{ID: g.ID, By: g.By, Channel: g.Channel, Expires: g.Expires.UTC().Format(time.RFC3339), Scope: Format(g.Scope)}
}
