// Package gate decides whether an action an agent proposes may run.
//
// The gate is a pure function of (policies, data, input): it never runs
// anything and never opens the files it judges (it only resolves symlinks
// of path prefixes). Go builds a structured view of the action, and the
// Rego policies in package policies decide on that structure.
//
// # Deciding
//
// Compile the policies once with [New] and call [Engine.Decide] per action:
//
//	eng, err := gate.New(ctx, gate.Options{Policy: p, Home: home, UserPolicyDir: dir})
//	d, err := eng.Decide(ctx, gate.Action{Tool: "shell", Args: map[string]any{"command": "ls"}},
//		gate.Context{Autonomy: "supervised", Workspace: ws, Cwd: ws, Home: home})
//
// The [Decision] is one of allow, ask, passphrase or deny (strictest wins:
// deny > passphrase > ask > allow), with a risk level, the reasons (stable
// rule ids from the policies' METADATA) and the sandbox plan the executor
// enforces. Decide returns an error only when it could not decide; the
// Decision is then a deny with reason gate.error, so a caller that ignores
// the error still fails closed.
//
// # The input
//
// [BuildInput] turns an [Action] into an [Input]: the action kind, the shell
// analysis (package gate/shell: every simple command a string would run,
// wrappers and nesting removed, words statically expanded), canonical paths
// ([PathResolver]: ~ and variables expanded, symlinks resolved the way the
// kernel walks them, /proc and /dev/fd aliases resolved or refused) and the
// URL analysis of an http action ([AnalyzeURL]: every IP notation, local and
// metadata names), and the network destinations of a shell command's
// network clients and package managers ([Destination], canonical the same
// way). Problems in the arguments are collected in Input.Errors,
// which the policies deny.
//
// # Invariants
//
// Besides the policies, Decide enforces in Go: an engaged emergency stop,
// an unknown tool, invalid input and an unparseable command are always
// denied, and a dynamic shell command never gets a plain allow. If a policy
// says otherwise, the result is a deny with reason gate.invariant.
//
// # Grants
//
// [Engine.SetGrants] gives the engine the grants in force (package
// internal/grant keeps them); the policies see them as data.claw.grants and
// policies/grants.rego matches their scopes ([GrantScope]) against the
// input. A grant only turns an ask into an allow, after deny > passphrase >
// ask > allow has been combined: the decision then has reason
// grant.applied and [Decision].Grant names the grant. A grant stops
// applying the moment it expires: the engine rewrites the data at the
// first decision after an expiry, with no call from outside.
//
// # Policies
//
// Built-in policies are embedded (package policies). User policies in
// Options.UserPolicyDir must be in a package under claw.user; they can add
// deny, ask and passphrase reasons but cannot remove the built-in ones.
// Policies are compiled with an allow-list of built-ins: no network, no
// clock, no randomness.
package gate
