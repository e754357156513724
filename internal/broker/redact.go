package broker

import (
	"os"
	"regexp"
	"strings"
)

// secretPatterns match credentials that must never reach a receipt: known
// key prefixes, bearer tokens, private key blocks, and NAME=value pairs
// whose name says it is secret.
var secretPatterns = []*regexp.Regexp{
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

// Redact replaces secrets in s with [REDACTED]. It also removes the values
// of the process's own secret-looking environment variables wherever they
// appear, so a key passed through the environment is never echoed.
func Redact(s string) string {
	for _, re := range secretPatterns {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if i := strings.IndexByte(m, '='); i > 0 && !strings.HasPrefix(m, "-----") {
				return m[:i+1] + "[REDACTED]"
			}
			if strings.HasPrefix(m, "://") {
				j := strings.IndexByte(m[3:], ':')
				return m[:3+j+1] + "[REDACTED]@"
			}
			return "[REDACTED]"
		})
	}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < 8 || !secretName(k) {
			continue
		}
		s = strings.ReplaceAll(s, v, "[REDACTED]")
	}
	return s
}

func secretName(k string) bool {
	k = strings.ToUpper(k)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
