// Package discord is claw's Discord channel: a bot on the Discord gateway
// (v10, JSON, no compression) and REST API, over coder/websocket, with no
// Discord library.
//
// A [Bot] answers direct messages from its allowed users, and their
// mentions of it in its allowed channels (empty lists: nobody); it ignores
// bots, webhooks and itself. Each message becomes a turn of claw's agent
// (a [TurnFunc]), whose tool calls take the broker's one path; the reply is
// redacted and split under Discord's 2,000 characters on line and
// code-fence boundaries, and the typing indicator shows while the turn
// runs.
//
// # Approvals
//
// The Bot is the broker.Approver of its channel ([LateApprover] lets claw
// serve build the broker first). An action that needs approval is put in
// the daemon's approvals queue and posted where the turn's message came
// from, escaped as the terminal prompt shows it, with a 5-letter code;
// "yes CODE" or "no CODE" from an approver decides it in their name
// ("discord:ID"), and a late, replayed or wrong code is refused.
//
// # Connection
//
// The gateway session identifies, beats (a missing ACK marks a zombie),
// resumes after a drop, op 7 or a resumable op 9, identifies anew after a
// session is lost, and stops for good on the close codes 4004 and
// 4010-4014 ([CloseError]). REST calls keep Discord's rate-limit buckets
// and sit out a 429 for its retry_after, on an injectable [Clock].
//
// docs/discord.md specifies the wire format as claw implements it;
// package discordtest is a fake Discord on 127.0.0.1 for tests.
package discord
