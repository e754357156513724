package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/term"
)

type serveOptions struct {
	actionOptions
	listen string
	socket string
}

func newServeCommand(g *globals) *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: HTTP gateway, approvals queue, metrics",
		Long: `Run claw as a daemon. It serves an HTTP API on a unix socket
(HOME/serve/claw.sock by default: 0600 in a 0700 directory) and, with
--listen, on a loopback TCP address. Every endpoint but /health needs the
bearer token from [serve].token_file, which 'claw init' creates (0600).

Actions that need approval wait in a queue; approve them from another
terminal with the approvals API (see docs/serve.md).

Channels: every [channels.bridge], [channels.planckclaw] or
[channels.discord] section of the config starts that channel in this
daemon, with its own tools_allow, autonomy and approver_ids; GET /status
lists them (see docs/channels.md).

Autonomous runs: POST /autonomous starts 'claw agent --autonomous' in a
conversation of the daemon, bounded by [autonomous]; GET, POST
/autonomous/ID/message and DELETE follow and steer it (see docs/serve.md).

Signals: SIGHUP reloads the config and policies, channels included (after
their Rego tests pass; otherwise the running ones stay), SIGTERM or SIGINT stop accepting,
let running requests finish (10 s), write a final checkpoint and exit 0.

EXIT STATUS
  0 clean shutdown, 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runServe(c.Context(), g, &o) },
	}
	f := c.Flags()
	f.StringVar(&o.listen, "listen", "", "also listen on this loopback address, e.g. 127.0.0.1:8787 (default [serve].listen)")
	f.StringVar(&o.socket, "socket", "", "unix socket path (default [serve].socket)")
	o.actionOptions.addFlags(f)
	o.keys.addFlags(c)
	c.AddCommand(newServeCallCommand(g), newServePendingCommand(g), newServeDecideCommand(g, "approve"), newServeDecideCommand(g, "reject"))
	return c
}

// serveClientOptions name the daemon a client command talks to.
type serveClientOptions struct {
	target string
}

func (o *serveClientOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.target, "target", "", "the daemon: unix:/path/claw.sock or http://127.0.0.1:PORT (default the configured socket)")
}

// client is the daemon's approvals client.
func (o *serveClientOptions) client(g *globals) (*runtime.DaemonApprovals, error) {
	e, err := loadEnv(g)
	if err != nil {
		return nil, err
	}
	return runtime.DaemonClient(e.rt(), o.target)
}

func newServePendingCommand(g *globals) *cobra.Command {
	var (
		o      serveClientOptions
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "pending",
		Short: "List the actions waiting for approval in a running daemon",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := o.client(g)
			if err != nil {
				return err
			}
			ps, err := runtime.PendingActions(c.Context(), cl)
			if err != nil {
				return err
			}
			if asJSON {
				return writeConfigJSON(g, map[string]any{"pending": ps})
			}
			writePending(g.stdout, ps)
			if len(ps) == 0 {
				infof(g.stderr, "nothing is waiting for approval")
			}
			return nil
		},
	}
	o.addFlags(c)
	addOutputFlag(c, &asJSON)
	return c
}

// writePending lists pending requests for a person: a line of id, tool,
// risk and expiry, then the summary, the arguments (escaped and cut as in
// the terminal prompt) and the reasons, each on its own line.
func writePending(w io.Writer, ps []runtime.Pending) {
	for _, p := range ps {
		// everything here came over the daemon's socket: escape it all
		fmt.Fprintf(w, "%s  %s  risk=%s  expires %s\n  %s\n", sanitize(p.ID), sanitize(p.Tool), sanitize(p.Risk), p.Expires.Local().Format(time.TimeOnly), sanitize(p.Summary))
		if len(p.Args) > 0 {
			fmt.Fprintf(w, "  args: %s\n", term.PromptArgs(string(p.Args)))
		}
		for _, r := range p.Reasons {
			fmt.Fprintf(w, "  - %s: %s\n", sanitize(r.ID), sanitize(r.Msg))
		}
		if p.Proposal != nil {
			fmt.Fprintf(w, "  grant offered: %s\n  grant scope: %s\n", sanitize(p.Proposal.Description), sanitize(p.Proposal.Scope))
		}
	}
}

func newServeDecideCommand(g *globals, verb string) *cobra.Command {
	var (
		o        serveClientOptions
		approver string
		oldest   bool
		wait     time.Duration
		asGrant  bool
		forConv  bool
	)
	c := &cobra.Command{
		Use:   verb + " (ID | --oldest)",
		Short: map[string]string{"approve": "Approve", "reject": "Reject"}[verb] + " a pending action in a running daemon",
		Long: `Decide a pending action by its id (see 'claw serve pending'). The decision
quotes the digest of the exact action that was listed, so it cannot apply to
a different one; a request that expired or was already decided is refused.
When the request offers a grant ('claw serve pending' shows it in words),
approve --grant accepts it (until it expires) and approve --conversation
accepts it for the request's conversation only.

EXIT STATUS
  0 decided, 1 error (unknown, expired, already decided), 2 usage.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if (len(args) == 1) == oldest {
				return usageErrorf("give either the request id or --oldest")
			}
			d := runtime.PendingDecision{Decision: verb, Grant: asGrant, Conversation: forConv, Approver: approver, Wait: wait}
			if _, err := d.Name(); err != nil {
				return err
			}
			cl, err := o.client(g)
			if err != nil {
				return err
			}
			if !oldest {
				d.ID = args[0]
			}
			res, p, err := runtime.DecidePending(c.Context(), cl, d)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s %s: %s\n", res, p.ID, sanitize(p.Summary))
			return nil
		},
	}
	o.addFlags(c)
	c.Flags().StringVar(&approver, "approver", "", "who decides (default cli:$USER)")
	c.Flags().BoolVar(&oldest, "oldest", false, "decide the oldest pending request")
	c.Flags().DurationVar(&wait, "wait", 0, "wait this long for the request to appear")
	if verb == "approve" {
		c.Flags().BoolVar(&asGrant, "grant", false, "accept the grant the request offers")
		c.Flags().BoolVar(&forConv, "conversation", false, "accept the offered grant for this conversation only")
	}
	return c
}

func newServeCallCommand(g *globals) *cobra.Command {
	var (
		o       serveClientOptions
		noToken bool
		accept  string
		wait    time.Duration
	)
	c := &cobra.Command{
		Use:   "call METHOD PATH [BODY]",
		Short: "Send one request to a running daemon and print the answer",
		Long: `Send one HTTP request to the daemon over its socket, with the bearer token,
and print the response body. Handy for scripts that have no curl. A BODY
of @FILE sends the file's content.

EXIT STATUS
  0 a 2xx answer, 1 any other answer or error, 2 usage.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			e, err := loadEnv(g)
			if err != nil {
				return err
			}
			call := runtime.DaemonCall{Method: args[0], Path: args[1], Accept: accept, NoBody: len(args) < 3, NoToken: noToken, Wait: wait}
			if len(args) == 3 {
				call.Body = args[2]
			}
			code, data, err := call.Call(c.Context(), e.rt(), o.target)
			if err != nil {
				return err
			}
			g.stdout.Write(data)
			if code < 200 || code > 299 {
				return withCode(exitError, fmt.Errorf("the daemon answered %d", code))
			}
			return nil
		},
	}
	o.addFlags(c)
	c.Flags().BoolVar(&noToken, "no-token", false, "send no bearer token")
	c.Flags().StringVar(&accept, "accept", "", "Accept header (text/event-stream to stream /chat)")
	c.Flags().DurationVar(&wait, "wait", 0, "retry this long while the daemon cannot be reached")
	return c
}

func runServe(ctx context.Context, g *globals, o *serveOptions) error {
	e, err := loadEnv(g)
	if err != nil {
		return err
	}
	return runtime.Serve(ctx, runtime.Daemon{
		Env:    e.rt(),
		Setup:  func() runtime.Setup { return agentSetup(g, &o.actionOptions) },
		Socket: o.socket, Listen: o.listen,
		Signer:         func() (*runtime.Signer, error) { return loadReceiptSigner(g, &o.keys) },
		QuietEnv:       func() (*runtime.Env, error) { return daemonEnv(g) },
		GateTestDecide: gateTestDecide,
		Estop: func(ctx context.Context, by string) error { // Discord approvers engage it in their name
			return estopEngage(ctx, g, &o.keys, e.home, by, "engaged from Discord")
		},
		LogTo: g.stderr,
		Warn:  func(format string, args ...any) { warnf(g.stderr, format, args...) },
		Info:  func(format string, args ...any) { infof(g.stderr, format, args...) },
	})
}
