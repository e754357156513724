package gate

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestGrantTurnsAskIntoAllow(t *testing.T) {
	eng := newTestEngine(t, testPolicy(), "")
	ctx := context.Background()
	c := testContext("supervised")
	d, err := eng.Decide(ctx, shellAction("go test ./..."), c)
	if err != nil || d.Decision != Ask {
		t.Fatalf("without a grant: %s %v", d.Decision, err)
	}
	now := time.Now()
	eng.grants.now = func() time.Time { return now }
	eng.SetGrants([]Grant{{ID: "g-1", Expires: now.Add(time.Hour), Scope: GrantScope{
		Tool: "shell", Commands: []GrantCommand{{Program: "go", Subcommand: "test"}}, Args: "any", Paths: []string{"/home/u/ws"}}}})
	d, err = eng.Decide(ctx, shellAction("go test ./..."), c)
	if err != nil || d.Decision != Allow || d.Grant != "g-1" || !slices.Contains(d.RuleIDs(), "grant.applied") {
		t.Fatalf("with a grant: %+v %v", d, err)
	}
	for _, cmd := range []string{"go run ./...", "go test ./... && curl x", "rm -rf /", "go test $(cat x)"} {
		d, _ := eng.Decide(ctx, shellAction(cmd), c)
		if d.Decision == Allow {
			t.Errorf("%s: allowed by a go test grant: %+v", cmd, d)
		}
	}
	// expiry takes effect without another SetGrants
	now = now.Add(2 * time.Hour)
	d, _ = eng.Decide(ctx, shellAction("go test ./..."), c)
	if d.Decision != Ask || d.Grant != "" {
		t.Fatalf("expired grant still applies: %+v", d)
	}
}
