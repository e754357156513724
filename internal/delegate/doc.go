// Package delegate runs an external coding agent (Claude Code, in print
// mode) for a delegate call, under claw's gate and sandbox.
//
// # What a run does
//
// [Run] starts the agent's configured command in the executor's sandbox,
// in the workspace, with the task as its last argument and a generated
// settings file that installs claw's hook as the agent's PreToolUse hook
// for every tool. The sandbox grants what the delegation may reach: the
// workspace read-write (read-only at readonly autonomy, with the agent and
// git settings in it kept read-only), the agent's own files, network only
// to the configured hosts through claw's egress proxy, an environment of
// the allowlist plus the configured variables and secrets.
//
// The hook cannot decide inside the sandbox (it has no receipt key and
// no socket to reach claw with), so it relays: the hook process,
// claw's hidden entry [HookEntry], writes the agent's PreToolUse event into
// a spool directory the run owns, and the parent claw decides it with
// the real gate and writes the receipts, at the delegation's narrowed
// autonomy and tools, each receipt naming the parent (delegate) action.
// The answer comes back through a directory the sandbox can read but not
// write. Any failure of the relay blocks the tool call (exit 2), never
// lets it run. The parent watches the request directory with inotify;
// the relay, which the sandbox refuses inotify, looks for its answer
// after half a millisecond, then at doubling intervals up to 10 ms.
// The spool's name carries the parent's PID namespace and pid: a run
// sweeps away the spools of claws of its namespace that were killed
// before they could remove their own.
//
// # Bounds
//
// A run is bounded by its wall time (the whole process tree is killed),
// the size of the answer kept, and the agent's turns when it takes a
// flag for them. The delegate call's context ends it: the emergency stop
// cancels the call, which kills the agent's process group, and the hook
// denies every call once the stop is engaged.
//
// # Answer
//
// Claude Code's -p --output-format json prints one JSON object whose
// "result" is the final answer; [Result] carries it, clipped to the
// configured size, with what the hook answered to each tool call.
package delegate
