package broker

import (
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// TestRecordedArgs: the receipt's copy of the arguments is canonical
// (sorted keys), keeps payloads only as digests, redacts secrets and says
// so, and leaves out what is too large.
func TestRecordedArgs(t *testing.T) {
	red := func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") }
	tests := []struct {
		name     string
		tool     toolkind.Kind
		in       string
		want     string
		redacted bool
		omitted  string
	}{
		{"canonical", "shell", `{"command":"ls","b":1}`, `{"b":1,"command":"ls"}`, false, ""},
		{"secret", "shell", `{"command":"echo hunter2"}`, `{"command":"echo [REDACTED]"}`, true, ""},
		{"secret key", "http", `{"url":"https://x/","headers":{"Authorization":"Bearer abc"}}`, `{"headers":{"Authorization":"[REDACTED]"},"url":"https://x/"}`, true, ""},
		{"payload", "file_write", `{"path":"a","content":"hunter2 data"}`, `{"content":"` + receipts.Digest([]byte("hunter2 data")) + `","path":"a"}`, false, ""},
		{"edit", "edit_file", `{"path":"a","old":"x","new":"y"}`, `{"new":"` + receipts.Digest([]byte("y")) + `","old":"` + receipts.Digest([]byte("x")) + `","path":"a"}`, false, ""},
		{"too large", "shell", `{"command":"` + strings.Repeat("a", maxRecordedArgs) + `"}`, "", false, "too_large"},
		{"null", "time", `null`, `{}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, redacted, omitted := recordedArgs(tt.tool, []byte(tt.in), red)
			if got != tt.want || redacted != tt.redacted || omitted != tt.omitted {
				t.Fatalf("got %q %v %q, want %q %v %q", got, redacted, omitted, tt.want, tt.redacted, tt.omitted)
			}
			if strings.Contains(got, "hunter2") {
				t.Fatalf("a secret or payload reached the receipt: %s", got)
			}
		})
	}
}
