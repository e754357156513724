package runtime

import (
	"errors"
	"reflect"
	"testing"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/toolkind"
)

// TestDryRunAction: positional arguments map to the tool's arguments in
// the order claw gate test --help gives; too few or too many, or a bad
// ARGS-JSON, are errors; an unknown tool is the gate's to deny, not an
// error.
func TestDryRunAction(t *testing.T) {
	tests := []struct {
		args []string
		want map[string]any
		err  bool
	}{
		{args: []string{"shell", "rm", "-rf", "/"}, want: map[string]any{"command": "rm -rf /"}},
		{args: []string{"shell"}, err: true},
		{args: []string{"file_read", "a"}, want: map[string]any{"path": "a"}},
		{args: []string{"file_read"}, err: true},
		{args: []string{"file_write", "a", "b"}, want: map[string]any{"path": "a", "content": "b"}},
		{args: []string{"edit_file", "a", "b", "c"}, want: map[string]any{"path": "a", "old": "b", "new": "c"}},
		{args: []string{"http", "https://x.example/", "POST"}, want: map[string]any{"url": "https://x.example/", "method": "POST"}},
		{args: []string{"http", "u", "GET", "extra"}, err: true},
		{args: []string{"time"}, want: map[string]any{}},
		{args: []string{"time", "now"}, err: true},
		{args: []string{"tool", "s", "n", `{"a":1}`}, want: map[string]any{"server": "s", "name": "n", "args": map[string]any{"a": 1.0}}},
		{args: []string{"plugin", "p", "t"}, want: map[string]any{"plugin": "p", "tool": "t"}},
		{args: []string{"plugin", "p"}, err: true},
		{args: []string{"tool", "s", "n", "{bad"}, err: true},
		{args: []string{"frob", "a", "b"}, want: map[string]any{"args": []string{"a", "b"}}},
	}
	for _, tt := range tests {
		a, err := DryRunAction("", tt.args)
		if tt.err {
			if err == nil {
				t.Errorf("%q: no error, action %v", tt.args, a.Args)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if a.Tool != toolkind.Kind(tt.args[0]) || !reflect.DeepEqual(a.Args, tt.want) {
			t.Errorf("%q: %s %v, want %s %v", tt.args, a.Tool, a.Args, tt.args[0], tt.want)
		}
	}
}

// TestOverridePolicy: a case's config replaces the keys it names and
// keeps the others; a passphrase hash turns the passphrase on; an unknown
// key is an error, not ignored.
func TestOverridePolicy(t *testing.T) {
	base := Policy(config.Default(t.TempDir()))
	got, err := overridePolicy(base, map[string]any{"forbidden_commands": []any{"ls"}, "passphrase_hash": "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.ForbiddenCommands, want.PassphraseEnabled = []string{"ls"}, true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := overridePolicy(base, map[string]any{"no_such_key": true}); err == nil {
		t.Error("an unknown key was accepted")
	}
}

// TestToolAction: claw tool run refuses malformed arguments and the tools
// the agent runtime carries out, as usage errors.
func TestToolAction(t *testing.T) {
	a, err := ToolAction("file_read", `{"path":"x"}`)
	if err != nil || a.Tool != "file_read" || a.Args["path"] != "x" {
		t.Fatalf("ToolAction = %+v, %v", a, err)
	}
	for _, tt := range []struct{ name, args string }{{"file_read", `{"path":`}, {"ask_user", ""}, {"time", ""}} {
		_, err := ToolAction(tt.name, tt.args)
		var e *Error
		if !errors.As(err, &e) || e.Code != ExitUsage {
			t.Errorf("%s %s: %v, want a usage error", tt.name, tt.args, err)
		}
	}
}

// TestDecisionExit: allow exits 0, ask and passphrase 6, anything else 3.
func TestDecisionExit(t *testing.T) {
	for d, want := range map[string]int{gate.Allow: ExitOK, gate.Ask: ExitNeedsHuman, gate.Passphrase: ExitNeedsHuman, gate.Deny: ExitDenied, "": ExitDenied} {
		if got := ExitCode(DecisionExit(gate.Decision{Decision: d})); got != want {
			t.Errorf("%q: exit %d, want %d", d, got, want)
		}
	}
}
