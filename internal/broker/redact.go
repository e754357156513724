package broker

import "github.com/clawsec/claw/internal/redact"

// Redact replaces secrets in s with [REDACTED]: known key formats, bearer
// tokens, private key blocks, NAME=value pairs whose name says it is
// secret, URL passwords, and the values of this process's secret-looking
// environment variables. It is the default Config.Redact; see package
// internal/redact.
func Redact(s string) string { return redact.String(s) }
