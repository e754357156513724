package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/term"
)

// runREPL is claw agent without -m: read a message, run a turn, print the
// reply, until /exit or the end of input. Slash commands are replCommand's.
func runREPL(ctx context.Context, g *globals, o *agentOptions) error {
	in := term.NewLineInput(g.stdin, g.stdout, g.stderr)
	defer in.Close()
	ap := term.PassphraseApprover{Approver: term.NewApprover(in, g.stderr)}
	rt, err := runtime.NewAgent(ctx, agentSetup(g, &o.actionOptions), "cli", ap, func(ro *runtime.AgentOptions) {
		ro.AskUser = in.AskUser(g.stderr)
		ro.Prestart = true
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	in.LoadHistory(filepath.Join(rt.Env.Home, "agent_history"), rt.Redact)
	defer in.SaveHistory()

	conv := o.conversation
	newConv := o.newConv
	if !newConv && conv == "" {
		if c, err := rt.Memory.Latest(ctx, "cli"); err == nil {
			conv = c.ID
			fmt.Fprintf(g.stderr, "claw: resuming conversation %s (%d messages); /clear starts a new one\n", c.ID, c.Messages)
		}
	}
	fmt.Fprintf(g.stderr, "claw: provider %s, autonomy %s, workspace %s; /help for commands\n", rt.Provider.Name(), rt.Autonomy, rt.Work)
	sp := term.NewSpinner(g.stderr, in.TTY() && term.IsTerminal(g.stderr))
	afterTurn := false
	for {
		if afterTurn {
			// Typed while the model answered: maybe at a prompt the
			// model drew (a passphrase, say). It is never sent on.
			if n := in.DiscardPending(); n > 0 {
				fmt.Fprintf(g.stderr, "claw: discarded %d bytes typed while the model was answering; type your message again\n", n)
			}
			afterTurn = false
		}
		line, err := in.Next("you> ")
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(g.stderr)
			return nil
		}
		if errors.Is(err, term.ErrPromptAborted) {
			fmt.Fprintln(g.stderr, "claw: (Ctrl-D or /exit to leave)")
			continue
		}
		if err != nil {
			return withCode(exitError, fmt.Errorf("reading input: %w", err))
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		in.Remember(line)
		if strings.HasPrefix(line, "/") {
			quit, err := replCommand(ctx, g, rt, line, &conv, &newConv)
			if err != nil {
				printError(g.stderr, err)
			}
			if quit {
				return nil
			}
			continue
		}
		tctx, stop := signal.NotifyContext(ctx, os.Interrupt)
		pr := term.NewPrinter(g.stdout, "claw> ", sp, rt.Redact)
		ap.Printing(pr)
		res, err := rt.Agent.Turn(tctx, runtime.TurnRequest{Conversation: conv, NewConversation: newConv, Message: line,
			OnStatus: sp.Set, OnTool: pr.Tool(term.ShowTool(g.stderr)), OnDelta: pr.Delta})
		sp.Set("")
		afterTurn = true
		interrupted := tctx.Err() != nil && ctx.Err() == nil
		stop()
		if res.Conversation != "" {
			conv, newConv = res.Conversation, false
		}
		if err != nil {
			pr.Abort()
			if interrupted {
				fmt.Fprintln(g.stderr, "claw: interrupted")
				continue
			}
			printError(g.stderr, agentError(err))
			continue
		}
		pr.Finish(res.Reply)
	}
}

// replCommand runs a slash command; it reports whether to leave.
func replCommand(ctx context.Context, g *globals, rt *runtime.Agent, line string, conv *string, newConv *bool) (bool, error) {
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	w := g.stdout
	switch cmd {
	case "/exit", "/quit":
		return true, nil
	case "/help":
		fmt.Fprint(w, `/exit            leave (or Ctrl-D)
/tools           the tools the model may call, with their risk
/memory QUERY    search past conversations
/policy          autonomy level and workspace boundary
/clear           start a new conversation (the old one stays in memory)
/help            this list
`)
	case "/tools":
		for _, t := range rt.Agent.Tools() {
			fmt.Fprintf(w, "%-14s %-7s %s\n", t.Name, t.Risk, t.Description)
		}
	case "/policy":
		fmt.Fprintln(w, runtime.PolicySummary(rt.Autonomy, rt.Work))
		fmt.Fprintf(w, "Policy digest: %s\n", rt.Broker.PolicyDigest())
		fmt.Fprintln(w, "Every tool call is decided by the gate and receipted; see 'claw gate test --explain'.")
	case "/memory":
		if arg == "" {
			return false, usageErrorf("/memory needs a query")
		}
		hits, err := rt.Memory.Search(ctx, arg, 10)
		if err != nil {
			return false, err
		}
		if len(hits) == 0 {
			fmt.Fprintln(w, "no matches")
		}
		for _, h := range hits {
			fmt.Fprintf(w, "%s  %s  %-9s %s\n", h.Message.ConversationID, h.Message.CreatedAt.Local().Format("2006-01-02 15:04"), h.Message.Role, sanitize(h.Snippet))
		}
	case "/clear":
		*conv, *newConv = "", true
		fmt.Fprintln(g.stderr, "claw: the next message starts a new conversation")
	default:
		return false, usageErrorf("unknown command %s (try /help)", sanitize(cmd))
	}
	return false, nil
}
