package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/term"

	"github.com/clawsec/claw/internal/runtime"
)

type agentOptions struct {
	actionOptions
	message      string
	conversation string
	newConv      bool
	asJSON       bool
	autonomous   bool
	maxTurns     int
}

func newAgentCommand(g *globals) *cobra.Command {
	var o agentOptions
	c := &cobra.Command{
		Use:   "agent",
		Short: "Talk to the agent: a supervised REPL, or one turn with -m",
		Long: `Talk to the agent. Every tool call the model proposes goes through the gate,
is approved by you when the policy says so, runs in the sandbox, and is receipted.

Without -m, claw agent is a REPL that resumes the last conversation:
  /exit            leave (or Ctrl-D)
  /tools           the tools the model may call, with their risk
  /memory QUERY    search past conversations
  /policy          autonomy level and workspace boundary
  /clear           start a new conversation (the old one stays in memory)
  /help            this list

With -m MESSAGE, claw agent runs one turn, prints the answer and exits.
Approvals are asked on the terminal; without one, actions that need
approval are denied and the model is told why.

With --autonomous, claw agent works on its own: -m is the task, and it
takes turn after turn (states engaged, working, foraging, resting, with
the intervals of [autonomous] in the config) until the model calls
yield_to_user and rests, a bound of [autonomous] is reached, or the
emergency stop is engaged. Each line on standard input is a message that
interrupts it at once. Nobody is asked for approval in a run.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.autonomous {
				return runAutonomous(c.Context(), g, &o)
			}
			if c.Flags().Changed("max-turns") {
				return usageErrorf("--max-turns needs --autonomous")
			}
			if c.Flags().Changed("message") {
				return runAgentOnce(c.Context(), g, &o)
			}
			if o.asJSON {
				return usageErrorf("-o json needs -m")
			}
			return runREPL(c.Context(), g, &o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.message, "message", "m", "", "send one message, print the answer and exit")
	f.StringVar(&o.conversation, "conversation", "", "continue this conversation id (default: the latest)")
	f.BoolVar(&o.newConv, "new", false, "start a new conversation")
	f.BoolVar(&o.autonomous, "autonomous", false, "work on its own, turn after turn, until it yields or a bound stops it")
	f.IntVar(&o.maxTurns, "max-turns", 0, "with --autonomous: the most turns of the run (default [autonomous].max_turns)")
	addOutputFlag(c, &o.asJSON)
	o.actionOptions.addFlags(f)
	return c
}

func runAgentOnce(ctx context.Context, g *globals, o *agentOptions) error {
	if strings.TrimSpace(o.message) == "" {
		return usageErrorf("-m needs a message")
	}
	var approver runtime.Approver
	var in *term.LineInput
	var ap *term.PassphraseApprover
	if term.IsTerminal(g.stdin) {
		in = term.NewLineInput(g.stdin, g.stdout, g.stderr)
		defer in.Close()
		ap = &term.PassphraseApprover{Approver: term.NewApprover(in, g.stderr)}
		approver = ap
	}
	rt, err := runtime.NewAgent(ctx, agentSetup(g, &o.actionOptions), "cli", approver, func(ro *runtime.AgentOptions) {
		if in != nil {
			ro.AskUser = in.AskUser(g.stderr)
		}
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	sp := term.NewSpinner(g.stderr, term.IsTerminal(g.stderr) && term.IsTerminal(g.stdin))
	prefix := ""
	if term.IsTerminal(g.stdout) {
		prefix = "claw> " // as in the REPL: the model's text is marked
	}
	pr := term.NewPrinter(g.stdout, prefix, sp, rt.Redact)
	if ap != nil {
		ap.Printing(pr)
	}
	req := runtime.TurnRequest{
		Conversation:    o.conversation,
		NewConversation: o.newConv,
		Message:         o.message,
		OnStatus:        sp.Set,
		OnTool:          pr.Tool(term.ShowTool(g.stderr)),
	}
	if !o.asJSON {
		req.OnDelta = pr.Delta
	}
	res, err := rt.Agent.Turn(ctx, req)
	sp.Set("")
	if err != nil {
		pr.Abort()
		if ctx.Err() != nil {
			return withCode(exitInterrupted, errors.New("interrupted"))
		}
		return agentError(err)
	}
	if o.asJSON {
		res.Reply = rt.Redact(res.Reply) // as memory keeps it
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	pr.Finish(res.Reply)
	return nil
}

// agentError maps a turn's error to a claw error with a hint.
func agentError(err error) error {
	switch {
	case errors.Is(err, runtime.ErrEmptyMessage):
		return usageErrorf("the message is empty")
	default:
		return withCode(exitError, err, "check the provider with 'claw provider test NAME'; the conversation is saved")
	}
}
