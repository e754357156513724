// Package runtime is claw's composition root: it turns a configuration
// into the running parts of claw and wires them together, so that every
// entry (the REPL, exec, tool run, the MCP server and proxy, the daemon and
// its channels) is built the same way and reaches the gate, the receipts
// and the executor through one broker.
//
// # What it builds
//
// From a loaded [config.Config] it builds, in this order:
//
//   - the gate: the policy data ([Policy]) and the compiled engine, built-in
//     and user policies;
//   - the receipt log and its signer, opened for one writer;
//   - the executor's sandbox plan: the workspace, the toolchain directories
//     the sandbox may read, the forbidden paths it must not;
//   - the broker, the one path from a proposed action to its receipts:
//     gate, approval (with the approver the caller gives), executor;
//   - the agent: provider, memory store, tool catalogue and loop;
//   - the approvers and the channels the daemon starts, and its reload.
//
// It also holds the logger every long-running command starts with.
//
// # Entry points
//
// A command that runs one action opens a broker with [OpenBroker]; one
// that talks with a model opens an agent runtime with [NewAgent]. Both take
// a [Setup]: what the command line resolved (the flags as [Actions], how
// to load the config and the key, who can be asked, where to warn). The
// daemon, with its channels, is [Serve]; claw mcp serve and proxy are
// [MCPServe] and [MCPProxy]. [Reenter] runs the sandboxed child when claw
// re-executes itself for it.
//
// An agent's hook call is a [Hook], answered by the daemon of the same
// config when one runs ([Serve] answers it, and claw gate test's dry runs
// asked with [AskGateTest]), else in process. The emergency stop is an
// [Estop], its receipts written through a [StateLog]; claw sandbox run is
// a [SandboxRun]; the daemon's client commands use [DaemonClient] and
// [DaemonCall].
//
// # What it does not do
//
// The command line lives in cmd/claw, which keeps flags, prompts and output:
// it parses arguments, asks the person at the terminal, prints results and
// maps errors to exit codes. It may import this package, the config package
// and the presentation packages, and nothing else of claw; internal/deptest
// enforces that. Errors of this package that should end claw with a given
// status carry it ([Error]); the exit codes are defined here, once.
package runtime
