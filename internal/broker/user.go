package broker

import (
	"context"
	"strings"
)

type userKey struct{}

// WithUser returns ctx carrying the user a channel acts for (a bridge
// session, a Discord user id, a FIFO's channel id). The broker records it
// in the receipts of every action taken with that context, next to the
// channel's name. The agent loop passes its context to the broker
// unchanged, so a turn run with it records its tool calls under the user
// too.
func WithUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

// UserFrom is the user WithUser put in ctx, or "".
func UserFrom(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// maxUser bounds the user recorded in a receipt.
const maxUser = 128

// userLabel is u as a receipt records it: valid UTF-8 without control
// characters, at most maxUser bytes.
func userLabel(u string) string {
	u = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(u, "?"))
	return clip(u, maxUser)
}
