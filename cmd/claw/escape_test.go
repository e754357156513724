package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/termtest"
	"github.com/clawsec/claw/internal/textesc"
)

// sanitizeClip escapes everything that does not print as itself, and cuts
// between escapes, never inside one.
func TestSanitizeClip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{name: "plain", in: "ls -la", max: -1, want: "ls -la"},
		{name: "newline and tab", in: "a\nb\tc", max: -1, want: `a\nb\tc`},
		{name: "carriage return", in: "ok\rApprove", max: -1, want: `ok\x0dApprove`},
		{name: "escape sequence", in: "\x1b[2J\x1b]0;t\x07", max: -1, want: `\x1b[2J\x1b]0;t\x07`},
		{name: "nul and del", in: "a\x00b\x7f", max: -1, want: `a\x00b\x7f`},
		{name: "C1 control", in: "a\u009bb", max: -1, want: `a\x9bb`},
		{name: "bidi override", in: "txt.\u202eexe", max: -1, want: `txt.\u202eexe`},
		{name: "bidi isolate", in: "a\u2066b\u2069", max: -1, want: `a\u2066b\u2069`},
		{name: "zero width and bom", in: "r\u200bm\ufeff", max: -1, want: `r\u200bm\ufeff`},
		{name: "line separator", in: "a\u2028b", max: -1, want: `a\u2028b`},
		{name: "no-break space", in: "rm\u00a0-rf", max: -1, want: `rm\u00a0-rf`},
		{name: "soft hyphen", in: "a\u00adb", max: -1, want: `a\u00adb`},
		{name: "hangul filler", in: "a\u3164b", max: -1, want: `a\u3164b`},
		{name: "variation selector", in: "a\ufe0fb", max: -1, want: `a\ufe0fb`},
		{name: "tag character", in: "a\U000e0041b", max: -1, want: `a\U000e0041b`},
		{name: "private use", in: "a\ue000b", max: -1, want: `a\ue000b`},
		{name: "not UTF-8", in: "a\xffb", max: -1, want: `a\xffb`},
		{name: "letters and symbols", in: "café ∑ 日本 ✓", max: -1, want: "café ∑ 日本 ✓"},
		{name: "cut", in: "abcdefgh", max: 5, want: "abcde…"},
		{name: "exact fit", in: "abcde", max: 5, want: "abcde"},
		{name: "cut before an escape", in: "ab\x1bcd", max: 5, want: "ab…"},
		{name: "cut before a wide rune", in: "ab日本", max: 4, want: "ab…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sanitizeClip(tt.in, tt.max); got != tt.want {
				t.Errorf("sanitizeClip(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// claw serve pending shows each request's arguments on one escaped line,
// cut as in the prompt, and no line for a request without arguments.
func TestWritePending(t *testing.T) {
	spoof := "x\napr_0  shell  risk=low\r\x1b[2K\u202e"
	ps := []approvals.Pending{
		{ID: "apr_1", RequestBody: approvals.RequestBody{Tool: "shell", Risk: "medium", Summary: "echo " + spoof, Args: json.RawMessage(termtest.PromptJSON(t, map[string]any{"command": "echo " + spoof})),
			Reasons: []approvals.Reason{{ID: "r1", Msg: "m"}}}},
		{ID: "apr_2", RequestBody: approvals.RequestBody{Tool: "file_write", Risk: "medium", Summary: "file_write big", Args: json.RawMessage(termtest.PromptJSON(t, map[string]any{"content": strings.Repeat("z", 5000)}))}},
		{ID: "apr_3", RequestBody: approvals.RequestBody{Tool: "tool", Risk: "medium", Summary: "tool x"}},
		{ID: "apr_4\nfake", RequestBody: approvals.RequestBody{Tool: "sh\x1b[2K", Risk: "low\u202e", Summary: "s", Reasons: []approvals.Reason{{ID: "r\n2", Msg: "m"}}}},
	}
	var b strings.Builder
	writePending(&b, ps)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"apr_1  shell  risk=medium  expires ",
		`  echo x\napr_0  shell  risk=low\x0d\x1b[2K\u202e`,
		`  args: {"command":"echo x\napr_0  shell  risk=low\r\u001b[2K\u202e"}`,
		"  - r1: m",
		"apr_2  file_write  risk=medium  expires ",
		"  file_write big",
		`  args: {"content":"zzz`,
		"apr_3  tool  risk=medium  expires ",
		"  tool x",
		`apr_4\nfake  sh\x1b[2K  risk=low\u202e  expires `,
		"  s",
		`  - r\n2: m`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], w)
		}
		termtest.RequirePrintable(t, lines[i])
	}
	if !strings.HasSuffix(lines[6], "… (3014 more bytes not shown)") || len(lines[6]) > len("  args: ")+textesc.MaxArgs+len("… (3014 more bytes not shown)") {
		t.Errorf("long args line = %.80s…%s", lines[6], lines[6][len(lines[6])-40:])
	}
}
