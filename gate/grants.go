package gate

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/storage"

	"github.com/clawsec/claw/internal/toolkind"
)

// A Grant is an approver's answer that covers a scoped family of actions
// until it expires: while it is in force, an action its scope covers that
// the policies would ask about is allowed instead, with reason
// grant.applied naming the grant. A grant never changes a deny or a
// passphrase decision. The store, the scope syntax and the proposals live
// in package internal/grant; the gate only matches (policies/grants.rego).
type Grant struct {
	ID      string
	Expires time.Time
	Scope   GrantScope
}

// GrantScope is what a grant covers. Every fact of an action must lie
// inside it:
//
//   - Tool: the action's tool (required).
//   - Commands: for shell, every simple command the string runs must be one
//     of these programs (by name), and with Subcommand set its first
//     argument must be that subcommand. Args is "any" (more arguments may
//     follow) or "none" (nothing else).
//   - Paths: every canonical path the action reads or writes lies under
//     one of these prefixes; without any, the action may touch no path.
//   - Hosts: every network host the action reaches (today the http tool's
//     URL host) is one of these; without any, it may reach none.
//   - Methods: the http method is one of these.
//   - Autonomy, Conversation: when set, the action's must be equal.
//
// Shell commands the gate marks (inline code, exec flags, interpreters
// reading stdin), dynamic or unparseable commands and invalid input are
// never covered.
type GrantScope struct {
	Tool         toolkind.Kind  `json:"tool"`
	Commands     []GrantCommand `json:"commands,omitempty"`
	Args         string         `json:"args,omitempty"`
	Paths        []string       `json:"paths,omitempty"`
	Hosts        []string       `json:"hosts,omitempty"`
	Methods      []string       `json:"methods,omitempty"`
	Autonomy     string         `json:"autonomy,omitempty"`
	Conversation string         `json:"conversation,omitempty"`
}

// GrantCommand is one program (and optional subcommand) of a scope.
type GrantCommand struct {
	Program    string `json:"program"`
	Subcommand string `json:"subcommand,omitempty"`
}

// grantState is the grant set the engine was given, numbered so that each
// compiled policy set knows whether it holds the newest.
type grantState struct {
	mu  sync.Mutex // serialises writes into the stores
	set atomic.Pointer[grantSet]
	now func() time.Time // nil: time.Now
}

type grantSet struct {
	gen    uint64
	grants []Grant
}

// grantsWritten is what a compiled policy set's store holds: the grant
// set's generation and the earliest expiry among the grants written (0:
// none), after which the store must be written again without it.
type grantsWritten struct {
	gen  atomic.Uint64
	next atomic.Int64 // unix nanoseconds
}

// SetGrants replaces the grants in force. Expired grants are left out at
// every decision, so a grant stops applying the moment it expires, without
// another call.
func (e *Engine) SetGrants(gs []Grant) {
	s := &e.grants
	s.mu.Lock()
	defer s.mu.Unlock()
	var gen uint64 = 1
	if old := s.set.Load(); old != nil {
		gen = old.gen + 1
	}
	s.set.Store(&grantSet{gen: gen, grants: append([]Grant(nil), gs...)})
}

func (s *grantState) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// syncGrants writes the grants in force into c's store when c does not
// hold the newest set, or when one of those it holds has expired.
func (e *Engine) syncGrants(ctx context.Context, c *compiled) error {
	s := &e.grants
	set := s.set.Load()
	if set == nil {
		return nil
	}
	now := s.clock()
	if c.granted.gen.Load() == set.gen {
		next := c.granted.next.Load()
		if next == 0 || now.UnixNano() < next {
			return nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set = s.set.Load()
	active := make([]any, 0, len(set.grants))
	var next int64
	for _, g := range set.grants {
		if !now.Before(g.Expires) {
			continue
		}
		if n := g.Expires.UnixNano(); next == 0 || n < next {
			next = n
		}
		active = append(active, grantValue(g))
	}
	if err := storage.WriteOne(ctx, c.store, storage.ReplaceOp, storage.MustParsePath("/claw/grants"), active); err != nil {
		return fmt.Errorf("writing grants into the policy data: %w", err)
	}
	c.granted.gen.Store(set.gen)
	c.granted.next.Store(next)
	return nil
}

// grantValue is a grant as the policies see it in data.claw.grants.
func grantValue(g Grant) map[string]any {
	strs := func(s []string) []any {
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = v
		}
		return out
	}
	cmds := make([]any, len(g.Scope.Commands))
	for i, c := range g.Scope.Commands {
		cmds[i] = map[string]any{"program": c.Program, "subcommand": c.Subcommand}
	}
	args := g.Scope.Args
	if args == "" {
		args = "any"
	}
	return map[string]any{
		"id": g.ID,
		"scope": map[string]any{
			"tool":         g.Scope.Tool,
			"commands":     cmds,
			"args":         args,
			"paths":        strs(g.Scope.Paths),
			"hosts":        strs(g.Scope.Hosts),
			"methods":      strs(g.Scope.Methods),
			"autonomy":     g.Scope.Autonomy,
			"conversation": g.Scope.Conversation,
		},
	}
}
