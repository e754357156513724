package redact

import (
	"strings"
	"testing"
)

const planted = "sk-test-PLANTED-0123456789abcdef"

func TestString(t *testing.T) {
	t.Setenv("CLAW_TEST_PROVIDER_KEY", "plain-secret-value-42")
	tests := []struct {
		name   string
		in     string
		want   string // exact result, when set
		gone   string // must not appear in the result
		remain string // must still appear
	}{
		{name: "openai key", in: "key " + planted + " here", want: "key [REDACTED] here"},
		{name: "anthropic key", in: "sk-ant-api03-abcdefghijkl", want: "[REDACTED]"},
		{name: "bearer", in: "Authorization: Bearer abc.def-ghi_jkl", want: "Authorization: [REDACTED]"},
		{name: "aws", in: "AKIAABCDEFGHIJKLMNOP", want: "[REDACTED]"},
		{name: "github", in: "ghp_abcdefghijklmnopqrstuvwxyz", want: "[REDACTED]"},
		{name: "name=value keeps the name", in: "OPENAI_API_KEY=whatever123 ls", want: "OPENAI_API_KEY=[REDACTED] ls"},
		{name: "quoted value", in: `DB_PASSWORD="two words"`, want: "DB_PASSWORD=[REDACTED]"},
		{name: "url password", in: "https://bob:hunter2@example.com/x", want: "https://bob:[REDACTED]@example.com/x"},
		{name: "pem", in: "-----BEGIN PRIVATE KEY-----\nMIIabc\n-----END PRIVATE KEY-----", gone: "MIIabc"},
		{name: "environment value", in: "the key is plain-secret-value-42.", want: "the key is [REDACTED]."},
		{name: "ordinary text", in: "list the files in ./build", want: "list the files in ./build"},
		{name: "task words", in: "skip-the-tests please", remain: "please"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if tt.want != "" && got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if tt.gone != "" && strings.Contains(got, tt.gone) {
				t.Errorf("String(%q) = %q still contains %q", tt.in, got, tt.gone)
			}
			if tt.remain != "" && !strings.Contains(got, tt.remain) {
				t.Errorf("String(%q) = %q lost %q", tt.in, got, tt.remain)
			}
		})
	}
}

func TestValues(t *testing.T) {
	got := Values("passphrase is correct horse", "correct horse", "")
	if got != "passphrase is [REDACTED]" {
		t.Errorf("Values = %q", got)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "github_token": true, "DB_PASSWORD": true, "X_AUTH": true,
		"HOME": false, "PATH": false, "CLAW_LOG": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzString checks that redaction never panics and that a planted key
// never survives, whatever surrounds it.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a", "Bearer x", "https://u:p@h", "KEY=", "-----BEGIN PRIVATE KEY-----", "\xff\xfe"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		in := before + " " + planted + " " + after
		if got := String(in); strings.Contains(got, planted) {
			t.Fatalf("planted key survived: %q", got)
		}
	})
}

func TestSecretField(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "X-Api-Key": true, "api_key": true, "Cookie": true, "refresh_token": true,
		"password": true, "passphrase": true, "pass": true, "pwd": true, "auth": true, "client-secret": true,
		"path": false, "content": false, "keyword": false, "author": false, "compass": false, "passage": false, "url": false,
	} {
		if got := SecretField(name); got != want {
			t.Errorf("SecretField(%q) = %v, want %v", name, got, want)
		}
	}
}
