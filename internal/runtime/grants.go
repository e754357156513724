package runtime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/textesc"
)

// GrantView is a grant as claw grant list and show print it.
type GrantView struct {
	grant.Grant
	State     string `json:"state"`
	ScopeText string `json:"scope_text"`
	Words     string `json:"description"`
}

// ViewGrant is gr as it stands at now.
func ViewGrant(gr grant.Grant, now time.Time) GrantView {
	return GrantView{Grant: gr, State: gr.State(now), ScopeText: grant.Format(gr.Scope), Words: grant.Describe(gr.Scope)}
}

// GrantStore is the grant store of the claw home.
func GrantStore(home string) *grant.Store { return grant.Open(filepath.Join(home, grant.FileName)) }

// WithLog runs fn with the receipt log open for writing, and closes it.
// The command line opens it: it has the key's flags and prompts.
type WithLog func(fn func(*broker.Log) error) error

// Grants are every grant of the claw home, as they stand at now.
func Grants(home string, now time.Time) ([]GrantView, error) {
	s := GrantStore(home)
	gs, err := s.Load()
	if err != nil {
		return nil, WithCode(ExitError, err, "fix or remove "+s.Path())
	}
	views := make([]GrantView, 0, len(gs))
	for _, gr := range gs {
		views = append(views, ViewGrant(gr, now))
	}
	return views, nil
}

// FindGrant is the grant id of the claw home, as it stands at now.
func FindGrant(home, id string, now time.Time) (GrantView, error) {
	views, err := Grants(home, now)
	if err != nil {
		return GrantView{}, err
	}
	for _, v := range views {
		if v.ID == id {
			return v, nil
		}
	}
	return GrantView{}, WithCode(ExitError, fmt.Errorf("%w: %s", grant.ErrUnknown, textesc.String(id)), "list them with 'claw grant list'")
}

// ParseGrantScope reads a scope in the grant syntax, given as words; a
// malformed scope or an unknown tool is a usage error.
func ParseGrantScope(words []string) (grant.Scope, error) {
	sc, err := grant.Parse(strings.Join(words, " "))
	if err != nil {
		return sc, WithCode(ExitUsage, err, "see 'claw grant --help' for the scope syntax")
	}
	if _, ok := gate.Kinds[sc.Tool]; !ok {
		return sc, WithCode(ExitUsage, fmt.Errorf("scope: unknown tool %q", sc.Tool))
	}
	return sc, nil
}

// AddGrant grants sc from now for expires (0: the config's default) to
// the claw home of the config load gives, on the command line's channel,
// by by: the grant_added receipt is written first, through withLog, and
// the grant is stored once it is durable.
func AddGrant(ctx context.Context, load func() (*Env, error), sc grant.Scope, expires time.Duration, by string, now time.Time, withLog WithLog) (GrantView, error) {
	e, err := load()
	if err != nil {
		return GrantView{}, err
	}
	exp, err := GrantExpiry(e.Config).For(now, expires)
	if err != nil {
		return GrantView{}, WithCode(ExitUsage, err)
	}
	s := GrantStore(e.Home)
	gr := grant.Grant{ID: grant.NewID(), By: by, Channel: "cli", Created: now.UTC().Truncate(time.Second), Expires: exp, Scope: sc}
	err = withLog(func(l *broker.Log) error {
		return l.AddGrant(ctx, s, gr)
	})
	if err != nil {
		return GrantView{}, grantErr(err, "nothing was granted")
	}
	return ViewGrant(gr, now), nil
}

// RevokeGrant revokes the grant id of the claw home, by by on the command
// line's channel, and writes the grant_revoked receipt through withLog.
func RevokeGrant(ctx context.Context, home, id, by string, withLog WithLog) (grant.Grant, error) {
	s := GrantStore(home)
	var gr grant.Grant
	err := withLog(func(l *broker.Log) error {
		var err error
		gr, err = l.RevokeGrant(ctx, s, id, by, "cli", time.Now())
		return err
	})
	if errors.Is(err, grant.ErrUnknown) {
		return gr, WithCode(ExitError, err, "list them with 'claw grant list'")
	}
	if err != nil {
		return gr, grantErr(err, "nothing was revoked")
	}
	return gr, nil
}

// grantErr is a grant's failure, exit 1, or the status err carries: 6
// when the receipt key needs a passphrase and there is no terminal to
// ask for it.
func grantErr(err error, hints ...string) error {
	code := ExitError
	var e *Error
	if errors.As(err, &e) && e.Code != ExitOK {
		code = e.Code
	}
	return WithCode(code, err, hints...)
}

// ApplyGrants gives eng the active grants of the claw home, so a dry run
// decides as the broker would. An unreadable store is an error the
// caller warns about: no grant applies.
func ApplyGrants(home string, eng *gate.Engine) error {
	gs, err := GrantStore(home).Load()
	if err != nil {
		return err
	}
	eng.SetGrants(grant.Active(gs, time.Now()))
	return nil
}
