package grant

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
)

func TestStore(t *testing.T) {
	dir := t.TempDir()
	s := Open(filepath.Join(dir, FileName))
	if gs, err := s.Load(); err != nil || len(gs) != 0 {
		t.Fatalf("empty store: %v %v", gs, err)
	}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	sc := Scope{Tool: "shell", Commands: []gate.GrantCommand{{Program: "go", Subcommand: "test"}}, Args: "any", Paths: []string{"/ws"}}
	a := Grant{ID: "g-a", By: "cli:alice", Channel: "cli", Created: now, Expires: now.Add(time.Hour), Scope: sc}
	b := Grant{ID: "g-b", By: "cli:alice", Channel: "cli", Created: now.Add(time.Second), Expires: now.Add(2 * time.Hour), Scope: sc}
	for _, g := range []Grant{a, b} {
		if err := s.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(a); err == nil {
		t.Fatal("a duplicate id was added")
	}
	if fi, err := os.Stat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi.Mode(), err)
	}
	gs, changed, err := s.LoadIfChanged()
	if err != nil || !changed || !reflect.DeepEqual(gs, []Grant{a, b}) {
		t.Fatalf("LoadIfChanged: %+v %v %v", gs, changed, err)
	}
	if _, changed, _ := s.LoadIfChanged(); changed {
		t.Fatal("unchanged file reported as changed")
	}
	if _, err := s.Revoke("g-a", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revoke("g-nope", now); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown id: %v", err)
	}
	gs, changed, _ = s.LoadIfChanged()
	if !changed || gs[0].State(now) != "revoked" || gs[1].State(now) != "active" || gs[1].State(now.Add(2*time.Hour)) != "expired" {
		t.Fatalf("states after revoke: %+v", gs)
	}
	act := Active(gs, now)
	if len(act) != 1 || act[0].ID != "g-b" {
		t.Fatalf("active: %+v", act)
	}
	if act := Active(gs, now.Add(3*time.Hour)); len(act) != 0 {
		t.Fatalf("expired grants are active: %+v", act)
	}
}

func TestDecodeStrict(t *testing.T) {
	good := `{"version":1,"grants":[{"id":"g-1","by":"x","channel":"cli","created":"2026-11-27T12:00:00Z","expires":"2026-11-27T13:00:00Z","scope":{"tool":"shell","commands":[{"program":"ls"}],"args":"any"}}]}`
	if _, err := Decode([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"unknown field": strings.Replace(good, `"by"`, `"who"`, 1),
		"version":       strings.Replace(good, `"version":1`, `"version":2`, 1),
		"no expiry":     strings.Replace(good, `,"expires":"2026-11-27T13:00:00Z"`, "", 1),
		"no id":         strings.Replace(good, `"id":"g-1"`, `"id":""`, 1),
		"bad scope":     strings.Replace(good, `"tool":"shell"`, `"tool":""`, 1),
		"relative path": strings.Replace(good, `"args":"any"`, `"args":"any","paths":["ws"]`, 1),
		"trailing":      good + "{}",
		"duplicate id":  strings.Replace(good, `}]}`, `},{"id":"g-1","by":"x","channel":"cli","created":"2026-11-27T12:00:00Z","expires":"2026-11-27T13:00:00Z","scope":{"tool":"time"}}]}`, 1),
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzDecode: a grant file either fails to decode or yields grants with
// unique ids, an expiry, and scopes that read back from their text.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"grants":[{"id":"g-1","by":"x","channel":"cli","created":"2026-11-27T12:00:00Z","expires":"2026-11-27T13:00:00Z","scope":{"tool":"shell","commands":[{"program":"go","subcommand":"test"}],"args":"any","paths":["/ws"]}}]}`))
	f.Add([]byte(`{"version":1,"grants":[{"id":"g-2","by":"x","channel":"cli","created":"2026-11-27T12:00:00Z","expires":"2026-11-27T13:00:00Z","scope":{"tool":"http","hosts":["example.com"],"methods":["GET"]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		gs, err := Decode(b)
		if err != nil {
			return
		}
		ids := map[string]bool{}
		for _, g := range gs {
			if g.ID == "" || ids[g.ID] || g.Expires.IsZero() {
				t.Fatalf("decoded an invalid grant: %+v", g)
			}
			ids[g.ID] = true
			back, err := Parse(Format(g.Scope))
			if err != nil || !reflect.DeepEqual(back, g.Scope) {
				t.Fatalf("scope does not read back: %+v -> %+v %v", g.Scope, back, err)
			}
		}
	})
}

func TestExpiry(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	e := Expiry{Default: time.Hour, Max: 24 * time.Hour}
	if got, _ := e.For(now, 0); !got.Equal(now.Add(time.Hour)) {
		t.Fatalf("default: %v", got)
	}
	if got, _ := e.For(now, 3*time.Hour); !got.Equal(now.Add(3 * time.Hour)) {
		t.Fatalf("given: %v", got)
	}
	if _, err := e.For(now, 25*time.Hour); err == nil {
		t.Fatal("longer than the maximum was accepted")
	}
	if _, err := e.For(now, -time.Hour); err == nil {
		t.Fatal("negative lifetime accepted")
	}
}
