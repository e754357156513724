package main

import (
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

func newHookCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "hook",
		Short: "Guard an existing agent's tool calls (Claude Code, Codex PreToolUse hooks)",
		Long: `claw hook answers an agent's PreToolUse hook: it reads the tool call on
standard input, decides it with the gate (the same config, policies,
autonomy, workspace and emergency stop as every other claw action), writes
a decision receipt, and answers in the agent's format. The agent runs the
tool itself: claw's sandbox does not apply to it.

See docs/hooks.md for the settings snippets.

EXIT STATUS
  0 answered (the answer is on standard output), 2 blocked (the reason is
  on standard error). The hook never exits 1: agents treat other statuses
  as "let the tool run".`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withCode(exitUsage, errors.New("name the agent: claw hook claude-code or claw hook codex"))
		},
	}
	c.AddCommand(newHookAgentCommand(g, runtime.HookClaudeCode, "Claude Code"), newHookAgentCommand(g, runtime.HookCodex, "Codex"))
	return c
}

// hookFallback is what the hook's fast path (fastHook) hands the command
// when the daemon did not answer: when the call began, and whether the
// daemon may be asked again by configID (it refused only the source id).
type hookFallback struct {
	start time.Time
	retry bool
}

// wireHook gives the call h (its flags set) the config, key and streams
// of g.
func wireHook(g *globals, h *runtime.Hook) *runtime.Hook {
	// Standard output carries the answer and nothing else: an agent that
	// cannot parse it ignores it, denial included.
	quiet := *g
	quiet.stdout = io.Discard
	var e *env
	h.Env = func() (*runtime.Env, error) {
		var err error
		if e, err = loadEnv(&quiet); err != nil {
			return nil, err
		}
		return e.rt(), nil
	}
	h.QuietEnv = func() (*runtime.Env, error) { return daemonEnv(g) }
	h.Grants = func(eng *runtime.Engine) { applyGrants(&quiet, e, eng) }
	h.KeyDir = func() (string, error) { return receiptKeyDir(g) }
	h.ReceiptDir = func() (string, error) { return receiptDir(g) }
	h.Stdin, h.Stdout, h.Stderr = g.stdin, g.stdout, g.stderr
	return h
}

// daemonEnv loads the config of g without notes, for finding the daemon
// and for the services of claw serve.
func daemonEnv(g *globals) (*runtime.Env, error) {
	e, err := loadEnv(&globals{home: g.home, config: g.config, stderr: io.Discard})
	if err != nil {
		return nil, err
	}
	return e.rt(), nil
}

func newHookAgentCommand(g *globals, f runtime.HookFormat, agent string) *cobra.Command {
	h := &runtime.Hook{Format: f}
	var trust []string
	c := &cobra.Command{
		Use:   string(f),
		Short: "Answer a " + agent + " PreToolUse hook from standard input",
		Long: `Reads one ` + agent + ` PreToolUse event (JSON, at most 1 MiB) on standard
input, decides the tool call with the gate, records a decision receipt in
the receipt log (channel "` + string(f) + `"), and answers.
` + formatHelp(f) + `
When a claw serve of the same user, claw home and effective config is
running, the decision and its receipt are made there (it answers on its
unix socket, checked to belong to this user, with its token); when none
answers, or its answer is not well formed, the hook decides in process.

Malformed input, an input larger than 1 MiB, a gate error, a receipt that
cannot be written, the deadline (--deadline) or an internal error block
the tool call: exit 2, with the reason on standard error.

EXIT STATUS
  0 answered, 2 blocked. Never 1.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := setHookFlags(h, trust); err != nil {
				return err
			}
			// One call, one decision, then exit: the heap of compiling
			// the policies is live until the decision.
			runtime.OneShotGC()
			if f := g.hookFallback; f != nil {
				h.Start = f.start
				h.NoDaemon = h.NoDaemon || !f.retry
			}
			return wireHook(g, h).Run(c.Context())
		},
	}
	c.Flags().DurationVar(&h.Deadline, "deadline", runtime.HookDeadline, "answer (or block) within this time; keep it well under the agent's hook timeout")
	c.Flags().StringVar(&h.Workspace, "workspace", "", "workspace directory, e.g. \"$CLAUDE_PROJECT_DIR\" (default from config)")
	c.Flags().StringSliceVar(&trust, "trust-tool", nil, "allow this agent tool that claw has no equivalent for, e.g. TodoWrite (repeatable; recorded in every receipt it allows)")
	c.Flags().BoolVar(&h.NoDaemon, "no-daemon", false, "decide in this process even when a claw serve of the same config is running")
	c.Flags().StringVar(&h.PassphraseFile, "passphrase-file", "", "read the receipt key passphrase from this file (or $CLAW_KEY_PASSPHRASE_FILE); never prompts")
	return c
}

// setHookFlags checks the hook's flags and completes h with them: the
// trusted tools, and the default deadline for none.
func setHookFlags(h *runtime.Hook, trust []string) error {
	h.Trusted = map[string]bool{}
	for _, t := range trust {
		if strings.HasPrefix(t, "mcp__") || strings.TrimSpace(t) == "" {
			// Exit 2: a usage error blocks the tool call too.
			return usageErrorf("--trust-tool %q: MCP tools are judged by the gate; write a policy for them instead", t)
		}
		h.Trusted[t] = true
	}
	if h.Deadline <= 0 {
		h.Deadline = runtime.HookDeadline
	}
	return nil
}

func formatHelp(f runtime.HookFormat) string {
	if f == runtime.HookCodex {
		return `
Codex honours only denials from a hook, so: allow prints nothing; ask,
passphrase and deny print a deny:
  {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",…}}
`
	}
	return `
The answer (exit 0) is
  {"hookSpecificOutput":{"hookEventName":"PreToolUse",
   "permissionDecision":"allow"|"ask"|"deny","permissionDecisionReason":"…"}}
with the rule ids and messages in the reason. A claw passphrase decision
is answered "ask" (the reason says so); in the bypassPermissions and
dontAsk permission modes, which do not ask, it is a deny.
`
}

// checkAgentHooks finds agent settings that run claw hook and checks that
// the hook can answer (runtime.CheckAgentHooks).
func checkAgentHooks(g *globals) doctorResult {
	dir, err := receiptKeyDir(g)
	return runtime.CheckAgentHooks(dir, err)
}
