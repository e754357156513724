package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/term"
)

// runAutonomous is claw agent --autonomous: an autonomous run on the cli
// channel, with -m as its task and each line of standard input as a
// message of the person that preempts it. Nobody is asked for approval: an
// action the policy would ask about is denied, and the model told why.
func runAutonomous(ctx context.Context, g *globals, o *agentOptions) error {
	rt, err := runtime.NewAgent(ctx, agentSetup(g, &o.actionOptions), "cli", nil, func(ro *runtime.AgentOptions) { ro.Autonomous = true })
	if err != nil {
		return err
	}
	defer rt.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := rt.AutonomousBounds(rt.Broker.Estopped)
	if o.maxTurns > 0 {
		c.MaxTurns = o.maxTurns
	}
	show := term.ShowTool(g.stderr)
	res := rt.Agent.RunAutonomous(ctx, c, runtime.RunRequest{
		Conversation:    o.conversation,
		NewConversation: o.newConv,
		Task:            o.message,
		User:            term.Messages(ctx, g.stdin, g.stderr),
		OnTool:          show,
		OnTurn: func(t runtime.RunTurn) {
			how := "autonomous"
			if t.ByUser {
				how = "your message"
			}
			fmt.Fprintf(g.stderr, "claw: turn %d (%s, %s) → %s\n", t.N, t.State, how, t.Next)
			if t.Err != nil {
				fmt.Fprintf(g.stderr, "claw: turn %d: %s\n", t.N, rt.Redact(t.Err.Error()))
			}
			if !o.asJSON && strings.TrimSpace(t.Result.Reply) != "" {
				fmt.Fprintln(g.stdout, term.SanitizeStream(rt.Redact(t.Result.Reply)))
			}
		},
	})
	fmt.Fprintf(g.stderr, "claw: autonomous run %s stopped (%s) after %d turns, %d tool calls\n",
		res.Run, res.Stop, res.Turns, res.ToolCalls)
	if o.asJSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	switch res.Stop {
	case runtime.StopCancelled:
		return withCode(exitInterrupted, errors.New("interrupted"))
	case runtime.StopErrors:
		return withCode(exitError, errors.New("the run stopped after failed turns in a row"), "see the log (CLAW_LOG=json) for why they failed")
	}
	return nil
}
