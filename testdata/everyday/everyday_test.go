package everyday_test

import (
	"bytes"
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/testdata/everyday"
)

const (
	home      = "/home/claw"
	workspace = "/home/claw/ws"
	minCases  = 300
	// maxAskPercent is the share of everyday actions that may ask at
	// supervised autonomy.
	maxAskPercent = 5
)

// TestEverydayAtSupervised decides every case at supervised autonomy with
// the default configuration plus github.com (which a user who clones from
// GitHub adds), and again with allowed_domains replaced by a user's own
// short list (example.com and api.github.com, plus github.com) as a config
// file that sets the key does: none is denied, and at most maxAskPercent
// ask. The second holds package installs to allowed_registries, which a
// user's allowed_domains does not replace.
func TestEverydayAtSupervised(t *testing.T) {
	cases := load(t)
	if len(cases) < minCases {
		t.Fatalf("the corpus has %d cases, want at least %d", len(cases), minCases)
	}
	cfg := defaultConfig(t)
	for _, v := range []struct {
		name    string
		domains []string
	}{
		{"defaults", append(append([]string{}, cfg.Security.AllowedDomains...), "github.com")},
		{"own allowed_domains", []string{"example.com", "api.github.com", "github.com"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			pol := runtime.Policy(cfg)
			pol.AllowedDomains = v.domains
			decideAll(t, cases, pol)
		})
	}
}

func defaultConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default(home)
	if err := cfg.Expand(func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func decideAll(t *testing.T, cases []gate.Case, pol gate.Policy) {
	t.Helper()
	ctx := context.Background()
	// A generous bound: this test is about decisions, not speed, and a
	// busy machine must not turn a decision into a timeout deny.
	eng, err := gate.New(ctx, gate.Options{Policy: pol, Home: home, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	asks := 0
	for _, c := range cases {
		d, err := eng.Decide(ctx, c.Action, gate.Context{Autonomy: "supervised", Workspace: workspace, Cwd: workspace, Home: home, Channel: "test"})
		if err != nil {
			t.Fatalf("%s: %v", c.Where, err)
		}
		switch d.Decision {
		case gate.Deny, gate.Passphrase:
			t.Errorf("%s %s: %s %v", c.Where, c.Name, d.Decision, d.RuleIDs())
		case gate.Ask:
			asks++
			t.Logf("ask: %s %v", c.Name, d.RuleIDs())
		}
	}
	if asks*100 > maxAskPercent*len(cases) {
		t.Errorf("%d of %d everyday actions ask (%.1f%%), want at most %d%%", asks, len(cases), 100*float64(asks)/float64(len(cases)), maxAskPercent)
	}
	t.Logf("%d cases: %d ask (%.1f%%)", len(cases), asks, 100*float64(asks)/float64(len(cases)))
}

func load(t *testing.T) []gate.Case {
	t.Helper()
	names, err := fs.Glob(everyday.FS, "*.jsonl")
	if err != nil || len(names) == 0 {
		t.Fatalf("no case files: %v", err)
	}
	var all []gate.Case
	seen := map[string]bool{}
	for _, n := range names {
		b, err := everyday.FS.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := gate.ParseCases(bytes.NewReader(b), n)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if seen[c.Name] {
				t.Errorf("%s: duplicate name %q", c.Where, c.Name)
			}
			seen[c.Name] = true
			if c.Autonomy != "supervised" {
				t.Errorf("%s: autonomy %q, want supervised", c.Where, c.Autonomy)
			}
		}
		all = append(all, cases...)
	}
	return all
}
