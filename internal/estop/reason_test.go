package estop

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clawsec/claw/internal/redact"
)

// TestCleanReason: the reason kept in the file and the receipt is one
// line, bounded, valid UTF-8, without control characters or the secrets
// the redactor finds.
func TestCleanReason(t *testing.T) {
	secret := "sk-ant-api03-" + strings.Repeat("A", 40)
	long := "a" + strings.Repeat("é", MaxReason) // two bytes each after one: the cut falls in a rune
	for _, in := range []string{"line one\nline two\r\n\tthree", "bell\a and escape \x1b[31m", "key " + secret, long} {
		out := CleanReason(in, redact.String)
		if strings.ContainsAny(out, "\n\r\t\a\x1b") {
			t.Errorf("CleanReason(%q) = %q: a control character is left", in, out)
		}
		if strings.Contains(out, secret) {
			t.Errorf("CleanReason(%q) = %q: the secret is left", in, out)
		}
		if !utf8.ValidString(out) || len(out) > MaxReason+len("…") {
			t.Errorf("CleanReason(%q) = %q: not valid UTF-8 or longer than %d bytes", in, out, MaxReason)
		}
	}
}
