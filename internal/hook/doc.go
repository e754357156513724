// Package hook puts claw's gate in front of agents that run their own
// tools: Claude Code and Codex call a PreToolUse hook before each tool
// call, and claw answers it.
//
// # What a hook run does
//
// A [Runner] reads one event (JSON, at most [MaxInput] bytes) from
// standard input, maps the agent's tool call to claw actions with [Map],
// decides each with the real gate (the same config, user policies,
// autonomy, workspace and emergency stop as every other claw action),
// and answers in the agent's format; the strictest decision over the
// actions wins. Deciding and recording are the broker's
// (broker.Broker.Hand and CloseAll): a decision receipt and a closing
// outcome receipt per action in the normal receipt log (channel
// "claude-code" or "codex"), all of a call's receipts in one commit
// before the answer. The hook only translates the agent's wire format.
//
// The hook does not execute anything: the agent does, outside claw's
// Landlock and seccomp sandbox. A receipt's outcome for an action the
// agent may run is [OutcomeDelegated]; claw does not know how it ended.
//
// # Answers
//
// Claude Code gets, with exit status 0,
//
//	{"hookSpecificOutput":{"hookEventName":"PreToolUse",
//	  "permissionDecision":"allow"|"ask"|"deny","permissionDecisionReason":"…"}}
//
// where the reason names the decision, the risk and every rule id with
// its message, secrets redacted. A claw "passphrase" decision is answered
// "ask" with a reason that says so, and in the permission modes that never
// ask (bypassPermissions, dontAsk) an ask becomes a deny. A tool claw has
// no equivalent for is asked about, and denied at readonly autonomy or
// while the emergency stop is engaged; it is allowed only when the user
// trusts it by name ([Guard].Trusted), and that opt-in is written into
// its receipt.
//
// Codex honours only denials from a hook. An allow prints nothing; ask,
// passphrase and deny print the same deny object.
//
// # Never failing open
//
// Both agents let the tool run when a hook exits with any status other
// than 0 or 2, or is killed at their timeout. So every failure — input
// that is not one JSON object, larger than [MaxInput], not UTF-8, or not
// a PreToolUse event; a guard that cannot be opened; a gate error; a
// receipt that cannot be written; a panic; the run's own deadline
// ([DefaultDeadline] unless set) — ends with exit status [ExitBlock] (2)
// and the reason on standard error, which both agents treat as a block.
// Refused input still leaves a deny receipt (rule hook.invalid_input)
// when the receipt log can be opened.
package hook
