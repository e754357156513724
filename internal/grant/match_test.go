package grant

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/bypass"
)

// These tests match scopes with the real gate (OPA and the built-in
// policies): the matcher under test is policies/grants.rego.

func testEngine(t testing.TB) (*gate.Engine, string) {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	ws := filepath.Join(root, "ws")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	eng, err := gate.New(context.Background(), gate.Options{Home: "/home/u", Timeout: 5 * time.Second, Policy: gate.Policy{
		WorkspaceOnly:     true,
		ForbiddenPaths:    []string{"/etc", "/home/u/.ssh"},
		ReadPaths:         []string{"/usr", "/bin", "/lib"},
		ForbiddenCommands: []string{"rm", "shutdown", "reboot", "mkfs", "dd"},
		AllowedCommands:   []string{"ls", "cat", "grep", "echo", "git", "go", "npm", "node", "python3", "make", "sed", "head", "wc"},
		AllowedDomains:    []string{"example.com", "api.github.com"},
		PassphraseFor:     []string{"high"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return eng, ws
}

// covers is the scope's description, read as a specification: the
// proposal for an action (its own scope) lies within sc.
func covers(sc, own Scope) bool {
	if sc.Tool != own.Tool || sc.Autonomy != "" && sc.Autonomy != own.Autonomy || sc.Conversation != "" && sc.Conversation != own.Conversation {
		return false
	}
	for _, c := range own.Commands {
		if !slices.ContainsFunc(sc.Commands, func(s gate.GrantCommand) bool {
			return s.Program == c.Program && (s.Subcommand == "" || s.Subcommand == c.Subcommand)
		}) {
			return false
		}
	}
	for _, p := range own.Paths {
		if !slices.ContainsFunc(sc.Paths, func(pre string) bool { return p == pre || strings.HasPrefix(p, strings.TrimSuffix(pre, "/")+"/") }) {
			return false
		}
	}
	for _, h := range own.Hosts {
		if !slices.Contains(sc.Hosts, h) {
			return false
		}
	}
	for _, m := range own.Methods {
		if !slices.Contains(sc.Methods, m) {
			return false
		}
	}
	return true
}

func fuzzAction(kind byte, s, ws string) gate.Action {
	switch kind % 4 {
	case 1:
		return gate.Action{Tool: "file_write", Args: map[string]any{"path": s, "content": "x"}}
	case 2:
		m := "GET"
		if len(s) > 0 && s[0]%2 == 1 {
			m = "POST"
		}
		return gate.Action{Tool: "http", Args: map[string]any{"url": "https://" + s, "method": m}}
	case 3:
		return gate.Action{Tool: "edit_file", Args: map[string]any{"path": s, "old": "a", "new": "b"}}
	}
	return gate.Action{Tool: "shell", Args: map[string]any{"command": s}}
}

// FuzzScopeMatch fuzzes the matcher against the scope's own description:
// the scope proposed for action A reads back unchanged from its text, the
// grant made of it turns A's ask into an allow, and it applies to another
// action B exactly when B asks and B's own scope lies within A's by the
// description (covers): no more, no less.
func FuzzScopeMatch(f *testing.F) {
	seeds := [][3]string{
		{"go test ./...", "go test -run X ./src", "\x00"},
		{"go test ./...", "go run .", "\x00"},
		{"git status", "git status && ls", "\x00"},
		{"git status", "git log --oneline", "\x00"},
		{"git diff", "git diff --stat", "\x00"},
		{"ls src", "ls /usr", "\x00"},
		{"npm test", "npm install left-pad", "\x00"},
		{"python3 -m pytest", "python3 -c 'import os'", "\x00"},
		{"cat src/a.go | grep x", "grep x src/a.go | cat", "\x00"},
		{"src/a.go", "src/b.go", "\x01"},
		{"example.com/a", "example.com/b", "\x02"},
		{"api.github.com/x", "example.com/x", "\x02"},
		{"src/a.go", "/tmp/x", "\x03"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2][0])
	}
	eng, ws := testEngine(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, a, b string, kind byte) {
		gc := gate.Context{Autonomy: "supervised", Workspace: ws, Cwd: ws, Home: "/home/u", Channel: "cli"}
		eng.SetGrants(nil)
		inA := gate.BuildInput(fuzzAction(kind, a, ws), gc)
		sc, ok := Propose(inA)
		if !ok {
			return
		}
		text := Format(sc)
		back, err := Parse(text)
		if err != nil || !reflect.DeepEqual(back, sc) {
			if len(text) > MaxScopeBytes && err != nil {
				return
			}
			t.Fatalf("scope %q does not read back: %+v %v", text, back, err)
		}
		actB := fuzzAction(kind, b, ws)
		dA, _ := eng.DecideInput(ctx, inA)
		inB := gate.BuildInput(actB, gc)
		dB, _ := eng.DecideInput(ctx, inB)
		eng.SetGrants([]gate.Grant{{ID: "g-fuzz", Expires: time.Now().Add(time.Hour), Scope: sc}})
		gA, _ := eng.DecideInput(ctx, inA)
		gB, _ := eng.DecideInput(ctx, inB)
		if dA.Decision == gate.Ask && (gA.Decision != gate.Allow || gA.Grant != "g-fuzz") {
			t.Fatalf("the scope %q does not cover its own action %+v: %+v", text, inA.Action, gA)
		}
		if dA.Decision != gate.Ask && !reflect.DeepEqual(dA, gA) {
			t.Fatalf("a grant changed a %s: %+v -> %+v", dA.Decision, dA, gA)
		}
		own, ownOK := Propose(inB)
		want := dB.Decision == gate.Ask && ownOK && covers(sc, own)
		got := gB.Grant == "g-fuzz"
		if got != want {
			t.Fatalf("scope %q (%s) on %+v (own scope %q, ok=%v, decision %s): applied=%v, described=%v",
				text, Describe(sc), inB.Action, Format(own), ownOK, dB.Decision, got, want)
		}
		if !got && !reflect.DeepEqual(dB, gB) {
			t.Fatalf("a grant that does not apply changed the decision: %+v -> %+v", dB, gB)
		}
	})
}

// TestCorpusGrantsChangeOnlyAsks runs every case of the attack and bypass
// corpus with grants as wide as its facts allow (every program it runs,
// any arguments, every path under /, its host, every method) and with the
// scope proposed for it: a deny, a passphrase or an allow comes out
// exactly as without grants, and an ask either stays or becomes an allow
// naming the grant.
func TestCorpusGrantsChangeOnlyAsks(t *testing.T) {
	eng, _ := testEngine(t)
	ctx := context.Background()
	names, _ := fs.Glob(bypass.FS, "*.jsonl")
	n, denies, asksAllowed := 0, 0, 0
	for _, name := range names {
		b, _ := bypass.FS.ReadFile(name)
		cases, err := gate.ParseCases(bytes.NewReader(b), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			ws := c.Workspace
			if ws == "" {
				ws = "/home/u/ws"
			}
			gc := gate.Context{Autonomy: c.Autonomy, Workspace: ws, Cwd: ws, Home: "/home/u", Channel: "cli"}
			in := gate.BuildInput(c.Action, gc)
			eng.SetGrants(nil)
			before, _ := eng.DecideInput(ctx, in)
			eng.SetGrants(widest(in))
			after, _ := eng.DecideInput(ctx, in)
			n++
			switch before.Decision {
			case gate.Ask:
				if after.Decision == gate.Allow {
					asksAllowed++
					if after.Grant == "" || !slices.Contains(after.RuleIDs(), "grant.applied") {
						t.Errorf("%s: allowed without naming a grant: %+v", c.Name, after)
					}
				} else if !reflect.DeepEqual(before, after) {
					t.Errorf("%s: %+v -> %+v", c.Name, before, after)
				}
			default:
				if before.Decision == gate.Deny {
					denies++
				}
				if !reflect.DeepEqual(before, after) {
					t.Errorf("%s: a grant changed a %s: %+v -> %+v", c.Name, before.Decision, before, after)
				}
			}
		}
	}
	if n < 300 || denies < 100 || asksAllowed == 0 {
		t.Fatalf("%d cases, %d denies, %d asks allowed: the corpus did not load or nothing was tested", n, denies, asksAllowed)
	}
	t.Logf("%d cases: %d denies unchanged, %d asks allowed by a grant", n, denies, asksAllowed)
}

// widest returns the widest grants for in's facts, and its proposal.
func widest(in *gate.Input) []gate.Grant {
	sc := Scope{Tool: in.Action.Tool, Args: "any", Paths: []string{"/"}, Methods: []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "INVALID"}}
	if in.Parsed != nil {
		for _, c := range in.Parsed.Commands {
			sc.Commands = append(sc.Commands, gate.GrantCommand{Program: c.Name})
		}
	}
	if in.URL != nil {
		sc.Hosts = []string{in.URL.Host}
	}
	exp := time.Now().Add(time.Hour)
	gs := []gate.Grant{{ID: "g-wide", Expires: exp, Scope: sc}}
	if own, ok := Propose(in); ok {
		gs = append(gs, gate.Grant{ID: "g-own", Expires: exp, Scope: own})
	}
	return gs
}
