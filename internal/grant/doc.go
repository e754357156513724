// Package grant keeps grants: an approver's "yes" that covers a precisely
// scoped family of actions for a bounded time, as policy data an auditor
// can read.
//
// # What a grant is
//
// A [Grant] has an id, who granted it and through which channel, when,
// an expiry (always; [Expiry] has the configured default and maximum) and
// a [Scope] ([gate.GrantScope]): the tool; for shell, the programs (and
// subcommands) every command of the string must be, and whether more
// arguments may follow; path prefixes every path the action touches must
// lie under; the network hosts it may reach and the http methods; and
// optionally the autonomy and the conversation. The gate matches scopes
// in policies/grants.rego against facts of its input:
//
//	tool          input.action.tool
//	commands      input.parsed.commands[_].name and argv[1]
//	args          the length of argv (none: nothing after the subcommand)
//	paths         input.paths and input.writes (canonical)
//	hosts         input.url.host of the http tool
//	methods       the http method
//	autonomy      input.context.autonomy
//	conversation  input.context.conversation
//
// Each fact list is one rule per source in grants.rego, so a new source
// (the network hosts a shell command reaches) is one more rule and every
// host scope covers it. A shell command the gate marks (inline code, exec
// flags, interpreters reading stdin), a dynamic or unparseable command and
// invalid input are never covered.
//
// A grant turns an ask into an allow and nothing else: the policies
// combine deny > passphrase > ask > allow first, and only an "ask" is
// looked at. The decision then carries reason grant.applied and the
// grant's id ([gate.Decision].Grant), which the decision receipt records.
//
// # Scope syntax
//
// [Format] and [Parse] write and read scopes as key=value terms, the same
// at an approval prompt and in `claw grant add`:
//
//	tool=shell cmd=go:test args=any path=/home/u/ws autonomy=supervised
//
// [Describe] says the same in words for the person asked to accept it.
// [Propose] derives the narrowest useful scope from the gate's input for
// an action that asked: its programs with their subcommands (for programs
// that have them; a program whose subcommand is not right after it gets
// no proposal), any arguments, the workspace for paths inside it and each
// other path exactly, the http host and method, the autonomy.
//
// # Store
//
// A [Store] is $CLAW_HOME/grants.json (mode 0600, replaced atomically under
// a flock, read strictly and bounded). Expired and revoked grants stay in
// the file, listed as such, and are never given to the gate ([Active]);
// the gate also drops a grant the moment it expires. The broker reloads
// the file when it changes ([Store.LoadIfChanged]), so `claw serve` and a
// running REPL apply grants added or revoked elsewhere at their next
// action. The file is under $CLAW_HOME, which the policies forbid to every
// action, so an agent cannot grant itself anything.
//
// # Receipts
//
// The broker's receipt log adds and revokes grants (broker.Log's AddGrant
// and RevokeGrant): it writes the grant_added receipt before storing the
// grant (no receipt, no grant), and revokes first (taking permission away
// must not wait) and then writes grant_revoked, with the grant's scope in
// the grant syntax ([Receipt]).
package grant
