package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/estop"
	"github.com/clawsec/claw/internal/hook"
	"github.com/clawsec/claw/receipts"
)

func init() {
	doctorChecks = append(doctorChecks, doctorCheck{Name: "agent hooks", Run: checkAgentHooks})
}

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
	c.AddCommand(newHookAgentCommand(g, hook.ClaudeCode, "Claude Code"), newHookAgentCommand(g, hook.Codex, "Codex"))
	return c
}

type hookOptions struct {
	trust          []string
	trusted        map[string]bool
	deadline       time.Duration
	workspace      string
	passphraseFile string
	noDaemon       bool
}

// hookExit maps a hook's exit status to the command's: answered,
// or blocked (never 1, which agents take as "let the tool run").
func hookExit(code int) error {
	if code != hook.ExitAnswered {
		return silentExit(hook.ExitBlock)
	}
	return nil
}

func newHookAgentCommand(g *globals, f hook.Format, agent string) *cobra.Command {
	o := &hookOptions{}
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
			o.trusted = map[string]bool{}
			for _, t := range o.trust {
				if strings.HasPrefix(t, "mcp__") || strings.TrimSpace(t) == "" {
					// Exit 2: a usage error blocks the tool call too.
					return usageErrorf("--trust-tool %q: MCP tools are judged by the gate; write a policy for them instead", t)
				}
				o.trusted[t] = true
			}
			if o.deadline <= 0 {
				o.deadline = hook.DefaultDeadline
			}
			// One deadline for the whole call, the daemon's try included.
			ctx, cancel := context.WithTimeout(c.Context(), o.deadline)
			defer cancel()
			event, complete, stdin := readEvent(ctx, g.stdin)
			if !o.noDaemon && complete {
				if a, ok := askDaemon(ctx, g, o, f, event); ok {
					if a.Exit == hook.ExitBlock {
						io.WriteString(g.stderr, a.Stderr)
						return hookExit(a.Exit)
					}
					if _, err := io.WriteString(g.stdout, a.Stdout); err != nil {
						fmt.Fprintf(g.stderr, "claw: blocked: failed to write the answer: %v\n", err)
						return hookExit(hook.ExitBlock)
					}
					return nil
				}
			}
			r := hook.Runner{
				Format:   f,
				Deadline: o.deadline,
				Open: func(ctx context.Context) (*hook.Guard, func(), error) {
					// Standard output carries the answer and nothing
					// else: an agent that cannot parse it ignores it,
					// denial included.
					quiet := *g
					quiet.stdout = io.Discard
					return openHookGuard(ctx, &quiet, o)
				},
			}
			return hookExit(r.Run(ctx, stdin, g.stdout, g.stderr))
		},
	}
	c.Flags().DurationVar(&o.deadline, "deadline", hook.DefaultDeadline, "answer (or block) within this time; keep it well under the agent's hook timeout")
	c.Flags().StringVar(&o.workspace, "workspace", "", "workspace directory, e.g. \"$CLAUDE_PROJECT_DIR\" (default from config)")
	c.Flags().StringSliceVar(&o.trust, "trust-tool", nil, "allow this agent tool that claw has no equivalent for, e.g. TodoWrite (repeatable; recorded in every receipt it allows)")
	c.Flags().BoolVar(&o.noDaemon, "no-daemon", false, "decide in this process even when a claw serve of the same config is running")
	c.Flags().StringVar(&o.passphraseFile, "passphrase-file", "", "read the receipt key passphrase from this file (or $CLAW_KEY_PASSPHRASE_FILE); never prompts")
	return c
}

func formatHelp(f hook.Format) string {
	if f == hook.Codex {
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

// openHookGuard loads what one hook decision needs. It never prompts: a
// hook has no terminal it may use.
func openHookGuard(ctx context.Context, g *globals, o *hookOptions) (*hook.Guard, func(), error) {
	gate.Prefetch()
	e, err := loadEnv(g)
	if err != nil {
		return nil, nil, err
	}
	eng, err := newEngine(ctx, e, policyFromConfig(e.cfg))
	if err != nil {
		return nil, nil, err
	}
	applyGrants(g, e, eng) // a grant answers the hook's asks as it does the broker's
	signer, err := loadHookSigner(g, o)
	if err != nil {
		return nil, nil, err
	}
	dir := e.cfg.Receipts.Dir
	if dir == "" {
		if dir, err = receiptDir(g); err != nil {
			return nil, nil, err
		}
	}
	log, err := broker.OpenLog(dir, signer, broker.LogOptions{CheckpointInterval: -1, CheckpointEvery: e.cfg.Receipts.Checkpoint})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the receipt log: %w", err)
	}
	gd, err := hookGuard(e, o, eng, log)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	return gd, func() { log.Close() }, nil
}

// hookGuard is the guard of one hook call, in a hook process or in claw
// serve.
func hookGuard(e *env, o *hookOptions, eng *gate.Engine, log *broker.Log) (*hook.Guard, error) {
	autonomy := e.cfg.Security.Autonomy
	if autonomy != config.AutonomyReadonly && autonomy != config.AutonomySupervised && autonomy != config.AutonomyFull {
		return nil, fmt.Errorf("autonomy %q in the config is not one of readonly, supervised, full", autonomy)
	}
	ws := e.cfg.WorkspaceDir
	if o.workspace != "" {
		ws = o.workspace
	}
	ws, err := canonicalDir(ws)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", ws)
	}
	return &hook.Guard{
		Trusted:   o.trusted,
		Gate:      eng,
		Log:       log,
		Autonomy:  autonomy,
		Workspace: ws,
		Home:      e.userDir,
		EstopFile: filepath.Join(e.home, estop.FileName),
	}, nil
}

// loadHookSigner reads the receipt signing key like loadReceiptSigner,
// but takes a passphrase only from a file: it never opens the terminal,
// which belongs to the agent.
func loadHookSigner(g *globals, o *hookOptions) (*receipts.Signer, error) {
	dir, err := receiptKeyDir(g)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, receiptKeyName)
	pemBytes, err := readSmall(path, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no receipt signing key at %s (create one with 'claw init' or 'claw keys generate')", path)
	}
	if err != nil {
		return nil, err
	}
	priv, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) {
		pf := o.passphraseFile
		if pf == "" {
			pf = os.Getenv("CLAW_KEY_PASSPHRASE_FILE")
		}
		if pf == "" {
			return nil, errors.New("the receipt key needs a passphrase: pass --passphrase-file or set CLAW_KEY_PASSPHRASE_FILE")
		}
		f, err := os.Open(pf)
		if err != nil {
			return nil, fmt.Errorf("failed to read passphrase file: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 4096))
		if err != nil {
			return nil, fmt.Errorf("failed to read passphrase file: %w", err)
		}
		if b = bytes.TrimRight(b, "\r\n"); len(b) == 0 {
			return nil, fmt.Errorf("passphrase file %s is empty", pf)
		}
		return b, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return receipts.NewSigner(priv)
}

// hookSettings is the part of Claude Code's settings.json and Codex's
// hooks.json that claw doctor reads.
type hookSettings struct {
	Hooks struct {
		PreToolUse []struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string  `json:"type"`
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"PreToolUse"`
	} `json:"hooks"`
}

// checkAgentHooks finds agent settings that run claw hook and checks that
// the hook can answer: every tool matched, a timeout above the deadline,
// and a receipt key it can open without a terminal.
func checkAgentHooks(g *globals) doctorResult {
	var files []string
	if u, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(u, ".claude", "settings.json"), filepath.Join(u, ".codex", "hooks.json"))
	}
	if wd, err := os.Getwd(); err == nil {
		files = append(files, filepath.Join(wd, ".claude", "settings.json"), filepath.Join(wd, ".claude", "settings.local.json"), filepath.Join(wd, ".codex", "hooks.json"))
	}
	var found, problems, fixes []string
	passphrase := os.Getenv("CLAW_KEY_PASSPHRASE_FILE") != ""
	for _, path := range files {
		b, err := readSmall(path, 1<<20)
		if err != nil {
			continue
		}
		var hs hookSettings
		if err := json.Unmarshal(b, &hs); err != nil {
			if bytes.Contains(b, []byte("claw hook")) {
				problems = append(problems, fmt.Sprintf("%s is not valid JSON: %v", path, err))
				fixes = append(fixes, "fix the JSON in "+path)
			}
			continue
		}
		for _, m := range hs.Hooks.PreToolUse {
			for _, h := range m.Hooks {
				if !strings.Contains(h.Command, "claw hook claude-code") && !strings.Contains(h.Command, "claw hook codex") {
					continue
				}
				found = append(found, path)
				passphrase = passphrase || strings.Contains(h.Command, "--passphrase-file")
				if m.Matcher != "" && m.Matcher != "*" && m.Matcher != ".*" {
					problems = append(problems, fmt.Sprintf("%s: matcher %q leaves other tools unguarded", path, m.Matcher))
					fixes = append(fixes, `use "matcher": "*" (Claude Code) or no matcher (Codex)`)
				}
				if h.Timeout > 0 && time.Duration(h.Timeout*float64(time.Second)) <= hook.DefaultDeadline {
					problems = append(problems, fmt.Sprintf("%s: timeout %gs is not above claw's %s deadline; a hook the agent kills lets the tool run", path, h.Timeout, hook.DefaultDeadline))
					fixes = append(fixes, `set "timeout": 30`)
				}
			}
		}
	}
	if len(found) == 0 && len(problems) == 0 {
		return skipped("no Claude Code or Codex settings run 'claw hook' (see docs/hooks.md)")
	}
	if dir, err := receiptKeyDir(g); err == nil && !passphrase {
		if pemBytes, err := readSmall(filepath.Join(dir, receiptKeyName), 64<<10); err == nil && receipts.IsEncryptedKey(pemBytes) {
			problems = append(problems, "the receipt key is encrypted and a hook cannot prompt: every tool call would be blocked")
			fixes = append(fixes, "add --passphrase-file FILE to the hook command, or set CLAW_KEY_PASSPHRASE_FILE")
		}
	}
	if len(problems) > 0 {
		return failed(strings.Join(problems, "; "), strings.Join(fixes, "; "))
	}
	return passed(strings.Join(found, ", "))
}
