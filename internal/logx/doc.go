// Package logx builds claw's structured logger: log/slog with a handler
// chosen by the CLAW_LOG environment variable and every string redacted
// before it is written.
//
//	log := logx.FromEnv(os.Stderr)
//	log.Info("provider selected", logx.Event(logx.EventProviderSelected),
//		slog.String("provider", name))
//
// # CLAW_LOG
//
// CLAW_LOG is MODE or MODE:LEVEL.
//
//	unset     text without timestamps, warnings and errors only (an
//	          interactive run stays quiet)
//	text      key=value lines, from info up
//	json      one JSON object per line, from info up (for journald, Loki, jq)
//	off       nothing at all
//
// LEVEL is debug, info, warn or error, and overrides the mode's level, as
// in CLAW_LOG=json:debug. An unknown mode or level falls back to the
// default and says so in a warning on the first line, so a typo is noticed
// and never silences errors.
//
// Logs go to standard error; standard output carries data. Logs are for
// operators, not evidence: what an action did is in the signed receipts.
//
// # Events
//
// Every record that marks a step in the life of claw carries an "event"
// attribute whose value is one of the Event constants ([EventStartup],
// [EventToolRequested], …), so a log pipeline can filter on a stable name
// rather than on message text. [Event] builds that attribute.
//
// # Redaction
//
// The handler's ReplaceAttr passes every string it writes through the
// redactor: the message, attribute keys and string values, errors (as
// their message), [fmt.Stringer] values, byte slices, and any other value
// after JSON encoding, at any depth of groups. A value whose redacted JSON
// is no longer valid is written as a redacted string. A secret therefore
// cannot reach the log through an attribute, an error, or a nested group;
// it can only be missed if the redactor does not recognise it.
package logx
