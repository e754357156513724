package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/term"
)

func TestSetHashLine(t *testing.T) {
	const h = "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA"
	const line = `passphrase_hash = "` + h + `"`
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "replaces the line in [security]",
			in:   "a = 1\n[security]\nautonomy = \"full\"\npassphrase_hash = \"\" # set me\n[sandbox]\n",
			want: "a = 1\n[security]\nautonomy = \"full\"\n" + line + "\n[sandbox]\n"}, // the whole line is replaced
		{name: "keeps CRLF",
			in:   "[security]\r\npassphrase_hash = \"old\"\r\n",
			want: "[security]\r\n" + line + "\r\n"},
		{name: "inserts after the header",
			in:   "[security]\nautonomy = \"full\"\n[sandbox]\npassphrase_hash = \"not this one\"\n",
			want: "[security]\n" + line + "\nautonomy = \"full\"\n[sandbox]\npassphrase_hash = \"not this one\"\n"},
		{name: "header with a comment, last table, no final newline",
			in:   "[security] # gate\nautonomy = \"full\"",
			want: "[security] # gate\n" + line + "\nautonomy = \"full\""},
		{name: "header as the last line",
			in:   "[security]",
			want: "[security]\n" + line + "\n"},
		{name: "appends a table",
			in:   "[sandbox]\ntimeout = \"30s\"",
			want: "[sandbox]\ntimeout = \"30s\"\n\n[security]\n" + line + "\n"},
		{name: "empty file",
			in:   "",
			want: "\n[security]\n" + line + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(SetHashLine([]byte(tt.in), h)); got != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestPassphraseLine(t *testing.T) {
	long := strings.Repeat("x", term.MaxPassphraseInput+1)
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"correct horse\n", "correct horse", true},
		{"correct horse\r\nrest", "correct horse", true}, // one line only
		{"no newline", "no newline", true},
		{"short\n", "", false},
		{long, "", false}, // over the bound with no end of line
		{strings.Repeat("x", term.MaxPassphraseInput) + "\n", strings.Repeat("x", term.MaxPassphraseInput), true},
	}
	for _, tt := range tests {
		got, err := PassphraseLine(strings.NewReader(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("PassphraseLine(%.20q) = %.20q, %v; want %.20q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && ExitCode(err) != ExitError {
			t.Errorf("PassphraseLine(%.20q): exit status %d, want %d", tt.in, ExitCode(err), ExitError)
		}
	}
}

func TestNewPassphrase(t *testing.T) {
	answers := func(a ...string) func(string) (string, error) {
		return func(string) (string, error) {
			if len(a) == 0 {
				return "", errors.New("asked too often")
			}
			s := a[0]
			a = a[1:]
			return s, nil
		}
	}
	if got, err := NewPassphrase(answers("correct horse", "correct horse")); err != nil || got != "correct horse" {
		t.Errorf("the same twice: %q, %v", got, err)
	}
	if _, err := NewPassphrase(answers("correct horse", "correct horsf")); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Errorf("different: %v, want a mismatch", err)
	}
	if _, err := NewPassphrase(answers("short")); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Errorf("short: %v, want too short before asking again", err)
	}
}
