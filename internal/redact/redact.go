package redact

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Marker replaces every secret.
const Marker = "[REDACTED]"

// patterns match credentials by their form. They are compiled on first
// use: every claw process links this package, and most never redact.
var patterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}`),                     // OpenAI-style keys
		regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{8,}`),                         // Anthropic
		regexp.MustCompile(`\b(AKIA|ASIA)[A-Z0-9]{16}\b`),                        // AWS access key ids
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`),                       // GitHub tokens
		regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),                     // Slack
		regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`),                         // GitLab
		regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{8,}=*`),             // Authorization: Bearer
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END`), // PEM keys
		regexp.MustCompile(`(?i)\b([A-Z0-9_]*(SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Z0-9_]*)=("[^"]*"|'[^']*'|\S+)`),
		regexp.MustCompile(`(?i)(://[^/\s:@]+:)[^@\s/]+@`), // userinfo passwords in URLs
	}
})

// minEnvSecret is the shortest environment value String removes: shorter
// values ("1", "yes") would blank out ordinary words.
const minEnvSecret = 8

// String returns s with every credential replaced by [Marker]: the
// recognisable key formats, NAME=value pairs with a secret-looking name,
// URL passwords, and the values of this process's secret-looking
// environment variables.
func String(s string) string {
	return Values(s)
}

// Values is [String], and also replaces each non-empty secret wherever it
// occurs in s.
func Values(s string, secrets ...string) string {
	for _, v := range secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, Marker)
		}
	}
	for _, re := range patterns() {
		if !re.MatchString(s) {
			continue
		}
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if i := strings.IndexByte(m, '='); i > 0 && !strings.HasPrefix(m, "-----") && !strings.HasPrefix(m, "://") {
				return m[:i+1] + Marker
			}
			if strings.HasPrefix(m, "://") {
				j := strings.IndexByte(m[3:], ':')
				return m[:3+j+1] + Marker + "@"
			}
			return Marker
		})
	}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < minEnvSecret || !SecretName(k) {
			continue
		}
		s = strings.ReplaceAll(s, v, Marker)
	}
	return s
}

// SecretName reports whether an environment variable called name probably
// holds a secret: its name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL or AUTH (in any case).
func SecretName(name string) bool {
	name = strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
