// Package redact removes credentials from text before it is written
// anywhere a person or another program can read it: logs, receipts,
// command output.
//
// [String] is the whole API for most callers:
//
//	line := redact.String(untrusted) // "Authorization: Bearer [REDACTED]"
//
// # What is removed
//
//   - known key formats: OpenAI-style sk-/pk-/rk- keys, Anthropic sk-ant-
//     keys, AWS access key ids, GitHub, Slack and GitLab tokens;
//   - bearer tokens ("Bearer abc…");
//   - PEM private key blocks;
//   - the value of NAME=value pairs whose name says it is secret
//     (…SECRET…, …TOKEN…, …PASSWORD…, …API_KEY…, …CREDENTIALS…), keeping
//     the name so the reader still sees which variable it was;
//   - passwords in URL userinfo (https://user:[REDACTED]@host);
//   - the value of every environment variable of this process whose name
//     looks secret (contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
//     CREDENTIAL or AUTH) and whose value is at least 8 bytes long, wherever
//     it appears, so a provider key passed through the environment is never
//     echoed even when it has no recognisable format.
//
// [Values] does the same and also removes the given secrets (a key read
// from a file, a passphrase) wherever they occur.
//
// Redaction is a last line of defence, not a licence to log secrets: code
// should not put them in a message in the first place.
package redact
