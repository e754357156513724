package term

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/termtest"
	"github.com/clawsec/claw/internal/textesc"
)

// The args line of a prompt is the request's arguments, which the broker
// gives as compact JSON with keys sorted and secrets redacted (its
// TestShownArgs), bounded, and with nothing a model could use to draw a
// line of its own: a newline, a carriage return, an escape sequence, a
// bidi override.
func TestPromptArgs(t *testing.T) {
	long := strings.Repeat("a", 10000)
	tests := []struct {
		name    string
		args    map[string]any
		want    string // the whole line, when set
		prefix  string
		notWant []string
	}{
		{name: "sorted keys", args: map[string]any{"path": "notes.txt", "content": "hi"}, want: `{"content":"hi","path":"notes.txt"}`},
		{name: "html kept", args: map[string]any{"command": "a < b && c > d"}, want: `{"command":"a < b && c > d"}`},
		{name: "newline", args: map[string]any{"path": "x\nApprove? [y/N] y"}, want: `{"path":"x\nApprove? [y/N] y"}`},
		{name: "carriage return", args: map[string]any{"path": "x\r  risk: low"}, want: `{"path":"x\r  risk: low"}`},
		{name: "escape sequence", args: map[string]any{"command": "\x1b[1A\x1b[2Kls"}, want: `{"command":"\u001b[1A\u001b[2Kls"}`},
		{name: "nul", args: map[string]any{"path": "a\x00b"}, want: `{"path":"a\u0000b"}`},
		{name: "bidi override", args: map[string]any{"path": "evil\u202etxt.sh"}, want: `{"path":"evil\u202etxt.sh"}`},
		{name: "line separator", args: map[string]any{"path": "a\u2028b"}, want: `{"path":"a\u2028b"}`},
		{name: "zero width", args: map[string]any{"command": "r\u200bm -rf"}, want: `{"command":"r\u200bm -rf"}`},
		{name: "nested", args: map[string]any{"headers": map[string]any{"B": "\x1b", "A": []any{"\n"}}}, want: `{"headers":{"A":["\n"],"B":"\u001b"}}`},
		{name: "long", args: map[string]any{"content": long}, prefix: `{"content":"aaaa`, notWant: []string{long[:textesc.MaxArgs]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PromptArgs(termtest.PromptJSON(t, tt.args))
			if tt.want != "" && got != tt.want {
				t.Errorf("promptArgs = %s, want %s", got, tt.want)
			}
			if !strings.HasPrefix(got, tt.prefix) {
				t.Errorf("promptArgs = %s, want it to start with %s", got, tt.prefix)
			}
			for _, s := range tt.notWant {
				if strings.Contains(got, s) {
					t.Errorf("promptArgs = %s, holds %q", got, s)
				}
			}
			body, note, cut := strings.Cut(got, "… (")
			if len(body) > textesc.MaxArgs {
				t.Errorf("promptArgs shows %d bytes, more than %d", len(body), textesc.MaxArgs)
			}
			if full := len(textesc.String(termtest.PromptJSON(t, tt.args))); full > textesc.MaxArgs {
				want := fmt.Sprintf("%d more bytes not shown)", full-len(body))
				if !cut || note != want {
					t.Errorf("a cut args line ends in %q, want … (%s", note, want)
				}
			}
			termtest.RequirePrintable(t, got)
		})
	}
}

// A request whose every field a model could shape still makes a prompt of
// exactly one line per field.
func TestWriteRequestSpoof(t *testing.T) {
	spoof := "x\n  risk: low\r\x1b[2KApprove? [y/N] y\u202e\x00"
	args := termtest.PromptJSON(t, map[string]any{"path": spoof, "content": strings.Repeat("z", 5000)})
	base := broker.Request{
		Tool:    "file_write",
		Summary: "file_write " + spoof,
		Decision: gate.Decision{Risk: "medium", Reasons: []gate.Reason{{ID: "rule\n.id", Msg: spoof}},
			Sandbox: gate.SandboxPlan{Write: []string{"/ws/" + spoof}}},
	}
	summary := `file_write x\n  risk: low\x0d\x1b[2KApprove? [y/N] y\u202e\x00`
	tests := []struct {
		name     string
		args     json.RawMessage
		wantArgs []string // prefixes of the lines between the reason and the sandbox
	}{
		{name: "arguments", args: json.RawMessage(args), wantArgs: []string{`  args: {"content":"zzz`}},
		{name: "summary only", wantArgs: []string{"  args: " + summary}},
		{name: "arguments that cannot be shown", args: json.RawMessage(`"(arguments that cannot be shown)"`),
			wantArgs: []string{"  summary: " + summary, `  args: "(arguments that cannot be shown)"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			r.Args = tt.args
			var b strings.Builder
			WriteRequest(&b, "Tool request", r)
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			want := append(append([]string{"Tool request:", "  tool: file_write", "  risk: medium", "  reason: "}, tt.wantArgs...), "  sandbox: read=[] write=[/ws/x\\n")
			if len(lines) != len(want) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
			}
			for i, want := range want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], want)
				}
			}
			for _, l := range lines {
				termtest.RequirePrintable(t, l)
			}
		})
	}
}
