package audit

import (
	"strings"
	"testing"

	"github.com/clawsec/claw/receipts"
)

// TestRecordedAction: a decision receipt is re-decided only from the
// complete, unredacted canonical arguments of a version 2 body; every
// other receipt says why not.
func TestRecordedAction(t *testing.T) {
	body := func(v int, a receipts.Action) *receipts.Body {
		return &receipts.Body{V: v, Type: receipts.TypeDecision, Action: &a, Decision: &receipts.Decision{Result: "allow"}}
	}
	tests := []struct {
		name string
		b    *receipts.Body
		why  string
	}{
		{"v2", body(2, receipts.Action{Tool: "shell", Args: `{"command":"ls"}`}), ""},
		{"v1", body(1, receipts.Action{Tool: "shell", Summary: "ls"}), "receipt version 1"},
		{"too large", body(2, receipts.Action{Tool: "shell", ArgsOmitted: "too_large"}), "not kept (too_large)"},
		{"redacted", body(2, receipts.Action{Tool: "shell", Args: `{"command":"echo [REDACTED]"}`, ArgsRedacted: true}), "secret was redacted"},
		{"malformed", body(2, receipts.Action{Tool: "shell", Args: `{"command":`}), "do not parse"},
		{"trailing", body(2, receipts.Action{Tool: "shell", Args: `{"command":"ls"},{}`}), "do not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, why := recordedAction(tt.b)
			if tt.why == "" {
				if why != "" || a.Tool != "shell" || a.Args["command"] != "ls" {
					t.Fatalf("got %+v %q", a, why)
				}
				return
			}
			if !strings.Contains(why, tt.why) {
				t.Fatalf("why = %q, want %q", why, tt.why)
			}
		})
	}
}
